/**
 * Default horizon (maximum agent turns) of each BabyAI level. AgentGym-RL gives every BabyAI
 * episode 20 turns, but text actions only reach what the agent can see, so some levels (big
 * rooms, many rooms, locked doors, objects to move) need more on some seeds. A level's horizon is
 * AgentGym's 20, or for those levels the smallest multiple of 10 within which the BabyAI bot
 * (`bot/bot.ts`) solves every one of its 1000 test seeds on turnwise's generator (`npm run bench --
 * babyai-bot 1000`, measured when this table was set; test/envs/babyai/bot.test.ts rechecks a sample).
 *
 * How it meets the run's horizon: the run's horizon schedule (`horizon` in the config) decides
 * when an episode is truncated, for every level alike, and still caps. A level horizon is what a
 * run needs to give that level's test items a fair chance: with `horizon.schedule: fixed,
 * horizon: 20` a KeyCorridorS6R3 item that needs 33 turns is truncated; `catalog.horizon(index)`
 * tells evaluations and schedules what each item needs.
 */

/** AgentGym-RL's BabyAI horizon (its `max_rounds`), the default of every level. */
export const AGENTGYM_BABYAI_HORIZON = 20;

/** Levels that need more than {@link AGENTGYM_BABYAI_HORIZON} turns on some test seed (bot maximum over seeds 0..999 in brackets). */
export const LONG_LEVEL_HORIZONS: Readonly<Record<string, number>> = {
  GoToObjMazeS7: 30, // [29]
  GoToImpUnlock: 40, // [35]
  Open: 30, // [21]
  Pickup: 30, // [27]
  UnblockPickup: 40, // [40]
  Unlock: 40, // [31]
  UnlockPickupDist: 30, // [21]
  UnlockToUnlock: 30, // [21]
  FindObjS7: 40, // [36]
  KeyCorridorS6R3: 40, // [33]
  OneRoomS20: 30, // [28]
  MoveTwoAcrossS8N9: 30, // [29]
  SynthS5R2: 60, // [52]
  SynthLoc: 40, // [37]
  SynthSeq: 80, // [72]
  MiniBossLevel: 40, // [35]
  BossLevel: 90, // [83]
  BossLevelNoUnlock: 70, // [61]
};

/**
 * Default horizon of a level by short name.
 * @example levelHorizon('GoToRedBall') // 20
 */
export function levelHorizon(name: string): number {
  return LONG_LEVEL_HORIZONS[name] ?? AGENTGYM_BABYAI_HORIZON;
}
