/**
 * The 40 BabyAI levels in AgentGym's exact order (`agentenv_babyai/environment.py`,
 * `all_levels`): task index `i` plays level `BABYAI_LEVELS[i % 40]` with seed `floor(i / 40)`.
 * Levels without a generator are listed so that indices keep their meaning; resetting one fails
 * with an error naming it.
 */
import { goToDoor, goToLocal, goToObj, goToRedBall, goToRedBallGrey, goToRedBallNoDists, goToRedBlueBall } from './goto.js';
import type { LevelCategory, LevelGenerator, LevelSpec } from './level.js';
import { openRedDoor } from './open.js';
import { pickupDist } from './pickup.js';

function level(gymId: string, category: LevelCategory, generator?: LevelGenerator): LevelSpec {
  const name = gymId.replace(/^BabyAI-/, '').replace(/-v\d+$/, '');
  return generator === undefined ? { name, gymId, category } : { name, gymId, category, generator };
}

/**
 * All 40 levels, AgentGym order (AgentGym numbers them 1..40; this array is 0-based).
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
  level('BabyAI-GoToObjMazeS7-v0', 'GoTo'),
  level('BabyAI-GoToImpUnlock-v0', 'GoTo'),
  level('BabyAI-GoToSeqS5R2-v0', 'GoTo'),
  level('BabyAI-GoToRedBlueBall-v0', 'GoTo', goToRedBlueBall),
  level('BabyAI-GoToDoor-v0', 'GoTo', goToDoor),
  level('BabyAI-GoToObjDoor-v0', 'GoTo'),
  level('BabyAI-Open-v0', 'Open'),
  level('BabyAI-OpenRedDoor-v0', 'Open', openRedDoor),
  level('BabyAI-OpenDoorLoc-v0', 'Open'),
  level('BabyAI-OpenRedBlueDoorsDebug-v0', 'Open'),
  level('BabyAI-OpenDoorsOrderN4Debug-v0', 'Open'),
  level('BabyAI-Pickup-v0', 'Pickup'),
  level('BabyAI-UnblockPickup-v0', 'Pickup'),
  level('BabyAI-PickupLoc-v0', 'Pickup'),
  level('BabyAI-PickupDistDebug-v0', 'Pickup', pickupDist(true)),
  level('BabyAI-PickupAbove-v0', 'Pickup'),
  level('BabyAI-PutNextLocalS6N4-v0', 'PutNext'),
  level('BabyAI-PutNextS7N4Carrying-v0', 'PutNext'),
  level('BabyAI-Unlock-v0', 'Unlock'),
  level('BabyAI-UnlockLocalDist-v0', 'Unlock'),
  level('BabyAI-KeyInBox-v0', 'Unlock'),
  level('BabyAI-UnlockPickupDist-v0', 'Unlock'),
  level('BabyAI-BlockedUnlockPickup-v0', 'Unlock'),
  level('BabyAI-UnlockToUnlock-v0', 'Unlock'),
  level('BabyAI-ActionObjDoor-v0', 'Synth'),
  level('BabyAI-FindObjS7-v0', 'Find'),
  level('BabyAI-KeyCorridorS6R3-v0', 'Find'),
  level('BabyAI-OneRoomS20-v0', 'Find'),
  level('BabyAI-MoveTwoAcrossS8N9-v0', 'PutNext'),
  level('BabyAI-SynthS5R2-v0', 'Synth'),
  level('BabyAI-SynthLoc-v0', 'Synth'),
  level('BabyAI-SynthSeq-v0', 'Synth'),
  level('BabyAI-MiniBossLevel-v0', 'Synth'),
  level('BabyAI-BossLevel-v0', 'Synth'),
  level('BabyAI-BossLevelNoUnlock-v0', 'Synth'),
];

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
 * Short names of the levels that can be played.
 * @example implementedLevelNames().includes('GoToRedBall') // true
 */
export function implementedLevelNames(): string[] {
  return BABYAI_LEVELS.filter((l) => l.generator !== undefined).map((l) => l.name);
}
