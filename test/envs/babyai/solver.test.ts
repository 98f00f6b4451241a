import { describe, expect, it } from 'vitest';
import { playBot } from '../../../src/envs/babyai/bot/play.js';
import { BabyAIEnvironment } from '../../../src/envs/babyai/env.js';
import { Grid } from '../../../src/envs/babyai/grid.js';
import { GoToInstr, ObjDesc } from '../../../src/envs/babyai/instructions.js';
import { levelIndexOf } from '../../../src/envs/babyai/levels/index.js';
import { searchTurns } from '../../../src/envs/babyai/solver/search.js';
import { EpisodeStates } from '../../../src/envs/babyai/solver/snapshot.js';
import { GridWorld } from '../../../src/envs/babyai/world.js';
import { makeObject } from '../../../src/envs/babyai/world-object.js';

/** The seeds below are worlds of turnwise's generator (picked before Minigrid's was ported). */
const TURNWISE = { settings: { generator: 'turnwise' } } as const;

function episode(level: string, seed: number): BabyAIEnvironment {
  const env = new BabyAIEnvironment(TURNWISE);
  env.reset(levelIndexOf(level) + 40 * seed);
  return env;
}

describe('EpisodeStates', () => {
  it('restores world, carried object, door flags and verifier after actions, with the same fingerprint', () => {
    const env = episode('UnlockPickupDist', 0);
    const view = env.trueState();
    if (view === null) throw new Error('no episode');
    const states = new EpisodeStates(view.world, view.instruction);
    const before = env.render();
    const key = states.key();
    const snap = states.save();
    // Pick something up, turn, toggle: change pose, cells and carried object.
    for (let t = 0; t < 6; t++) {
      const actions = env.trueState()?.text.plans;
      const pick = [...(actions?.keys() ?? [])].find((a) => a.startsWith('pickup') || a.startsWith('toggle')) ?? 'turn left';
      env.step(pick);
    }
    expect(env.render()).not.toBe(before);
    expect(states.key()).not.toBe(key);
    states.restore(snap);
    expect(env.render()).toBe(before);
    expect(states.key()).toBe(key);
  });
});

describe('searchTurns (fewest text actions)', () => {
  it('finds the one-turn solution when the target is in view (GoToRedBall seed 1)', () => {
    const env = episode('GoToRedBall', 1);
    const view = env.trueState();
    if (view === null) throw new Error('no episode');
    const found = searchTurns(view.world, view.instruction);
    // `go to red ball 1` and `pickup red ball 1` both face the ball within one turn.
    expect(found.status === 'solved' ? found.actions.length : found.status).toBe(1);
    expect(env.step(found.status === 'solved' ? (found.actions[0] as string) : '').success).toBe(true);
  });

  it.each([
    ['GoToObjMazeS7', 1],
    ['PutNextLocalS6N4', 0],
    ['KeyInBox', 1],
    ['UnlockLocalDist', 2],
    ['SynthS5R2', 3],
  ] as const)('returns a plan for %s seed %i that wins when played, no longer than the bot', (level, seed) => {
    const env = episode(level, seed);
    const view = env.trueState();
    if (view === null) throw new Error('no episode');
    const found = searchTurns(view.world, view.instruction);
    if (found.status !== 'solved') throw new Error(`search ended with ${found.status}`);
    const results = found.actions.map((a) => env.step(a));
    expect(results.at(-1)?.success).toBe(true);
    expect(results.slice(0, -1).every((r) => !r.done && r.info?.invalid === false)).toBe(true);
    const bot = playBot(new BabyAIEnvironment(TURNWISE), levelIndexOf(level) + 40 * seed, 100);
    expect(found.actions.length).toBeLessThanOrEqual(bot.turns);
  });

  it('leaves the episode as it found it', () => {
    const env = episode('Unlock', 1);
    const before = env.render();
    const view = env.trueState();
    if (view === null) throw new Error('no episode');
    searchTurns(view.world, view.instruction, { maxNodes: 200 });
    expect(env.render()).toBe(before);
  });

  it('answers budget when the node budget runs out first', () => {
    const env = episode('UnlockToUnlock', 0);
    const view = env.trueState();
    if (view === null) throw new Error('no episode');
    expect(searchTurns(view.world, view.instruction, { maxNodes: 5 })).toMatchObject({ status: 'budget', nodes: 5 });
  });

  it('answers unsolvable when a wall seals the target off (hand-built 7x3 world)', () => {
    // W W W W W W W
    // W A . W . b W    agent at (1, 1), red ball at (5, 1), wall at x = 3
    // W W W W W W W
    const grid = new Grid(7, 3);
    grid.wallRect(0, 0, 7, 3);
    grid.vertWall(3, 0, 3);
    const ball = makeObject('ball', 'red');
    grid.set(5, 1, ball);
    const world = new GridWorld(grid, null);
    world.agentX = 1;
    world.agentY = 1;
    const instr = new GoToInstr(new ObjDesc('ball', 'red'));
    instr.resetVerifier(world);
    // Reachable states: 2 cells x 4 headings.
    expect(searchTurns(world, instr)).toEqual({ status: 'unsolvable', nodes: 8 });
  });
});
