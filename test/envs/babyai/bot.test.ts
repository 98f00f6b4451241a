import { describe, expect, it } from 'vitest';
import { BabyAIBot } from '../../../src/envs/babyai/bot/bot.js';
import { findRoute } from '../../../src/envs/babyai/bot/obstacles.js';
import { playBot } from '../../../src/envs/babyai/bot/play.js';
import { BabyAIEnvironment } from '../../../src/envs/babyai/env.js';
import { BABYAI_LEVELS, levelIndexOf } from '../../../src/envs/babyai/levels/index.js';

/** Test seeds 0..SEEDS-1 of every level: 40 x 25 = 1000 episodes (a few seconds). */
const SEEDS = 25;
/** AgentGym-RL's BabyAI horizon. */
const HORIZON = 20;
/** A generous turn cap: long enough for every level's bot plan, short enough to catch loops. */
const MAX_TURNS = 64;

/** Test items no policy can win (checked below): (level, seed). */
const UNWINNABLE: Record<string, number[]> = { PickupDistDebug: [17] };

const env = new BabyAIEnvironment();
const bot = new BabyAIBot();
const runs = BABYAI_LEVELS.map((level, li) => ({
  level,
  episodes: Array.from({ length: SEEDS }, (_, seed) => ({ seed, ...playBot(env, li + 40 * seed, MAX_TURNS, bot) })),
}));

describe('BabyAI bot (true state, text actions only)', () => {
  it.each(runs.map((r) => [r.level.name, r] as const))('solves every one of the first 25 test seeds of %s', (name, run) => {
    const failed = run.episodes.filter((e) => !e.success).map((e) => e.seed);
    expect(failed).toEqual(UNWINNABLE[name] ?? []);
  });

  it('solves at least 96% of all 1000 items within the horizon of 20 turns', () => {
    // Measured: 971 / 1000. Levels with big rooms or many rooms (OneRoomS20, KeyCorridor, Boss*)
    // need more than 20 turns on some seeds: text actions only reach what the agent can see.
    const within = runs.flatMap((r) => r.episodes).filter((e) => e.success && e.turns <= HORIZON).length;
    expect(within).toBeGreaterThanOrEqual(960);
  });

  it('solves every tested item of the single-room and GoTo-family levels within 20 turns', () => {
    const strict = BABYAI_LEVELS.filter((l) => !LONG_LEVELS.has(l.name)).map((l) => l.name);
    for (const run of runs) {
      if (!strict.includes(run.level.name)) continue;
      const slow = run.episodes.filter((e) => e.success && e.turns > HORIZON).map((e) => e.seed);
      expect({ level: run.level.name, slow }).toEqual({ level: run.level.name, slow: [] });
    }
  });

  it('is deterministic: same item, same turns', () => {
    const again = playBot(new BabyAIEnvironment(), levelIndexOf('BossLevel') + 40 * 3, MAX_TURNS);
    const first = runs[levelIndexOf('BossLevel')]?.episodes[3];
    expect(again).toEqual({ success: first?.success, turns: first?.turns, primitiveSteps: first?.primitiveSteps });
  });

  it('PickupDistDebug seed 17 cannot be won: the target is walled in by objects, and picking any other fails the debug level', () => {
    const e = new BabyAIEnvironment();
    e.reset(levelIndexOf('PickupDistDebug') + 40 * 17);
    const view = e.trueState();
    if (view === null) throw new Error('no episode');
    const goal = new BabyAIBot().goalOf(view.world, view.instruction.pending()[0] as never);
    const route = findRoute(view.world, goal.targets);
    expect(route?.obstacle?.obj.type).toMatch(/^(ball|box|key)$/);
  });
});

/** Levels where some tested item needs more than 20 turns (see the bot benchmark for the table). */
const LONG_LEVELS = new Set(['GoToImpUnlock', 'UnblockPickup', 'FindObjS7', 'KeyCorridorS6R3', 'OneRoomS20', 'SynthS5R2', 'SynthLoc', 'SynthSeq', 'MiniBossLevel', 'BossLevel', 'BossLevelNoUnlock']);
