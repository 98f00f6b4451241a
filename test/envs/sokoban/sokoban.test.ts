import { describe, expect, it } from 'vitest';
import {
  applyMove,
  createSokobanCatalog,
  drawRoom,
  generateRoom,
  isSolved,
  parseRoom,
  roomSpec,
  SokobanEnvironment,
  sokobanSettings,
  solveSokoban,
} from '../../../src/envs/sokoban/index.js';
import { fuzzEnvironment } from '../fuzz.js';

const ROOM = ['######', '#P___#', '#_X__#', '#___O#', '######'];

describe('Sokoban push rules', () => {
  it('walks onto floor and pushes one box into free floor', () => {
    const s = parseRoom(ROOM);
    const a = applyMove(s, 'right');
    expect(a.outcome).toBe('moved');
    const b = applyMove(a.state, 'down');
    expect(b.outcome).toBe('pushed');
    expect(drawRoom(b.state)).toBe(['######', '#____#', '#_P__#', '#_X_O#', '######'].join('\n'));
  });

  it('refuses to push a box into a wall or into another box, and does not move', () => {
    const s = parseRoom(['######', '#_PX_#', '#__X_#', '#OO__#', '######']);
    const intoBox = applyMove(parseRoom(['######', '#__P_#', '#__X_#', '#OOX_#', '######']), 'down');
    expect(intoBox.outcome).toBe('box-blocked');
    const toWall = applyMove(parseRoom(['#####', '#PX#', '#OO_#', '#_X_#', '#####'].map((l) => l.padEnd(5, '#'))), 'right');
    expect(toWall.outcome).toBe('box-blocked');
    expect(toWall.state.player).toBe(parseRoom(['#####', '#PX##', '#OO_#', '#_X_#', '#####']).player);
    expect(applyMove(s, 'up').outcome).toBe('wall');
  });

  it('draws and reads √ (box on target) and S (player on target)', () => {
    const s = parseRoom(['#####', '#S√X#', '#___#', '#####']);
    expect(s.targets).toHaveLength(2);
    expect(drawRoom(s)).toBe('#####\n#S√X#\n#___#\n#####');
    expect(isSolved(s)).toBe(false);
    expect(isSolved(parseRoom(['#####', '#P√_#', '#####']))).toBe(true);
  });

  it('solves a hand-made room optimally and reports unsolvable ones', () => {
    expect(solveSokoban(parseRoom(['#####', '#PXO#', '#####']))).toEqual(['right']);
    // The box sits in a corner away from the target: a deadlock.
    expect(solveSokoban(parseRoom(['#####', '#X_O#', '#_P_#', '#####']))).toBeNull();
    expect(solveSokoban(parseRoom(ROOM))).toHaveLength(6); // 3 pushes (down, right, right) and 3 walks
    // Against the top wall with no target in that row, the box can never come down.
    expect(solveSokoban(parseRoom(['######', '#P_X_#', '#___O#', '######']))).toBeNull();
  });
});

describe('Sokoban generation', () => {
  it('is deterministic in the seed and never starts solved', () => {
    const spec = roomSpec(sokobanSettings());
    const a = generateRoom(spec, 11);
    expect(drawRoom(generateRoom(spec, 11).state)).toBe(drawRoom(a.state));
    expect(isSolved(a.state)).toBe(false);
    expect(a.state.boxes.some((b) => a.state.targets.includes(b))).toBe(false);
  });

  it('makes every test room of each tested size solvable, and the BFS solution wins through the environment', () => {
    for (const settings of [{}, { width: 5, height: 5 }, { width: 7, height: 7, boxes: 2 }]) {
      const env = new SokobanEnvironment({ settings });
      for (const index of createSokobanCatalog({ settings }).indices('test')) {
        env.reset(index);
        const state = env.currentState();
        if (state === null) throw new Error('no state');
        expect(state.boxes).toHaveLength(sokobanSettings({ settings }).boxes);
        const solution = solveSokoban(state);
        if (solution === null || solution === 'budget') throw new Error(`sokoban_${index} unsolved`);
        expect(solution.length).toBeGreaterThanOrEqual(3);
        let last = null;
        for (const move of solution) last = env.step(move);
        expect(last).toMatchObject({ reward: 1, done: true, success: true });
      }
    }
  });
});

describe('SokobanEnvironment', () => {
  it('shows the room and says what a move did', () => {
    const env = new SokobanEnvironment();
    const first = env.reset(0);
    expect(first.text).toContain('Push the box X onto the target O.');
    expect(first.text).toContain(env.render());
    expect(first.availableActions).toEqual(['up', 'down', 'left', 'right']);
    const texts = ['up', 'down', 'left', 'right'].map((m) => {
      env.reset(0);
      return env.step(`Action: ${m}`).observation.text.split('\n')[0];
    });
    expect(texts.every((t) => /^You (moved|pushed a box|cannot move|cannot push)/.test(t ?? ''))).toBe(true);
  });

  it('ends unsolved after maxSteps moves', () => {
    const env = new SokobanEnvironment({ settings: { maxSteps: 10 } });
    env.reset(1);
    const results = Array.from({ length: 10 }, (_, i) => env.step(i % 2 === 0 ? 'up' : 'down'));
    expect(results.slice(0, 9).some((r) => r.done)).toBe(false);
    expect(results[9]).toMatchObject({ done: true, reward: 0 });
    expect(results[9]?.info?.truncated).toBe(true);
  });

  it('names bad settings', () => {
    expect(() => new SokobanEnvironment({ settings: { boxes: 0 } })).toThrow(/env\.settings\.boxes/);
    expect(() => new SokobanEnvironment({ settings: { width: 4, height: 4, boxes: 3 } })).toThrow(/env\.settings\.boxes/);
  });

  it('never throws on random or malformed replies (parser fuzz)', () => {
    fuzzEnvironment(new SokobanEnvironment(), 4);
  });
});
