/**
 * The geometry of a BabyAI room grid (MiniGrid `RoomGrid`): rows x cols square rooms sharing
 * walls, their doors and neighbours. Kept apart from the placement helpers in `room-grid.ts` so the
 * world (`world.ts`) can know its rooms without importing level generation.
 */
import type { WorldObj } from './world-object.js';

/** One room: its outline rectangle, doors and neighbours in MiniGrid's order right, down, left, up. */
export interface Room {
  readonly top: readonly [number, number];
  readonly size: number;
  /** [4] door on each wall, `true` when the wall was removed, null when none. */
  readonly doors: (WorldObj | true | null)[];
  /** [4] position a door on each wall would take. */
  readonly doorPos: ([number, number] | null)[];
  /** [4] neighbouring room on each side. */
  readonly neighbors: (Room | null)[];
  locked: boolean;
  readonly objs: WorldObj[];
}

/**
 * A rows x cols arrangement of square rooms.
 * @example new RoomLayout(8, 1, 1).roomAt(3, 3) // the only room
 */
export class RoomLayout {
  /** [numRows][numCols] rooms. */
  readonly rooms: Room[][] = [];

  constructor(
    readonly roomSize: number,
    readonly numRows: number,
    readonly numCols: number,
  ) {
    for (let j = 0; j < numRows; j++) {
      const row: Room[] = [];
      for (let i = 0; i < numCols; i++) {
        row.push({
          top: [i * (roomSize - 1), j * (roomSize - 1)],
          size: roomSize,
          doors: [null, null, null, null],
          doorPos: [null, null, null, null],
          neighbors: [null, null, null, null],
          locked: false,
          objs: [],
        });
      }
      this.rooms.push(row);
    }
  }

  get width(): number {
    return (this.roomSize - 1) * this.numCols + 1;
  }

  get height(): number {
    return (this.roomSize - 1) * this.numRows + 1;
  }

  /** Room (column i, row j). */
  room(i: number, j: number): Room {
    const room = this.rooms[j]?.[i];
    if (room === undefined) throw new RangeError(`RoomLayout.room: no room (${i}, ${j}) in ${this.numCols}x${this.numRows}`);
    return room;
  }

  /** Room containing grid position (x, y) (shared walls belong to the right/lower room). */
  roomAt(x: number, y: number): Room {
    const i = Math.min(Math.floor(x / (this.roomSize - 1)), this.numCols - 1);
    const j = Math.min(Math.floor(y / (this.roomSize - 1)), this.numRows - 1);
    return this.room(i, j);
  }

  /** Whether (x, y) lies within the outline of `room`. */
  static inside(room: Room, x: number, y: number): boolean {
    return x >= room.top[0] && y >= room.top[1] && x < room.top[0] + room.size && y < room.top[1] + room.size;
  }
}
