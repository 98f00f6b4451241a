/**
 * The random placement helpers BabyAI levels are written with (MiniGrid
 * `RoomGridLevel`) on a {@link RoomLayout}: doors between neighbours,
 * objects placed by rejection sampling. All randomness comes from the stream handed in, so a level
 * is a pure function of its seed.
 */
import type { Color, Direction, PickableType } from './constants.js';
import { COLORS, DIR_DX, DIR_DY, MINIGRID_DRAW_COLORS, PICKABLE_TYPES } from './constants.js';
import { Grid } from './grid.js';
import type { LevelRandom } from './level-random.js';
import { GridWorld } from './world.js';
import type { WorldObj } from './world-object.js';
import { makeDoor, makeObject } from './world-object.js';
import { type Room, RoomLayout } from './room-layout.js';

/** Agent placements drawn before {@link LevelBuilder.placeAgent} rejects the attempt (MiniGrid: unbounded). */
export const MAX_AGENT_DRAWS = 100_000;

/** Raised inside level generation to ask for a fresh attempt (BabyAI `RejectSampling`). */
export class RejectSampling extends Error {
  constructor(reason: string) {
    // No stack trace: generation rejects about one attempt in five and catches every rejection,
    // and capturing a stack was the costliest part of a rejected attempt.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(reason);
    Error.stackTraceLimit = limit;
    this.name = 'RejectSampling';
  }
}

/** State a Minigrid level object keeps between attempts (and between resets of one env). */
export interface LevelCarry {
  /** `LevelGen.locked_room`: the last locked room added, possibly of an earlier attempt's grid. */
  lockedRoom?: Room | null;
}

/**
 * Builds one level attempt: the grid, the agent pose and the objects, drawing from `rng`.
 * Methods mirror the MiniGrid helpers BabyAI levels call, in the same order of random draws.
 * @example
 * const b = new LevelBuilder(rng, 8, 1, 1);
 * b.placeAgent();
 * const [ball] = b.addObject(0, 0, 'ball', 'red');
 */
export class LevelBuilder {
  readonly layout: RoomLayout;
  readonly world: GridWorld;
  /** Object the agent starts carrying (taken off the grid after the verifier is reset; PutNext `start_carrying`). */
  startCarrying: WorldObj | null = null;
  /** The colour list random colour draws index (Minigrid's is sorted by name). */
  readonly colors: readonly Color[];

  constructor(
    readonly rng: LevelRandom,
    roomSize: number,
    numRows: number,
    numCols: number,
    /**
     * Minigrid 2.4.0's semantics wherever turnwise's generator deliberately differs (its
     * identity-comparison quirks, no regeneration of unwinnable seeds, instructions verified as
     * Minigrid verifies them); see `levels/level.ts`.
     */
    readonly minigrid = false,
    /** State a level keeps across rejected attempts and resets (Minigrid's `LevelGen.locked_room`). */
    readonly carry: LevelCarry = {},
  ) {
    this.colors = minigrid ? MINIGRID_DRAW_COLORS : COLORS;
    this.layout = new RoomLayout(roomSize, numRows, numCols);
    const grid = new Grid(this.layout.width, this.layout.height);
    this.world = new GridWorld(grid, this.layout);
    this.buildRooms();
  }

  /** Uniform integer in [low, high). */
  randInt(low: number, high: number): number {
    return low + this.rng.int(high - low);
  }

  /** Uniform element. */
  randElem<T>(items: readonly T[]): T {
    return this.rng.pick(items);
  }

  /** Fair coin (MiniGrid `_rand_bool`). */
  randBool(): boolean {
    return this.rng.int(2) === 0;
  }

  /** Uniform float in [0, 1). */
  randFloat(): number {
    return this.rng.next();
  }

  /** Uniform colour (MiniGrid `_rand_color`). */
  randColor(): Color {
    return this.rng.pick(this.colors);
  }

  /** `n` distinct elements, drawn one by one (MiniGrid `_rand_subset`). */
  randSubset<T>(items: readonly T[], n: number): T[] {
    const pool = [...items];
    const out: T[] = [];
    while (out.length < n) {
      const at = this.rng.int(pool.length);
      out.push(pool[at] as T);
      pool.splice(at, 1);
    }
    return out;
  }

  /** Walls of every room, door slots between neighbours, agent in the middle room facing east. */
  private buildRooms(): void {
    const { layout, world } = this;
    for (const row of layout.rooms) for (const room of row) world.grid.wallRect(room.top[0], room.top[1], room.size, room.size);
    for (let j = 0; j < layout.numRows; j++) {
      for (let i = 0; i < layout.numCols; i++) {
        const room = layout.room(i, j);
        const xl = room.top[0] + 1;
        const yl = room.top[1] + 1;
        const xm = room.top[0] + room.size - 1;
        const ym = room.top[1] + room.size - 1;
        if (i < layout.numCols - 1) {
          room.neighbors[0] = layout.room(i + 1, j);
          room.doorPos[0] = [xm, this.randInt(yl, ym)];
        }
        if (j < layout.numRows - 1) {
          room.neighbors[1] = layout.room(i, j + 1);
          room.doorPos[1] = [this.randInt(xl, xm), ym];
        }
        if (i > 0) {
          room.neighbors[2] = layout.room(i - 1, j);
          room.doorPos[2] = layout.room(i - 1, j).doorPos[0] ?? null;
        }
        if (j > 0) {
          room.neighbors[3] = layout.room(i, j - 1);
          room.doorPos[3] = layout.room(i, j - 1).doorPos[1] ?? null;
        }
      }
    }
    const half = layout.roomSize >> 1;
    world.agentX = (layout.numCols >> 1) * (layout.roomSize - 1) + half;
    world.agentY = (layout.numRows >> 1) * (layout.roomSize - 1) + half;
    world.agentDir = 0;
  }

  /**
   * An empty cell in the rectangle, not under the agent, accepted by `reject` (MiniGrid `place_obj`).
   * Gives up after `maxTries` draws by rejecting the whole attempt.
   */
  placeObj(obj: WorldObj | null, top: readonly [number, number], size: number, reject?: (x: number, y: number) => boolean, maxTries = 1000): [number, number] {
    const grid = this.world.grid;
    const x0 = Math.max(top[0], 0);
    const y0 = Math.max(top[1], 0);
    const x1 = Math.min(x0 + size, grid.width);
    const y1 = Math.min(y0 + size, grid.height);
    for (let tries = 0; tries <= maxTries; tries++) {
      const x = this.randInt(x0, x1);
      const y = this.randInt(y0, y1);
      if (grid.get(x, y) !== null) continue;
      if (x === this.world.agentX && y === this.world.agentY) continue;
      if (reject?.(x, y)) continue;
      if (obj !== null) grid.set(x, y, obj);
      return [x, y];
    }
    throw new RejectSampling('rejection sampling failed in placeObj');
  }

  /** Puts `obj` in room (i, j), not next to the agent (MiniGrid `place_in_room` + `reject_next_to`). */
  placeInRoom(i: number, j: number, obj: WorldObj): [WorldObj, [number, number]] {
    const room = this.layout.room(i, j);
    const { agentX, agentY } = this.world;
    const pos = this.placeObj(obj, room.top, room.size, (x, y) => Math.abs(x - agentX) + Math.abs(y - agentY) < 2);
    room.objs.push(obj);
    return [obj, pos];
  }

  /** A new key/ball/box (random kind/colour when not given) in room (i, j). */
  addObject(i: number, j: number, kind?: PickableType, color?: Color): [WorldObj, [number, number]] {
    const k = kind ?? this.randElem(PICKABLE_TYPES);
    const c = color ?? this.randElem(this.colors);
    return this.placeInRoom(i, j, makeObject(k, c));
  }

  /** A door on wall `doorIdx` of room (i, j) (random free wall/colour/lock when not given). */
  addDoor(i: number, j: number, doorIdx?: number, color?: Color, locked?: boolean): [WorldObj, [number, number]] {
    const room = this.layout.room(i, j);
    let idx = doorIdx;
    if (idx === undefined) {
      do idx = this.randInt(0, 4);
      while (room.neighbors[idx] === null || room.doors[idx] !== null);
    }
    const c = color ?? this.randElem(this.colors);
    const isLocked = locked ?? this.randBool();
    if (room.doors[idx] !== null) throw new RangeError(`addDoor: room (${i}, ${j}) already has a door on wall ${idx}`);
    const pos = room.doorPos[idx];
    const neighbor = room.neighbors[idx];
    if (pos == null || neighbor == null) throw new RangeError(`addDoor: room (${i}, ${j}) has no neighbour on wall ${idx}`);
    room.locked = isLocked;
    const door = makeDoor(c, { locked: isLocked });
    this.world.grid.set(pos[0], pos[1], door);
    room.doors[idx] = door;
    neighbor.doors[(idx + 2) % 4] = door;
    return [door, [pos[0], pos[1]]];
  }

  /** Removes the wall between room (i, j) and its neighbour on side `wallIdx`. */
  removeWall(i: number, j: number, wallIdx: number): void {
    const room = this.layout.room(i, j);
    const neighbor = room.neighbors[wallIdx];
    if (neighbor == null || room.doors[wallIdx] !== null) throw new RangeError(`removeWall: invalid wall ${wallIdx} of room (${i}, ${j})`);
    const [tx, ty] = room.top;
    const s = room.size;
    for (let k = 1; k < s - 1; k++) {
      if (wallIdx === 0) this.world.grid.set(tx + s - 1, ty + k, null);
      else if (wallIdx === 1) this.world.grid.set(tx + k, ty + s - 1, null);
      else if (wallIdx === 2) this.world.grid.set(tx, ty + k, null);
      else this.world.grid.set(tx + k, ty, null);
    }
    room.doors[wallIdx] = true;
    neighbor.doors[(wallIdx + 2) % 4] = true;
  }

  /**
   * Places the agent in room (i, j) (random room when not given), re-drawing until the cell in
   * front is empty or a wall (MiniGrid `RoomGrid.place_agent`). MiniGrid re-draws for ever; when
   * every free cell of the room faces an object or a door on all four sides (SynthS5R2 test seed
   * 805) that never ends, so after {@link MAX_AGENT_DRAWS} draws the attempt is rejected instead.
   * The bound is far above what a possible placement needs (a room has at most a few hundred
   * cells x 4 directions), so every world that generated before is drawn the same.
   */
  placeAgent(i?: number, j?: number, randDir = true): void {
    const ci = i ?? this.randInt(0, this.layout.numCols);
    const cj = j ?? this.randInt(0, this.layout.numRows);
    const room = this.layout.room(ci, cj);
    const world = this.world;
    for (let draws = 0; ; draws++) {
      if (draws >= MAX_AGENT_DRAWS) throw new RejectSampling(`no cell of room (${ci}, ${cj}) lets the agent face empty floor or a wall`);
      world.agentX = -1;
      world.agentY = -1;
      const [x, y] = this.placeObj(null, room.top, room.size);
      world.agentX = x;
      world.agentY = y;
      if (randDir) world.agentDir = this.randInt(0, 4) as Direction;
      const front = world.grid.get(x + (DIR_DX[world.agentDir] as number), y + (DIR_DY[world.agentDir] as number));
      if (front === null || front.type === 'wall') return;
    }
  }

  /**
   * Random objects in the given room (or random rooms); with `allUnique`, no (kind, colour) pair
   * repeats one already in the level (MiniGrid `add_distractors`).
   */
  addDistractors(i: number | undefined, j: number | undefined, count: number, allUnique = true): WorldObj[] {
    const taken = new Set<string>();
    if (allUnique) for (const row of this.layout.rooms) for (const room of row) for (const o of room.objs) taken.add(`${o.type}/${o.color}`);
    const added: WorldObj[] = [];
    while (added.length < count) {
      const color = this.randElem(this.colors);
      const kind = this.randElem(PICKABLE_TYPES);
      const key = allUnique ? `${kind}/${color}` : '';
      if (allUnique && taken.has(key)) continue;
      const ri = i ?? this.randInt(0, this.layout.numCols);
      const rj = j ?? this.randInt(0, this.layout.numRows);
      const [obj] = this.addObject(ri, rj, kind, color);
      if (allUnique) taken.add(key);
      added.push(obj);
    }
    return added;
  }

  /** Adds unlocked doors until every room is reachable from the agent's room (MiniGrid `connect_all`). */
  connectAll(doorColors: readonly Color[] = this.colors, maxIters = 5000): WorldObj[] {
    const { layout } = this;
    const start = layout.roomAt(this.world.agentX, this.world.agentY);
    const added: WorldObj[] = [];
    const reachCount = (): number => {
      const seen = new Set<Room>();
      const stack: Room[] = [start];
      while (stack.length > 0) {
        const room = stack.pop() as Room;
        if (seen.has(room)) continue;
        seen.add(room);
        for (let k = 0; k < 4; k++) if (room.doors[k]) stack.push(room.neighbors[k] as Room);
      }
      return seen.size;
    };
    for (let iter = 0; ; iter++) {
      if (iter > maxIters) throw new RejectSampling('connectAll failed');
      if (reachCount() === layout.numRows * layout.numCols) return added;
      const i = this.randInt(0, layout.numCols);
      const j = this.randInt(0, layout.numRows);
      const k = this.randInt(0, 4);
      const room = layout.room(i, j);
      if (room.doorPos[k] === null || room.doors[k] !== null) continue;
      const neighbor = room.neighbors[k] as Room;
      if (room.locked || neighbor.locked) continue;
      const [door] = this.addDoor(i, j, k, this.randElem(doorColors), false);
      added.push(door);
    }
  }

  /**
   * Rejects the attempt unless every object can be reached without moving another (BabyAI
   * `check_objs_reachable`); with `raise` false, answers instead.
   */
  checkObjsReachable(raise = true): boolean {
    const grid = this.world.grid;
    const seen = new Uint8Array(grid.width * grid.height);
    const stack: number[] = [this.world.agentX, this.world.agentY];
    while (stack.length > 0) {
      const y = stack.pop() as number;
      const x = stack.pop() as number;
      if (!grid.inBounds(x, y) || seen[y * grid.width + x] === 1) continue;
      seen[y * grid.width + x] = 1;
      const cell = grid.get(x, y);
      if (cell !== null && cell.type !== 'door') continue;
      stack.push(x + 1, y, x - 1, y, x, y + 1, x, y - 1);
    }
    for (let k = 0; k < grid.cells.length; k++) {
      const cell = grid.cells[k] ?? null;
      if (cell === null || cell.type === 'wall') continue;
      if (seen[k] === 0) {
        if (!raise) return false;
        throw new RejectSampling(`unreachable object at (${k % grid.width}, ${Math.floor(k / grid.width)})`);
      }
    }
    return true;
  }

  /** Opens every door of the level. */
  openAllDoors(): void {
    for (const row of this.layout.rooms) for (const room of row) for (const d of room.doors) if (d && d !== true) d.isOpen = true;
  }
}
