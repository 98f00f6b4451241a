/**
 * AgentGym's `find_path` (agentenv_babyai/environment.py), reproduced with its exact behaviour,
 * because the primitive plans it returns decide where the agent ends up:
 *
 * - a breadth-first search over (cell, heading) trying forward, left, right in that order;
 * - a state counts as visited only when it is taken off the queue, so one state can be queued
 *   several times, and its recorded predecessor is the last one that queued it before it was
 *   first taken off (the path found is then not always a shortest one);
 * - the goal test is made when a state is taken off: facing the goal cell, or (`arrive`)
 *   standing on it;
 * - cells outside AgentGym's x/y ranges (the view square, skewed by one cell on some headings)
 *   are closed, cells holding a visible wall, box, ball or key are closed; everything else, closed
 *   doors and cells the agent cannot see included, is open.
 */
import { DIR_DX, DIR_DY } from '../constants.js';

/** The searched rectangle (inclusive bounds) and which of its cells are closed. */
export interface PathArea {
  readonly x0: number;
  readonly x1: number;
  readonly y0: number;
  readonly y1: number;
  /** [(x1 - x0 + 1) * (y1 - y0 + 1)] 1 where a visible obstacle stands, index (x - x0) * height + (y - y0). */
  readonly closed: Uint8Array;
}

const FORWARD = 2;
const LEFT = 0;
const RIGHT = 1;

/** Reusable search buffers. */
export class PathFinder {
  private queue = new Int32Array(1024);
  private popped = new Int32Array(0);
  private parent = new Int32Array(0);
  private via = new Int8Array(0);
  private stamp = 0;

  /**
   * The primitive plan from (x, y, dir) to face (or, with `arrive`, stand on) (gx, gy), or null.
   * @example finder.find(area, 3, 3, 0, 5, 3, false) // [2] when one step forward faces the goal
   */
  find(area: PathArea, x: number, y: number, dir: number, gx: number, gy: number, arrive: boolean): number[] | null {
    const height = area.y1 - area.y0 + 1;
    const width = area.x1 - area.x0 + 1;
    const states = width * height * 4;
    if (this.popped.length < states) {
      this.popped = new Int32Array(states);
      this.parent = new Int32Array(states);
      this.via = new Int8Array(states);
      this.stamp = 0;
    }
    const s = ++this.stamp;
    // The start cell always lies inside AgentGym's ranges (they contain the agent's cell).
    if (x < area.x0 || x > area.x1 || y < area.y0 || y > area.y1) return null;
    const start = (((x - area.x0) * height + (y - area.y0)) << 2) | dir;
    let head = 0;
    let tail = 0;
    this.queue[tail++] = start;
    while (head < tail) {
      const state = this.queue[head++] as number;
      this.popped[state] = s;
      const d = state & 3;
      const cell = state >> 2;
      const px = Math.floor(cell / height) + area.x0;
      const py = (cell % height) + area.y0;
      const done = arrive ? px === gx && py === gy : px + (DIR_DX[d] as number) === gx && py + (DIR_DY[d] as number) === gy;
      if (done) return this.pathTo(state, start);
      tail = this.push(area, state, px + (DIR_DX[d] as number), py + (DIR_DY[d] as number), d, FORWARD, height, s, tail);
      tail = this.push(area, state, px, py, (d + 3) & 3, LEFT, height, s, tail);
      tail = this.push(area, state, px, py, (d + 1) & 3, RIGHT, height, s, tail);
    }
    return null;
  }

  private push(area: PathArea, from: number, nx: number, ny: number, nd: number, action: number, height: number, s: number, tail: number): number {
    if (nx < area.x0 || nx > area.x1 || ny < area.y0 || ny > area.y1) return tail;
    const cell = (nx - area.x0) * height + (ny - area.y0);
    const next = (cell << 2) | nd;
    if (this.popped[next] === s || area.closed[cell] === 1) return tail;
    if (tail === this.queue.length) {
      const grown = new Int32Array(this.queue.length * 2);
      grown.set(this.queue);
      this.queue = grown;
    }
    this.queue[tail] = next;
    // A later queueing overwrites the predecessor, as AgentGym's `graph[...] = ...` does.
    this.parent[next] = from;
    this.via[next] = action;
    return tail + 1;
  }

  private pathTo(state: number, start: number): number[] {
    const path: number[] = [];
    for (let at = state; at !== start; at = this.parent[at] as number) path.push(this.via[at] as number);
    return path.reverse();
  }
}
