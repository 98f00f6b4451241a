import { describe, expect, it } from 'vitest';
import { BabyAIBot } from '../../../src/envs/babyai/bot/bot.js';
import { playBot } from '../../../src/envs/babyai/bot/play.js';
import { createBabyAICatalog } from '../../../src/envs/babyai/catalog.js';
import { BabyAIEnvironment } from '../../../src/envs/babyai/env.js';
import { LoopGuard } from '../../../src/envs/babyai/bot/guard.js';
import { AGENTGYM_BABYAI_HORIZON } from '../../../src/envs/babyai/levels/horizons.js';
import { BABYAI_LEVELS, levelIndexOf } from '../../../src/envs/babyai/levels/index.js';
import { generateLevel } from '../../../src/envs/babyai/levels/level.js';
import { RoomLayout } from '../../../src/envs/babyai/room-layout.js';

/** Test seeds 0..SEEDS-1 of every level: 40 x 10 = 400 episodes (a few seconds; the bench runs 200 seeds). */
const SEEDS = 10;
/** Items the bot once looped on (boxed in by objects; chasing a key behind its own door): (level, seed). SynthS5R2 89 (seconds of search) is in the bench. */
const REGRESSIONS: readonly [string, number][] = [
  ['SynthS5R2', 79],
  ['SynthS5R2', 122],
  ['BossLevel', 81],
  ['BossLevel', 191],
  // A put-next target behind a locked door: the bot fetched the object, dropped it to fetch the key, and so on.
  ...[225, 548, 660, 674, 817, 966].map((seed) => ['MiniBossLevel', seed] as [string, number]),
  ...[245, 286, 329, 401, 601, 853, 948, 973].map((seed) => ['BossLevel', seed] as [string, number]),
  // Boxed in while carrying: no reachable cell was out of the way, so the carried ball was never put down.
  ['SynthS5R2', 375],
];
/** Far above every level horizon: a loop shows as a failure, not a hang. */
const MAX_TURNS = 150;

/**
 * The bot's guarantees and the horizon table were measured on turnwise's generator, which leaves
 * out the seeds no policy can win; the seeds below are worlds of that generator. Minigrid's worlds
 * (the default) are checked at the end of this file.
 */
const TURNWISE = { settings: { generator: 'turnwise' } } as const;
const turnwiseEnv = () => new BabyAIEnvironment(TURNWISE);

const env = turnwiseEnv();
const bot = new BabyAIBot();
const sampled = BABYAI_LEVELS.flatMap((level, li) => Array.from({ length: SEEDS }, (_, seed) => ({ level, seed, ...playBot(env, li + 40 * seed, MAX_TURNS, bot) })));

describe('BabyAI bot (true state, text actions only), on turnwise\'s generator', () => {
  it.each(BABYAI_LEVELS.map((l) => [l.name, l.horizon] as const))('solves the first 10 test seeds of %s within its horizon of %i turns', (name, horizon) => {
    const episodes = sampled.filter((e) => e.level.name === name);
    expect(episodes).toHaveLength(SEEDS);
    const missed = episodes.filter((e) => !e.success || e.turns > horizon).map((e) => ({ seed: e.seed, success: e.success, turns: e.turns }));
    expect(missed).toEqual([]);
  });

  it.each(REGRESSIONS)('solves %s seed %i within the level horizon (once a loop)', (name, seed) => {
    const level = BABYAI_LEVELS[levelIndexOf(name)];
    const e = playBot(turnwiseEnv(), levelIndexOf(name) + 40 * seed, MAX_TURNS);
    expect(e.success).toBe(true);
    expect(e.turns).toBeLessThanOrEqual(level?.horizon ?? 0);
  });

  it('hands over to the search when boxed in by objects (SynthS5R2 seed 79), and the search plan wins', () => {
    const own = new BabyAIBot();
    const e = playBot(turnwiseEnv(), levelIndexOf('SynthS5R2') + 40 * 79, MAX_TURNS, own);
    expect(own.searches).toBeGreaterThan(0);
    expect(e).toMatchObject({ success: true });
  });

  it('escalates to a bigger whole-instruction search when the small ones find nothing (MiniBossLevel seed 966, 9 turns optimal)', () => {
    // No heuristic at all: the 3,000-state searches fall short (the optimum needs ~3,900 states), the 20,000-state one wins.
    const guard = new LoopGuard(() => null);
    const own = turnwiseEnv();
    own.reset(levelIndexOf('MiniBossLevel') + 40 * 966);
    let result: { readonly done: boolean; readonly success?: boolean } = { done: false };
    let turns = 0;
    while (!result.done && turns < MAX_TURNS) {
      const view = own.trueState();
      if (view === null) break;
      result = own.step(guard.choose(view) ?? 'turn left');
      turns++;
    }
    expect({ success: result.success, turns, searches: guard.searches }).toEqual({ success: true, turns: 9, searches: 2 });
  });

  it('is deterministic: same item, same turns', () => {
    const again = playBot(turnwiseEnv(), levelIndexOf('BossLevel') + 40 * 3, MAX_TURNS);
    const first = sampled.find((e) => e.level.name === 'BossLevel' && e.seed === 3);
    expect(again).toEqual({ success: first?.success, turns: first?.turns, primitiveSteps: first?.primitiveSteps });
  });

  it('needs no more than 20 turns on the sampled items of every level whose horizon is 20', () => {
    const slow = sampled.filter((e) => e.level.horizon === AGENTGYM_BABYAI_HORIZON && e.turns > AGENTGYM_BABYAI_HORIZON);
    expect(slow).toEqual([]);
  });
});

describe('BabyAI level horizons', () => {
  it('gives every level at least AgentGym-RL\'s 20 turns and the long ones more', () => {
    expect(BABYAI_LEVELS.every((l) => l.horizon >= 20 && l.horizon % 10 === 0)).toBe(true);
    expect(BABYAI_LEVELS[levelIndexOf('GoToRedBall')]?.horizon).toBe(20);
    expect(BABYAI_LEVELS[levelIndexOf('KeyCorridorS6R3')]?.horizon).toBe(40);
  });

  it('is exposed per task by the catalog', () => {
    const catalog = createBabyAICatalog();
    expect(catalog.horizon(levelIndexOf('OneRoomS20') + 40 * 7)).toBe(30);
    expect(catalog.horizon(1)).toBe(20);
    expect(catalog.horizon(-1)).toBeUndefined();
  });
});

describe('PickupDistDebug generation', () => {
  const spec = BABYAI_LEVELS[levelIndexOf('PickupDistDebug')];
  it.each([17, 179])('regenerates seed %i, whose every target was walled in by other objects, and the new world is won', (seed) => {
    if (spec === undefined) throw new Error('no PickupDistDebug');
    expect(generateLevel(spec.generator, spec.name, seed, 'turnwise').rejections).toBeGreaterThan(0);
    expect(playBot(turnwiseEnv(), levelIndexOf('PickupDistDebug') + 40 * seed, MAX_TURNS)).toMatchObject({ success: true });
  });

  it('keeps the world of a seed whose target was reachable', () => {
    if (spec === undefined) throw new Error('no PickupDistDebug');
    expect(generateLevel(spec.generator, spec.name, 16, 'turnwise').rejections).toBe(0);
  });
});

describe('Agent placement in a room with no cell facing floor or a wall', () => {
  const spec = BABYAI_LEVELS[levelIndexOf('SynthS5R2')];
  // Seed 805: every free cell of the agent's room faces objects on all four sides; MiniGrid (and we, before) re-drew for ever.
  it.each([805, 825])('rejects the attempt and regenerates SynthS5R2 seed %i (it used to hang), and the new world is won', (seed) => {
    if (spec === undefined) throw new Error('no SynthS5R2');
    expect(generateLevel(spec.generator, spec.name, seed, 'turnwise').rejections).toBeGreaterThan(0);
    expect(playBot(turnwiseEnv(), levelIndexOf('SynthS5R2') + 40 * seed, MAX_TURNS)).toMatchObject({ success: true });
  });

  it('keeps the worlds of the neighbouring seeds', () => {
    if (spec === undefined) throw new Error('no SynthS5R2');
    expect([804, 806].map((seed) => generateLevel(spec.generator, spec.name, seed, 'turnwise').rejections)).toEqual([0, 0]);
  });
});

describe('BabyAI bot on Minigrid\'s worlds (the default generator, the same as AgentGym\'s)', () => {
  const exact = new BabyAIEnvironment();
  const played = BABYAI_LEVELS.flatMap((level, li) =>
    Array.from({ length: SEEDS }, (_, seed) => {
      const index = li + 40 * seed;
      exact.reset(index);
      const view = exact.trueState();
      if (view === null) throw new Error('no episode');
      // What makes a seed unwinnable, read off the start state before the bot plays.
      const { world } = view;
      const lockedRooms = world.layout?.rooms.flat().filter((room) => room.locked) ?? [];
      // Locked in: every key that opens a locked room lies inside that room.
      const keys = world.grid.cells.flatMap((cell, k) => (cell !== null && cell.type === 'key' ? [{ color: cell.color, x: k % world.grid.width, y: Math.floor(k / world.grid.width) }] : []));
      const keyLockedIn = lockedRooms.some((room) =>
        room.doors.some((d) => d !== null && d !== true && d.isLocked && keys.filter((key) => key.color === d.color).every((key) => RoomLayout.inside(room, key.x, key.y))),
      );
      const twoDoors = view.instruction.kind === 'before' || view.instruction.kind === 'after';
      return { level, seed, keyLockedIn, twoDoors, ...playBot(exact, index, MAX_TURNS, bot) };
    }),
  );

  it('solves every sampled seed within its level horizon, except those Minigrid makes unwinnable', () => {
    const missed = played.filter((e) => !e.success || e.turns > e.level.horizon).map((e) => `${e.level.name} ${e.seed}`);
    const unwinnable = played.filter((e) => (e.level.name === 'GoToImpUnlock' && e.keyLockedIn) || (e.level.name === 'OpenDoorsOrderN4Debug' && e.twoDoors)).map((e) => `${e.level.name} ${e.seed}`);
    expect(missed).toEqual(unwinnable);
    // The sample does hold such seeds (so the exceptions above are exercised).
    expect(unwinnable.length).toBeGreaterThan(0);
  });

  it('cannot win an OpenDoorsOrderN4Debug two-door order: opening the first door fails the strict second part on the same step (Minigrid\'s rule)', () => {
    const twoDoor = played.filter((e) => e.level.name === 'OpenDoorsOrderN4Debug' && e.twoDoors);
    expect(twoDoor.length).toBeGreaterThan(0);
    expect(twoDoor.every((e) => !e.success)).toBe(true);
  });

  it('cannot win GoToImpUnlock when Minigrid put every key of the locked door\'s colour inside the locked room (its `is` comparison never rejects that room)', () => {
    const locked = played.filter((e) => e.level.name === 'GoToImpUnlock' && e.keyLockedIn);
    expect(locked.length).toBeGreaterThan(0);
    expect(locked.every((e) => !e.success)).toBe(true);
  });
});
