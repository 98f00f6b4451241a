/**
 * The true state of a MiniGrid episode and its primitive transition (MiniGrid `MiniGridEnv.step`).
 * Pure logic: no text, no randomness, no I/O. Instructions are verified elsewhere.
 */
import type { Direction, PrimitiveAction } from './constants.js';
import { Act, DIR_DX, DIR_DY } from './constants.js';
import type { Grid } from './grid.js';
import type { RoomLayout } from './room-layout.js';
import type { WorldObj } from './world-object.js';
import { canOverlap, canPickup } from './world-object.js';

/**
 * Grid, agent pose, carried object and step budget.
 * @example
 * const world = new GridWorld(grid, null);
 * world.agentX = 3; world.agentY = 3; world.agentDir = 0;
 * world.step(Act.forward); // true when the agent moved
 */
export class GridWorld {
  agentX = 0;
  agentY = 0;
  agentDir: Direction = 0;
  carrying: WorldObj | null = null;
  /** Primitive steps taken so far (MiniGrid `step_count`). */
  stepCount = 0;
  /** Primitive step budget (MiniGrid `max_steps`); the episode is truncated when reached. */
  maxSteps = 100;

  constructor(
    readonly grid: Grid,
    /** Room structure the level was built on (needed for location words); null for free-form grids. */
    readonly layout: RoomLayout | null,
  ) {}

  /** x of the cell in front of the agent. */
  get frontX(): number {
    return this.agentX + (DIR_DX[this.agentDir] as number);
  }

  /** y of the cell in front of the agent. */
  get frontY(): number {
    return this.agentY + (DIR_DY[this.agentDir] as number);
  }

  /** Content of the cell in front of the agent. */
  frontCell(): WorldObj | null {
    return this.grid.get(this.frontX, this.frontY);
  }

  /** True once the primitive step budget is used up. */
  get outOfSteps(): boolean {
    return this.stepCount >= this.maxSteps;
  }

  /**
   * Applies one primitive action (counts a step even when nothing happens, as MiniGrid does).
   * Returns whether the state changed, which the text wrapper uses to stop a multi-step plan
   * whose next move would fail.
   */
  step(action: PrimitiveAction): boolean {
    this.stepCount++;
    const fx = this.frontX;
    const fy = this.frontY;
    const front = this.grid.get(fx, fy);
    switch (action) {
      case Act.left:
        this.agentDir = ((this.agentDir + 3) % 4) as Direction;
        return true;
      case Act.right:
        this.agentDir = ((this.agentDir + 1) % 4) as Direction;
        return true;
      case Act.forward:
        if (!this.grid.inBounds(fx, fy) || !canOverlap(front)) return false;
        this.agentX = fx;
        this.agentY = fy;
        return true;
      case Act.pickup:
        if (this.carrying !== null || !canPickup(front)) return false;
        this.carrying = front;
        this.grid.set(fx, fy, null);
        return true;
      case Act.drop:
        if (this.carrying === null || front !== null) return false;
        this.grid.set(fx, fy, this.carrying);
        this.carrying = null;
        return true;
      case Act.toggle:
        return this.toggle(front, fx, fy);
      default:
        return false;
    }
  }

  /** MiniGrid `Door.toggle` / `Box.toggle`. */
  private toggle(front: WorldObj | null, fx: number, fy: number): boolean {
    if (front === null) return false;
    if (front.type === 'door') {
      if (front.isLocked) {
        const key = this.carrying;
        if (key === null || key.type !== 'key' || key.color !== front.color) return false;
        front.isLocked = false;
        front.isOpen = true;
        return true;
      }
      front.isOpen = !front.isOpen;
      return true;
    }
    if (front.type === 'box') {
      this.grid.set(fx, fy, front.contains);
      return true;
    }
    return false;
  }
}
