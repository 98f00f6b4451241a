/**
 * What stands between the agent and its targets, for the BabyAI bot: the cheapest cell path when
 * objects and locked doors may be crossed at a high price (the objects must be moved, the doors
 * unlocked), the first such obstacle on it, and cells where a carried object can be put down
 * without blocking anything.
 */
import { DIR_DX, DIR_DY } from '../constants.js';
import type { GridWorld } from '../world.js';
import type { WorldObj } from '../world-object.js';

/** Price of crossing a cell that needs work first (moving an object, fetching a key). */
const OBSTACLE = 1000;

/** The cheapest way to a target and its first obstacle. */
export interface Route {
  /** Flat indices of the cells from the agent (exclusive) to a cell next to a target (inclusive). */
  readonly cells: readonly number[];
  /** First cell on the way that needs work, or null when the way is clear. */
  readonly obstacle: { readonly cell: number; readonly obj: WorldObj } | null;
}

/**
 * Cheapest route from the agent to a cell next to one of `targets` (flat indices), or null when
 * walls separate them. Locked doors of `wallColors` count as walls.
 * @example const route = findRoute(world, [ballIndex]); route?.obstacle?.obj.type // 'box' when a box blocks
 */
export function findRoute(world: GridWorld, targets: readonly number[], wallColors?: readonly string[]): Route | null {
  const { grid } = world;
  const w = grid.width;
  const n = w * grid.height;
  const key = world.carrying !== null && world.carrying.type === 'key' ? world.carrying.color : null;
  const cost = (c: number): number => {
    const cell = grid.cells[c] ?? null;
    if (cell === null) return 1;
    if (cell.type === 'wall') return -1;
    if (cell.type === 'door') {
      if (!cell.isLocked || cell.color === key) return 1;
      return wallColors?.includes(cell.color) === true ? -1 : OBSTACLE;
    }
    return OBSTACLE;
  };
  const goal = new Uint8Array(n);
  const targetSet = new Set(targets);
  for (const t of targets) {
    const tx = t % w;
    const ty = (t - tx) / w;
    for (let dir = 0; dir < 4; dir++) {
      const x = tx + (DIR_DX[dir] as number);
      const y = ty + (DIR_DY[dir] as number);
      if (x >= 0 && y >= 0 && x < w && y < grid.height && !targetSet.has(y * w + x)) goal[y * w + x] = 1;
    }
  }
  // Dijkstra with a sorted frontier: grids are at most a few hundred cells.
  const dist = new Float64Array(n).fill(Number.POSITIVE_INFINITY);
  const prev = new Int32Array(n).fill(-1);
  const start = world.agentY * w + world.agentX;
  dist[start] = 0;
  const frontier: number[] = [start];
  const done = new Uint8Array(n);
  let end = -1;
  while (frontier.length > 0) {
    let bi = 0;
    for (let i = 1; i < frontier.length; i++) if ((dist[frontier[i] as number] as number) < (dist[frontier[bi] as number] as number)) bi = i;
    const c = frontier[bi] as number;
    frontier[bi] = frontier[frontier.length - 1] as number;
    frontier.pop();
    if (done[c] === 1) continue;
    done[c] = 1;
    // A standing spot taken by an object still ends the route: that object is the obstacle.
    if (goal[c] === 1) {
      end = c;
      break;
    }
    const cx = c % w;
    const cy = (c - cx) / w;
    for (let dir = 0; dir < 4; dir++) {
      const x = cx + (DIR_DX[dir] as number);
      const y = cy + (DIR_DY[dir] as number);
      if (x < 0 || y < 0 || x >= w || y >= grid.height) continue;
      const next = y * w + x;
      if (targetSet.has(next)) continue;
      const step = cost(next);
      if (step < 0) continue;
      const d = (dist[c] as number) + step;
      if (d < (dist[next] as number)) {
        dist[next] = d;
        prev[next] = c;
        frontier.push(next);
      }
    }
  }
  if (end < 0) return null;
  const cells: number[] = [];
  for (let c = end; c !== start && c >= 0; c = prev[c] as number) cells.push(c);
  cells.reverse();
  let obstacle: Route['obstacle'] = null;
  for (const c of cells) {
    if (cost(c) === OBSTACLE) {
      obstacle = { cell: c, obj: grid.cells[c] as WorldObj };
      break;
    }
  }
  return { cells, obstacle };
}

/**
 * Empty cells where dropping an object blocks nothing: not on `avoid`, not beside a door (so
 * doorways stay free), not the agent's own cell.
 * @example dropCells(world, new Set(route.cells))
 */
export function dropCells(world: GridWorld, avoid: ReadonlySet<number>): number[] {
  const { grid } = world;
  const w = grid.width;
  const out: number[] = [];
  const agent = world.agentY * w + world.agentX;
  for (let c = 0; c < grid.cells.length; c++) {
    if (grid.cells[c] !== null || c === agent || avoid.has(c)) continue;
    const cx = c % w;
    const cy = (c - cx) / w;
    let nearDoor = false;
    for (let dir = 0; dir < 4 && !nearDoor; dir++) nearDoor = grid.get(cx + (DIR_DX[dir] as number), cy + (DIR_DY[dir] as number))?.type === 'door';
    if (!nearDoor) out.push(c);
  }
  return out;
}
