import { describe, expect, it } from 'vitest';
import { InvalidConfigError } from '../../../src/core/errors.js';
import type { Direction } from '../../../src/envs/directions.js';
import {
  createMazeCatalog,
  DOUBLE_T_GRID,
  DOUBLE_T_STARTS,
  describePosition,
  MazeEnvironment,
  mazeAction,
  mazeSettings,
  mazeTask,
  randomMaze,
  solveMaze,
} from '../../../src/envs/maze/index.js';
import { fuzzEnvironment } from '../fuzz.js';

function play(env: MazeEnvironment, moves: readonly Direction[]) {
  let last = null;
  for (const m of moves) last = env.step(`Thought:\nGo.\n\nAction:\n${mazeAction(m)}`);
  return last;
}

describe('maze layouts', () => {
  it("has LMRL-Gym's double-T maze: 10 x 13, 26 starts, goal (8, 6), 25 open cells", () => {
    expect(DOUBLE_T_GRID).toHaveLength(10);
    expect(DOUBLE_T_GRID.every((row) => row.length === 13)).toBe(true);
    expect(DOUBLE_T_STARTS).toHaveLength(26);
    expect(DOUBLE_T_GRID.join('').split('.').length - 1).toBe(26);
    expect(DOUBLE_T_STARTS[25]).toEqual([8, 6]);
  });

  it('describes walls and coordinates as hand-checked', () => {
    expect(describePosition(DOUBLE_T_GRID, [1, 1], [8, 6])).toBe('You are at row 1, column 1. The goal is at row 8, column 6. Walls: up, down, left.');
    expect(describePosition(DOUBLE_T_GRID, [5, 6], [8, 6])).toBe('You are at row 5, column 6. The goal is at row 8, column 6. Walls: up.');
    expect(describePosition(DOUBLE_T_GRID, [1, 3], [8, 6])).toBe('You are at row 1, column 3. The goal is at row 8, column 6. Walls: up.');
  });

  it('refuses game 25 (it starts on the goal) and games past 25', () => {
    const env = new MazeEnvironment();
    expect(() => env.reset(25)).toThrow(/starts on the goal/);
    expect(() => env.reset(26)).toThrow(/does not exist/);
  });

  it('solves double-T game 0 in 12 moves (right x2, down x4, right x3, down x3)', () => {
    const moves = solveMaze((mazeTask(mazeSettings(), 0) as { ok: true; layout: never }).layout);
    expect(moves).toEqual(['right', 'right', 'down', 'down', 'down', 'down', 'right', 'right', 'right', 'down', 'down', 'down']);
  });

  it('builds random perfect mazes deterministically, with every floor cell reachable', () => {
    const a = randomMaze(7, 3);
    expect(randomMaze(7, 3)).toEqual(a);
    expect(randomMaze(7, 4).grid).not.toEqual(a.grid);
    const floor = a.grid.join('').split('.').length - 1;
    expect(floor).toBe(17); // a perfect maze of 3 x 3 cells: 9 cells joined by 8 passages
    expect(solveMaze({ ...a, start: a.start })).not.toBeNull();
  });

  it("puts start top-left and goal bottom-right with placement 'corners'", () => {
    const layout = randomMaze(5, 8, 'corners');
    expect(layout.start).toEqual([1, 1]);
    expect(layout.goal).toEqual([3, 3]);
    expect(solveMaze(layout)).toHaveLength(4); // a 2 x 2 cell perfect maze always joins opposite corners in 4 moves
  });
});

describe('MazeEnvironment', () => {
  it('moves, bumps into walls without moving, and pays 1 at the goal', () => {
    const env = new MazeEnvironment();
    env.reset(0);
    const bump = env.step('move up');
    expect(bump.info).toMatchObject({ invalid: false, blocked: true });
    expect(bump.observation.text).toContain('You cannot move up: there is a wall. You are at row 1, column 1.');
    const moved = env.step('Action: move right');
    expect(moved.observation.text).toContain('You are at row 1, column 2.');
    const end = play(env, ['right', 'down', 'down', 'down', 'down', 'right', 'right', 'right', 'down', 'down']);
    expect(end?.observation.text).not.toContain('reached the goal');
    const last = env.step('down');
    expect(last).toMatchObject({ reward: 1, done: true, success: true });
  });

  it('accepts bare directions and AgentGym spellings; rejects other text as invalid', () => {
    const env = new MazeEnvironment();
    env.reset(10); // (2, 3)
    expect(env.step('down').info?.invalid).toBe(false);
    expect(env.step('Move Down').info?.invalid).toBe(false);
    const bad = env.step('Action: go to the goal');
    expect(bad.info).toMatchObject({ invalid: true, error: 'unrecognized' });
    expect(bad.observation.text).toContain('is not a move');
  });

  it('ends unsolved after maxSteps moves', () => {
    const env = new MazeEnvironment({ settings: { maxSteps: 3 } });
    env.reset(0);
    env.step('move up');
    env.step('move up');
    const third = env.step('move up');
    expect(third).toMatchObject({ done: true, reward: 0, success: false });
    expect(third.info?.truncated).toBe(true);
  });

  it('solves every test item of both layouts within maxSteps by following the BFS solution', () => {
    for (const settings of [{}, { layout: 'random', size: 5 }, { layout: 'random', size: 5, placement: 'corners' }, { layout: 'random', size: 9 }]) {
      const env = new MazeEnvironment({ settings });
      const catalog = createMazeCatalog({ settings });
      for (const index of catalog.indices('test')) {
        env.reset(index);
        const layout = env.currentLayout();
        const moves = layout === null ? null : solveMaze(layout);
        expect(moves).not.toBeNull();
        expect((moves as Direction[]).length).toBeLessThanOrEqual(mazeSettings({ settings }).maxSteps);
        const last = play(env, moves as Direction[]);
        expect(last).toMatchObject({ reward: 1, done: true, success: true });
      }
    }
  });

  it('has splits: double-T train = test = games 0-24; random test 200 seeds, train disjoint', () => {
    const dt = createMazeCatalog();
    expect(dt.indices('test')).toEqual(Array.from({ length: 25 }, (_, i) => i));
    expect(dt.indices('train')).toEqual(dt.indices('test'));
    const random = createMazeCatalog({ settings: { layout: 'random' } });
    expect(random.indices('test')).toHaveLength(200);
    const test = new Set(random.indices('test'));
    expect(random.indices('train').some((i) => test.has(i))).toBe(false);
  });

  it('names the bad setting', () => {
    expect(() => new MazeEnvironment({ settings: { size: 6, layout: 'random' } })).toThrow(InvalidConfigError);
    expect(() => new MazeEnvironment({ settings: { size: 6 } })).toThrow(/env\.settings\.size/);
    expect(() => new MazeEnvironment({ settings: { colour: 'red' } })).toThrow(/env\.settings/);
  });

  it('never throws on random or malformed replies (parser fuzz)', () => {
    fuzzEnvironment(new MazeEnvironment(), 3);
  });
});
