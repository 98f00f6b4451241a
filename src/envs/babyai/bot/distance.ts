/**
 * Primitive-step distances on the true grid, for the BabyAI bot: how many primitive actions
 * (turn, forward, toggle) separate each agent pose from facing one of a set of target cells.
 * Closed doors cost a toggle extra; a locked door is passable (at the same price) only while the
 * agent carries a key of its colour; other objects block. Computed backwards from the targets with
 * Dial's algorithm (costs are 1 or 2), so one field answers "how far" for every candidate pose.
 */
import type { Color } from '../constants.js';
import { DIR_DX, DIR_DY } from '../constants.js';
import type { GridWorld } from '../world.js';
import type { WorldObj } from '../world-object.js';

/** Unreachable. */
export const FAR = 0x3fffffff;

/**
 * Primitive cost of stepping onto a cell, or {@link FAR}: 1 for floor and open doors, 2 for a door
 * that must be toggled first (closed, or locked with the matching key in hand).
 * @example enterCost(null, null) // 1
 */
export function enterCost(cell: WorldObj | null, keyColor: Color | null): number {
  if (cell === null) return 1;
  if (cell.type !== 'door') return FAR;
  if (cell.isOpen) return 1;
  if (!cell.isLocked) return 2;
  return keyColor === cell.color ? 2 : FAR;
}

/**
 * Reverse shortest-path field over poses `(y * width + x) * 4 + dir`.
 * @example
 * const field = new DistanceField();
 * field.compute(world, [ballIndex]);
 * field.at(world.agentX, world.agentY, world.agentDir); // primitives until facing the ball
 */
export class DistanceField {
  /** [w*h*4] distance of each pose. */
  dist = new Int32Array(0);
  private width = 0;
  private buckets: number[][] = [];

  /** Fills the field for targets given as flat cell indices (y * width + x). */
  compute(world: GridWorld, targets: readonly number[]): void {
    const { grid } = world;
    const w = grid.width;
    const n = w * grid.height;
    this.width = w;
    if (this.dist.length !== n * 4) this.dist = new Int32Array(n * 4);
    const dist = this.dist;
    dist.fill(FAR);
    const key = world.carrying !== null && world.carrying.type === 'key' ? world.carrying.color : null;
    const agentCell = world.agentY * w + world.agentX;
    // Cost to enter each cell; a cell is standable when it can be entered (or holds the agent).
    const enter = new Int32Array(n);
    for (let c = 0; c < n; c++) enter[c] = c === agentCell ? 1 : enterCost(grid.cells[c] ?? null, key);
    const buckets = this.buckets;
    for (const b of buckets) b.length = 0;
    const push = (pose: number, d: number): void => {
      if (d >= (dist[pose] as number)) return;
      dist[pose] = d;
      while (buckets.length <= d) buckets.push([]);
      (buckets[d] as number[]).push(pose);
    };
    for (const t of targets) {
      const tx = t % w;
      const ty = (t - tx) / w;
      for (let dir = 0; dir < 4; dir++) {
        const x = tx - (DIR_DX[dir] as number);
        const y = ty - (DIR_DY[dir] as number);
        if (x < 0 || y < 0 || x >= w || y >= grid.height) continue;
        if ((enter[y * w + x] as number) >= FAR) continue;
        push((y * w + x) * 4 + dir, 0);
      }
    }
    for (let d = 0; d < buckets.length; d++) {
      const bucket = buckets[d] as number[];
      for (let k = 0; k < bucket.length; k++) {
        const pose = bucket[k] as number;
        if (dist[pose] !== d) continue;
        const dir = pose & 3;
        const cell = pose >> 2;
        // Turning: (cell, dir ± 1) reaches (cell, dir) with one turn.
        push(cell * 4 + ((dir + 1) & 3), d + 1);
        push(cell * 4 + ((dir + 3) & 3), d + 1);
        // Forward: from the cell behind, facing the same way, entering this cell.
        const x = (cell % w) - (DIR_DX[dir] as number);
        const y = Math.floor(cell / w) - (DIR_DY[dir] as number);
        if (x < 0 || y < 0 || x >= w || y >= grid.height) continue;
        const from = y * w + x;
        if ((enter[from] as number) >= FAR) continue;
        push(from * 4 + dir, d + (enter[cell] as number));
      }
    }
  }

  /** Distance of pose (x, y, dir). */
  at(x: number, y: number, dir: number): number {
    return this.dist[(y * this.width + x) * 4 + dir] as number;
  }
}
