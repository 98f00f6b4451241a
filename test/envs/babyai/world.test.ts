import { describe, expect, it } from 'vitest';
import { Act } from '../../../src/envs/babyai/constants.js';
import { Grid } from '../../../src/envs/babyai/grid.js';
import { GridWorld } from '../../../src/envs/babyai/world.js';
import { makeDoor, makeObject, WALL } from '../../../src/envs/babyai/world-object.js';

function room(size = 7): GridWorld {
  const grid = new Grid(size, size);
  grid.wallRect(0, 0, size, size);
  const world = new GridWorld(grid, null);
  world.agentX = 3;
  world.agentY = 3;
  world.agentDir = 0;
  return world;
}

describe('GridWorld primitives', () => {
  it('turns left and right through the four headings', () => {
    const w = room();
    w.step(Act.left);
    expect(w.agentDir).toBe(3);
    w.step(Act.right);
    w.step(Act.right);
    expect(w.agentDir).toBe(1);
    expect([w.frontX, w.frontY]).toEqual([3, 4]);
  });

  it('moves forward onto empty cells and not into walls', () => {
    const w = room();
    expect(w.step(Act.forward)).toBe(true);
    expect(w.step(Act.forward)).toBe(true);
    expect(w.agentX).toBe(5);
    expect(w.step(Act.forward)).toBe(false);
    expect(w.agentX).toBe(5);
    expect(w.stepCount).toBe(3);
  });

  it('picks up the object in front, only with empty hands, and drops it on an empty cell', () => {
    const w = room();
    const ball = makeObject('ball', 'red');
    w.grid.set(4, 3, ball);
    expect(w.step(Act.forward)).toBe(false);
    expect(w.step(Act.pickup)).toBe(true);
    expect(w.carrying).toBe(ball);
    expect(w.grid.get(4, 3)).toBeNull();
    w.grid.set(4, 3, makeObject('key', 'blue'));
    expect(w.step(Act.pickup)).toBe(false);
    expect(w.step(Act.drop)).toBe(false);
    w.step(Act.left);
    expect(w.step(Act.drop)).toBe(true);
    expect(w.grid.get(3, 2)).toBe(ball);
    expect(w.carrying).toBeNull();
  });

  it('opens and closes an unlocked door with toggle and walks through it when open', () => {
    const w = room();
    const door = makeDoor('green');
    w.grid.set(4, 3, door);
    expect(w.step(Act.forward)).toBe(false);
    w.step(Act.toggle);
    expect(door.isOpen).toBe(true);
    expect(w.step(Act.forward)).toBe(true);
    expect(w.agentX).toBe(4);
    w.step(Act.left);
    w.step(Act.left);
    w.step(Act.forward);
    w.step(Act.left);
    w.step(Act.left);
    w.step(Act.toggle);
    expect(door.isOpen).toBe(false);
  });

  it('unlocks a locked door only with a key of its colour', () => {
    const w = room();
    const door = makeDoor('yellow', { locked: true });
    w.grid.set(4, 3, door);
    expect(w.step(Act.toggle)).toBe(false);
    w.carrying = makeObject('key', 'red');
    expect(w.step(Act.toggle)).toBe(false);
    w.carrying = makeObject('key', 'yellow');
    expect(w.step(Act.toggle)).toBe(true);
    expect(door).toMatchObject({ isLocked: false, isOpen: true });
  });

  it('toggling a box reveals its contents', () => {
    const w = room();
    const box = makeObject('box', 'purple');
    const key = makeObject('key', 'purple');
    box.contains = key;
    w.grid.set(4, 3, box);
    w.step(Act.toggle);
    expect(w.grid.get(4, 3)).toBe(key);
  });

  it('reads outside the grid as wall and reports the step budget', () => {
    const w = room();
    expect(w.grid.get(-1, 0)).toBe(WALL);
    w.maxSteps = 2;
    w.step(Act.left);
    expect(w.outOfSteps).toBe(false);
    w.step(Act.left);
    expect(w.outOfSteps).toBe(true);
  });
});
