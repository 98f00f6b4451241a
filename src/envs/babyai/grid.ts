/**
 * A width x height grid of cells (MiniGrid `Grid`): row-major flat storage, null = empty floor.
 */
import type { WorldObj } from './world-object.js';
import { WALL } from './world-object.js';

/**
 * The cells of a level.
 * @example
 * const grid = new Grid(8, 8);
 * grid.wallRect(0, 0, 8, 8);
 * grid.get(0, 3) === WALL; // true
 */
export class Grid {
  /** [height * width] cell contents, row-major (index y * width + x). */
  readonly cells: (WorldObj | null)[];

  constructor(
    readonly width: number,
    readonly height: number,
  ) {
    this.cells = new Array<WorldObj | null>(width * height).fill(null);
  }

  /** Whether (x, y) lies inside the grid. */
  inBounds(x: number, y: number): boolean {
    return x >= 0 && y >= 0 && x < this.width && y < this.height;
  }

  /** Cell content; outside the grid reads as wall, as MiniGrid's view slicing does. */
  get(x: number, y: number): WorldObj | null {
    if (!this.inBounds(x, y)) return WALL;
    return this.cells[y * this.width + x] ?? null;
  }

  /** Sets a cell inside the grid. */
  set(x: number, y: number, obj: WorldObj | null): void {
    if (!this.inBounds(x, y)) throw new RangeError(`Grid.set: (${x}, ${y}) outside ${this.width}x${this.height}`);
    this.cells[y * this.width + x] = obj;
  }

  /** Horizontal wall of `length` cells starting at (x, y). */
  horzWall(x: number, y: number, length: number): void {
    for (let i = 0; i < length; i++) this.set(x + i, y, WALL);
  }

  /** Vertical wall of `length` cells starting at (x, y). */
  vertWall(x: number, y: number, length: number): void {
    for (let j = 0; j < length; j++) this.set(x, y + j, WALL);
  }

  /** The outline of a w x h rectangle whose top-left corner is (x, y). */
  wallRect(x: number, y: number, w: number, h: number): void {
    this.horzWall(x, y, w);
    this.horzWall(x, y + h - 1, w);
    this.vertWall(x, y, h);
    this.vertWall(x + w - 1, y, h);
  }

  /** Position of an object by identity, or null when it is not on the grid (e.g. carried). */
  find(obj: WorldObj): { x: number; y: number } | null {
    const at = this.cells.indexOf(obj);
    return at < 0 ? null : { x: at % this.width, y: Math.floor(at / this.width) };
  }
}
