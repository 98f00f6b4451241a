/**
 * The agent's 7x7 egocentric view with MiniGrid's visibility rule (`gen_obs_grid` +
 * `Grid.process_vis`, `see_through_walls=False`): light spreads from the agent's cell row by row
 * away from it, and stops at walls and closed doors.
 *
 * View coordinates: `i` 0..6 from the agent's left to its right, `j` 0..6 from the farthest row to
 * the agent's own row (the agent sits at i = 3, j = 6). Buffers are allocated once and refilled.
 */
import { DIR_DX, DIR_DY, VIEW_SIZE } from './constants.js';
import type { GridWorld } from './world.js';
import type { WorldObj } from './world-object.js';
import { seeBehind } from './world-object.js';

const N = VIEW_SIZE * VIEW_SIZE;
const HALF = VIEW_SIZE >> 1;

/**
 * Reusable visibility computation.
 * @example
 * const view = new EgoView();
 * view.compute(world);
 * view.visible[view.index(3, 5)]; // 1 when the cell in front of the agent is seen
 */
export class EgoView {
  /** [49] 1 where the cell is seen this step. */
  readonly visible = new Uint8Array(N);
  /** [49] absolute x of each view cell (may be outside the grid). */
  readonly absX = new Int32Array(N);
  /** [49] absolute y of each view cell. */
  readonly absY = new Int32Array(N);
  /** [49] content of each view cell (walls outside the grid), before masking. */
  readonly cells: (WorldObj | null)[] = new Array<WorldObj | null>(N).fill(null);

  /** Flat index of view cell (i, j). */
  index(i: number, j: number): number {
    return j * VIEW_SIZE + i;
  }

  /** Steps ahead of the agent for view row j. */
  forwardOf(j: number): number {
    return VIEW_SIZE - 1 - j;
  }

  /** Steps to the agent's right (negative: left) for view column i. */
  sideOf(i: number): number {
    return i - HALF;
  }

  /** Refills the buffers for the world's current agent pose. */
  compute(world: GridWorld): void {
    const dx = DIR_DX[world.agentDir] as number;
    const dy = DIR_DY[world.agentDir] as number;
    // Right vector of MiniGrid: (-dy, dx).
    const rx = -dy;
    const ry = dx;
    const grid = world.grid;
    for (let j = 0; j < VIEW_SIZE; j++) {
      const fwd = VIEW_SIZE - 1 - j;
      for (let i = 0; i < VIEW_SIZE; i++) {
        const side = i - HALF;
        const k = j * VIEW_SIZE + i;
        const x = world.agentX + dx * fwd + rx * side;
        const y = world.agentY + dy * fwd + ry * side;
        this.absX[k] = x;
        this.absY[k] = y;
        this.cells[k] = grid.get(x, y);
      }
    }
    this.processVisibility();
  }

  /** MiniGrid `process_vis`, on the egocentric grid. */
  private processVisibility(): void {
    const mask = this.visible;
    mask.fill(0);
    mask[(VIEW_SIZE - 1) * VIEW_SIZE + HALF] = 1;
    for (let j = VIEW_SIZE - 1; j >= 0; j--) {
      const row = j * VIEW_SIZE;
      for (let i = 0; i < VIEW_SIZE - 1; i++) {
        const k = row + i;
        if (mask[k] === 0 || !seeBehind(this.cells[k] ?? null)) continue;
        mask[k + 1] = 1;
        if (j > 0) {
          mask[k + 1 - VIEW_SIZE] = 1;
          mask[k - VIEW_SIZE] = 1;
        }
      }
      for (let i = VIEW_SIZE - 1; i > 0; i--) {
        const k = row + i;
        if (mask[k] === 0 || !seeBehind(this.cells[k] ?? null)) continue;
        mask[k - 1] = 1;
        if (j > 0) {
          mask[k - 1 - VIEW_SIZE] = 1;
          mask[k - VIEW_SIZE] = 1;
        }
      }
    }
  }
}
