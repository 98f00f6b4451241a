import { describe, expect, it } from 'vitest';
import { Rng } from '../../../src/core/rng.js';
import type { Direction } from '../../../src/envs/directions.js';
import {
  createFrozenLakeCatalog,
  drawLake,
  FrozenLakeEnvironment,
  generateLakeMap,
  lakePath,
  moveOnLake,
  slipOptions,
  successProbability,
} from '../../../src/envs/frozenlake/index.js';
import { fuzzEnvironment } from '../fuzz.js';

// Gymnasium's default 4x4 map.
const GYM_4X4 = ['SFFF', 'FHFH', 'FFFH', 'HFFG'];

describe('FrozenLake maps and dynamics', () => {
  it("draws the map with RAGEN's symbols", () => {
    expect(drawLake(GYM_4X4, [0, 0])).toBe('P___\n_O_O\n___O\nO__G');
    expect(drawLake(GYM_4X4, [1, 1])).toBe('____\n_X_O\n___O\nO__G');
    expect(drawLake(GYM_4X4, [3, 3])).toBe('____\n_O_O\n___O\nO__√');
  });

  it('finds the shortest safe path on the Gymnasium map (6 moves)', () => {
    expect(lakePath(GYM_4X4)).toHaveLength(6);
    expect(lakePath(['SH', 'HG'])).toBeNull();
  });

  it('slips like Gymnasium: intended or perpendicular, never backwards', () => {
    expect(slipOptions('left')).toEqual(['up', 'left', 'down']);
    expect(slipOptions('down')).toEqual(['left', 'down', 'right']);
    expect(slipOptions('right')).toEqual(['down', 'right', 'up']);
    expect(slipOptions('up')).toEqual(['right', 'up', 'left']);
    expect(moveOnLake(4, [0, 0], 'left')).toEqual([0, 0]);
  });

  it('gives the known optimal success of Gymnasium 4x4 slippery (about 0.74 within 100 steps)', () => {
    expect(successProbability(GYM_4X4, false, 100)).toBe(1);
    const p = successProbability(GYM_4X4, true, 100);
    expect(p).toBeGreaterThan(0.7);
    expect(p).toBeLessThan(0.8);
  });

  it('generates maps deterministically with S, G and a path', () => {
    const a = generateLakeMap(8, 0.8, 5);
    expect(generateLakeMap(8, 0.8, 5)).toEqual(a);
    expect(a[0]?.[0]).toBe('S');
    expect(a[7]?.[7]).toBe('G');
    expect(lakePath(a)).not.toBeNull();
  });
});

describe('FrozenLakeEnvironment', () => {
  it('solves every test item (4x4 and 8x8) by following the BFS path when not slippery', () => {
    for (const size of [4, 8]) {
      const settings = { size };
      const env = new FrozenLakeEnvironment({ settings });
      for (const index of createFrozenLakeCatalog({ settings }).indices('test')) {
        env.reset(index);
        const path = lakePath(env.currentMap() ?? []) as Direction[];
        expect(path).not.toBeNull();
        let last = null;
        for (const move of path) last = env.step(`Action: ${move}`);
        expect(last).toMatchObject({ reward: 1, done: true, success: true });
      }
    }
  });

  it('gives every slippery 4x4 test item a positive optimal success probability', () => {
    const env = new FrozenLakeEnvironment({ settings: { slippery: true } });
    for (const index of createFrozenLakeCatalog().indices('test')) {
      env.reset(index);
      expect(successProbability(env.currentMap() ?? [], true, 100)).toBeGreaterThan(0);
    }
  });

  it('ends the episode with reward 0 on falling into a hole', () => {
    // Find a test map with a hole right of or below the start.
    const env = new FrozenLakeEnvironment();
    for (let index = 0; index < 200; index++) {
      env.reset(index);
      const map = env.currentMap() ?? [];
      const move = map[0]?.[1] === 'H' ? 'right' : map[1]?.[0] === 'H' ? 'down' : null;
      if (move === null) continue;
      const result = env.step(move);
      expect(result).toMatchObject({ reward: 0, done: true, success: false });
      expect(result.info?.hole).toBe(true);
      expect(result.observation.text).toContain('You fell into a hole.');
      expect(result.observation.text).toContain('X');
      return;
    }
    throw new Error('no test map with a hole next to the start');
  });

  it('slips about 1/3 straight and 1/3 to each side, reproducibly', () => {
    const counts = { straight: 0, side: 0 };
    const moves: string[] = [];
    const env = new FrozenLakeEnvironment({ settings: { slippery: true, frozenProbability: 1, size: 12 } });
    for (let e = 0; e < 300; e++) {
      env.reset(e);
      const r = env.step('down');
      moves.push(String(r.info?.moved));
      if (r.info?.moved === 'down') counts.straight++;
      else counts.side++;
      expect(['left', 'down', 'right']).toContain(r.info?.moved);
    }
    expect(counts.straight / 300).toBeGreaterThan(0.25);
    expect(counts.straight / 300).toBeLessThan(0.42);
    const again = new FrozenLakeEnvironment({ settings: { slippery: true, frozenProbability: 1, size: 12 } });
    const replay: string[] = [];
    for (let e = 0; e < 300; e++) {
      again.reset(e);
      replay.push(String(again.step('down').info?.moved));
    }
    expect(replay).toEqual(moves);
  });

  it('says when a move hits the edge and when the ice slipped', () => {
    const env = new FrozenLakeEnvironment({ settings: { frozenProbability: 1 } });
    env.reset(0);
    expect(env.step('up').observation.text).toContain('You cannot move up: that is the edge of the lake.');
    const slippery = new FrozenLakeEnvironment({ settings: { slippery: true, frozenProbability: 1, size: 8 } });
    const rng = Rng.fromSeed(3);
    let sawSlip = false;
    for (let i = 0; i < 20 && !sawSlip; i++) {
      slippery.reset(i);
      const r = slippery.step(rng.pick(['down', 'right']));
      if (r.info?.slipped === true) {
        sawSlip = true;
        expect(r.observation.text).toMatch(/You tried to move (down|right)(,| but) slipped/);
      }
    }
    expect(sawSlip).toBe(true);
  });

  it('names bad settings', () => {
    expect(() => new FrozenLakeEnvironment({ settings: { size: 1 } })).toThrow(/env\.settings\.size/);
    expect(() => new FrozenLakeEnvironment({ settings: { slippery: 'yes' } })).toThrow(/env\.settings\.slippery/);
  });

  it('has 200 test seeds and disjoint train seeds', () => {
    const c = createFrozenLakeCatalog();
    expect(c.indices('test')).toHaveLength(200);
    expect(c.indices('train')[0]).toBe(1000);
  });

  it('never throws on random or malformed replies (parser fuzz)', () => {
    fuzzEnvironment(new FrozenLakeEnvironment({ settings: { slippery: true } }), 2);
  });
});
