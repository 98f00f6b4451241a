/**
 * The 40 BabyAI levels in AgentGym's exact order (`agentenv_babyai/environment.py`,
 * `all_levels`): task index `i` plays level `BABYAI_LEVELS[i % 40]` with seed `floor(i / 40)`.
 * Every level has its generator.
 */
import type { LevelCategory, LevelGenerator, LevelSpec } from './level.js';
import { goToDoor, goToImpUnlock, goToLocal, goToMaze, goToObj, goToObjDoor, goToRedBall, goToRedBallGrey, goToRedBallNoDists, goToRedBlueBall, goToSeq } from './goto.js';
import { levelHorizon } from './horizons.js';
import { levelGen } from './levelgen.js';
import { open, openDoorLoc, openDoorsOrder, openRedBlueDoorsDebug, openRedDoor } from './open.js';
import { actionObjDoor, findObj, keyCorridor, oneRoom } from './other.js';
import { pickup, pickupAbove, pickupDist, pickupLoc, unblockPickup } from './pickup.js';
import { moveTwoAcross, putNext, putNextLocal } from './putnext.js';
import { blockedUnlockPickup, keyInBox, unlock, unlockLocal, unlockPickup, unlockToUnlock } from './unlock.js';

function level(gymId: string, category: LevelCategory, generator: LevelGenerator): LevelSpec {
  const name = gymId.replace(/^BabyAI-/, '').replace(/-v\d+$/, '');
  return { name, gymId, category, generator, horizon: levelHorizon(name) };
}

/**
 * All 40 levels, AgentGym order (AgentGym numbers them 1..40; this array is 0-based).
 *
 * Categories: AgentGym-RL reports BabyAI under GoTo, Pickup, AOD, Find, Room and SLoc but never
 * published which level falls where (its per-category files are not released). We read the names
 * as level-name stems: GoTo = the eleven `GoTo*` levels, Pickup = the `pickup.py` levels, AOD =
 * ActionObjDoor, Find = FindObjS7, Room = OneRoomS20, SLoc = SynthLoc. The remaining levels keep
 * their BabyAI family (Open, PutNext, Unlock, Synth). This mapping is ours.
 *
 * Note: `GoToObjS6-v0` is built as a 6x6 room (what its name says; MiniGrid later renamed the
 * fixed entry `GoToObjS6-v1` because v0 was registered with room size 4 by mistake).
 * @example BABYAI_LEVELS[0].gymId // 'BabyAI-GoToRedBallGrey-v0'
 */
export const BABYAI_LEVELS: readonly LevelSpec[] = [
  level('BabyAI-GoToRedBallGrey-v0', 'GoTo', goToRedBallGrey),
  level('BabyAI-GoToRedBall-v0', 'GoTo', goToRedBall),
  level('BabyAI-GoToRedBallNoDists-v0', 'GoTo', goToRedBallNoDists),
  level('BabyAI-GoToObjS6-v0', 'GoTo', goToObj(6)),
  level('BabyAI-GoToLocalS8N7-v0', 'GoTo', goToLocal(8, 7)),
  level('BabyAI-GoToObjMazeS7-v0', 'GoTo', goToMaze(7, 1)),
  level('BabyAI-GoToImpUnlock-v0', 'GoTo', goToImpUnlock),
  level('BabyAI-GoToSeqS5R2-v0', 'GoTo', goToSeq),
  level('BabyAI-GoToRedBlueBall-v0', 'GoTo', goToRedBlueBall),
  level('BabyAI-GoToDoor-v0', 'GoTo', goToDoor),
  level('BabyAI-GoToObjDoor-v0', 'GoTo', goToObjDoor),
  level('BabyAI-Open-v0', 'Open', open),
  level('BabyAI-OpenRedDoor-v0', 'Open', openRedDoor),
  level('BabyAI-OpenDoorLoc-v0', 'Open', openDoorLoc),
  level('BabyAI-OpenRedBlueDoorsDebug-v0', 'Open', openRedBlueDoorsDebug),
  level('BabyAI-OpenDoorsOrderN4Debug-v0', 'Open', openDoorsOrder(4, true)),
  level('BabyAI-Pickup-v0', 'Pickup', pickup),
  level('BabyAI-UnblockPickup-v0', 'Pickup', unblockPickup),
  level('BabyAI-PickupLoc-v0', 'Pickup', pickupLoc),
  level('BabyAI-PickupDistDebug-v0', 'Pickup', pickupDist(true)),
  level('BabyAI-PickupAbove-v0', 'Pickup', pickupAbove),
  level('BabyAI-PutNextLocalS6N4-v0', 'PutNext', putNextLocal(6, 4)),
  level('BabyAI-PutNextS7N4Carrying-v0', 'PutNext', putNext(7, 4, true)),
  level('BabyAI-Unlock-v0', 'Unlock', unlock),
  level('BabyAI-UnlockLocalDist-v0', 'Unlock', unlockLocal(true)),
  level('BabyAI-KeyInBox-v0', 'Unlock', keyInBox),
  level('BabyAI-UnlockPickupDist-v0', 'Unlock', unlockPickup(true)),
  level('BabyAI-BlockedUnlockPickup-v0', 'Unlock', blockedUnlockPickup),
  level('BabyAI-UnlockToUnlock-v0', 'Unlock', unlockToUnlock),
  level('BabyAI-ActionObjDoor-v0', 'AOD', actionObjDoor),
  level('BabyAI-FindObjS7-v0', 'Find', findObj(7)),
  level('BabyAI-KeyCorridorS6R3-v0', 'Unlock', keyCorridor(6, 3)),
  level('BabyAI-OneRoomS20-v0', 'Room', oneRoom(20)),
  level('BabyAI-MoveTwoAcrossS8N9-v0', 'PutNext', moveTwoAcross(8, 9)),
  level('BabyAI-SynthS5R2-v0', 'Synth', levelGen({ roomSize: 5, numRows: 2, numDists: 18, instrKinds: ['action'], locations: false, unblocking: true, implicitUnlock: false })),
  level('BabyAI-SynthLoc-v0', 'SLoc', levelGen({ instrKinds: ['action'], locations: true, unblocking: true, implicitUnlock: false })),
  level('BabyAI-SynthSeq-v0', 'Synth', levelGen({ locations: true, unblocking: true, implicitUnlock: false })),
  level('BabyAI-MiniBossLevel-v0', 'Synth', levelGen({ numCols: 2, numRows: 2, roomSize: 5, numDists: 7, lockedRoomProb: 0.25 })),
  level('BabyAI-BossLevel-v0', 'Synth', levelGen()),
  level('BabyAI-BossLevelNoUnlock-v0', 'Synth', levelGen({ lockedRoomProb: 0, implicitUnlock: false })),
];

/** The categories AgentGym-RL reports BabyAI results under (see {@link BABYAI_LEVELS} for our mapping). */
export const AGENTGYM_RL_CATEGORIES = ['GoTo', 'Pickup', 'AOD', 'Find', 'Room', 'SLoc'] as const;

/** Number of levels in the list (the period of task indices). */
export const NUM_BABYAI_LEVELS = 40;

/**
 * 0-based position of a level given by short name (`GoToRedBall`) or gym id (`BabyAI-GoToRedBall-v0`); -1 if unknown.
 * @example levelIndexOf('GoToRedBall') // 1
 */
export function levelIndexOf(name: string): number {
  return BABYAI_LEVELS.findIndex((l) => l.name === name || l.gymId === name);
}

/**
 * Short names of the levels that can be played (all 40).
 * @example implementedLevelNames().includes('GoToRedBall') // true
 */
export function implementedLevelNames(): string[] {
  return BABYAI_LEVELS.map((l) => l.name);
}
