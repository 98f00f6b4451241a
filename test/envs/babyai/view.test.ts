import { describe, expect, it } from 'vitest';
import { Grid } from '../../../src/envs/babyai/grid.js';
import { EgoView } from '../../../src/envs/babyai/view.js';
import { GridWorld } from '../../../src/envs/babyai/world.js';
import { makeDoor, makeObject, WALL } from '../../../src/envs/babyai/world-object.js';

function world(width: number, height: number, x: number, y: number, dir: 0 | 1 | 2 | 3): GridWorld {
  const grid = new Grid(width, height);
  grid.wallRect(0, 0, width, height);
  const w = new GridWorld(grid, null);
  w.agentX = x;
  w.agentY = y;
  w.agentDir = dir;
  return w;
}

function seen(view: EgoView, x: number, y: number): boolean {
  for (let k = 0; k < 49; k++) if (view.absX[k] === x && view.absY[k] === y) return view.visible[k] === 1;
  return false;
}

describe('EgoView', () => {
  it('maps view cells to absolute positions for each heading', () => {
    const view = new EgoView();
    const w = world(15, 15, 7, 7, 0);
    view.compute(w);
    // One step ahead (east), in the agent's column.
    expect([view.absX[view.index(3, 5)], view.absY[view.index(3, 5)]]).toEqual([8, 7]);
    // Facing south, the right hand points west.
    w.agentDir = 1;
    view.compute(w);
    expect([view.absX[view.index(4, 6)], view.absY[view.index(4, 6)]]).toEqual([6, 7]);
  });

  it('sees everything in an open room within the 7x7 square ahead', () => {
    const view = new EgoView();
    const w = world(15, 15, 7, 7, 3);
    view.compute(w);
    expect(view.visible.every((v) => v === 1)).toBe(true);
    expect(seen(view, 7, 1)).toBe(true);
    expect(seen(view, 7, 8)).toBe(false);
  });

  it('does not see behind a wall', () => {
    const view = new EgoView();
    const w = world(15, 15, 7, 10, 3);
    w.grid.horzWall(1, 8, 13);
    w.grid.set(7, 6, makeObject('ball', 'red'));
    view.compute(w);
    expect(seen(view, 7, 8)).toBe(true);
    expect(seen(view, 7, 6)).toBe(false);
    expect(view.cells[view.index(3, 4)]).toBe(WALL);
  });

  it('sees through an open door but not a closed one', () => {
    const view = new EgoView();
    const w = world(15, 15, 7, 10, 3);
    w.grid.horzWall(1, 8, 13);
    const door = makeDoor('red');
    w.grid.set(7, 8, door);
    view.compute(w);
    expect(seen(view, 7, 8)).toBe(true);
    expect(seen(view, 7, 7)).toBe(false);
    door.isOpen = true;
    view.compute(w);
    expect(seen(view, 7, 7)).toBe(true);
    expect(seen(view, 7, 6)).toBe(true);
  });

  it('lets objects other than walls and doors leave the view open', () => {
    const view = new EgoView();
    const w = world(15, 15, 7, 10, 3);
    w.grid.set(7, 9, makeObject('box', 'grey'));
    view.compute(w);
    expect(seen(view, 7, 5)).toBe(true);
  });
});
