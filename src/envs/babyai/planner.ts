/**
 * Shortest primitive plans for the high-level text actions (AgentGym's `find_path`): a breadth-first
 * search over (cell, heading) states using forward / left / right, through cells the agent can
 * currently see and could stand on. One search per observation serves every target; buffers are
 * reused across steps (stamped, never cleared).
 */
import type { PrimitiveAction } from './constants.js';
import { Act, DIR_DX, DIR_DY } from './constants.js';
import type { EgoView } from './view.js';
import type { GridWorld } from './world.js';
import { canOverlap } from './world-object.js';

/**
 * Breadth-first planner bound to a grid size.
 * @example
 * const planner = new Planner();
 * planner.search(world, view);
 * planner.planToFace(ballX, ballY); // e.g. [Act.left, Act.forward] or null
 */
export class Planner {
  private width = 0;
  private height = 0;
  private stamp = 0;
  /** [w*h] stamp of cells that are visible and walkable this search. */
  private free = new Int32Array(0);
  /** [w*h*4] stamp of states reached this search. */
  private seen = new Int32Array(0);
  /** [w*h*4] BFS depth of each reached state. */
  private depth = new Int32Array(0);
  /** [w*h*4] predecessor state. */
  private parent = new Int32Array(0);
  /** [w*h*4] primitive taken from the predecessor. */
  private via = new Uint8Array(0);
  /** [w*h*4] FIFO queue of states. */
  private queue = new Int32Array(0);

  private resize(width: number, height: number): void {
    if (width === this.width && height === this.height) return;
    this.width = width;
    this.height = height;
    const cells = width * height;
    this.free = new Int32Array(cells);
    this.seen = new Int32Array(cells * 4);
    this.depth = new Int32Array(cells * 4);
    this.parent = new Int32Array(cells * 4);
    this.via = new Uint8Array(cells * 4);
    this.queue = new Int32Array(cells * 4);
    this.stamp = 0;
  }

  /** Runs the search from the agent's pose over the cells `view` shows as visible and walkable. */
  search(world: GridWorld, view: EgoView): void {
    const { grid } = world;
    this.resize(grid.width, grid.height);
    const s = ++this.stamp;
    const w = this.width;
    for (let k = 0; k < view.visible.length; k++) {
      if (view.visible[k] === 0) continue;
      const x = view.absX[k] as number;
      const y = view.absY[k] as number;
      if (!grid.inBounds(x, y)) continue;
      if (canOverlap(grid.get(x, y))) this.free[y * w + x] = s;
    }
    this.free[world.agentY * w + world.agentX] = s;
    const start = (world.agentY * w + world.agentX) * 4 + world.agentDir;
    let head = 0;
    let tail = 0;
    this.queue[tail++] = start;
    this.seen[start] = s;
    this.depth[start] = 0;
    while (head < tail) {
      const state = this.queue[head++] as number;
      const dir = state & 3;
      const cell = state >> 2;
      const x = cell % w;
      const y = (cell - x) / w;
      const d = (this.depth[state] as number) + 1;
      // Same expansion order as AgentGym: forward, left, right.
      const nx = x + (DIR_DX[dir] as number);
      const ny = y + (DIR_DY[dir] as number);
      if (nx >= 0 && ny >= 0 && nx < w && ny < this.height && this.free[ny * w + nx] === s) {
        tail = this.visit(state, (ny * w + nx) * 4 + dir, Act.forward, d, s, tail);
      }
      tail = this.visit(state, cell * 4 + ((dir + 3) & 3), Act.left, d, s, tail);
      tail = this.visit(state, cell * 4 + ((dir + 1) & 3), Act.right, d, s, tail);
    }
  }

  private visit(from: number, to: number, action: PrimitiveAction, d: number, s: number, tail: number): number {
    if (this.seen[to] === s) return tail;
    this.seen[to] = s;
    this.depth[to] = d;
    this.parent[to] = from;
    this.via[to] = action;
    this.queue[tail] = to;
    return tail + 1;
  }

  /** The primitives from the start to `state`, then `then` and `last` when given: one exact-size array. */
  private pathTo(state: number, then?: PrimitiveAction, last?: PrimitiveAction): PrimitiveAction[] {
    const depth = this.depth[state] as number;
    const extra = (then === undefined ? 0 : 1) + (last === undefined ? 0 : 1);
    const path = new Array<PrimitiveAction>(depth + extra);
    let at = state;
    for (let k = depth - 1; k >= 0; k--) {
      path[k] = this.via[at] as PrimitiveAction;
      at = this.parent[at] as number;
    }
    if (then !== undefined) path[depth] = then;
    if (last !== undefined) path[depth + extra - 1] = last;
    return path;
  }

  /**
   * Shortest plan that ends facing cell (tx, ty) from an adjacent cell, or null when none; `then`
   * and `last` (e.g. pickup, or toggle + forward) are appended.
   */
  planToFace(tx: number, ty: number, then?: PrimitiveAction, last?: PrimitiveAction): PrimitiveAction[] | null {
    const w = this.width;
    const h = this.height;
    let best = -1;
    for (let dir = 0; dir < 4; dir++) {
      const x = tx - (DIR_DX[dir] as number);
      const y = ty - (DIR_DY[dir] as number);
      if (x < 0 || y < 0 || x >= w || y >= h) continue;
      const st = (y * w + x) * 4 + dir;
      if (this.seen[st] !== this.stamp) continue;
      if (best < 0 || (this.depth[st] as number) < (this.depth[best] as number)) best = st;
    }
    return best < 0 ? null : this.pathTo(best, then, last);
  }

  /** Shortest plan that ends standing on cell (tx, ty) (any heading), or null when none. */
  planToStand(tx: number, ty: number): PrimitiveAction[] | null {
    if (tx < 0 || ty < 0 || tx >= this.width || ty >= this.height) return null;
    const base = (ty * this.width + tx) * 4;
    let best = -1;
    for (let st = base; st < base + 4; st++) {
      if (this.seen[st] !== this.stamp) continue;
      if (best < 0 || (this.depth[st] as number) < (this.depth[best] as number)) best = st;
    }
    return best < 0 ? null : this.pathTo(best);
  }
}
