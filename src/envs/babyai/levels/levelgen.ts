/**
 * BabyAI's generic level generator (`minigrid/envs/babyai/core/levelgen.py` `LevelGen`): an
 * optional locked room with its key elsewhere, all rooms connected, random distractors, the agent
 * outside the locked room, and a random instruction from the grammar
 *
 *   instr  := action | action and action | seq
 *   seq    := (action | and) , then (action | and)  |  (action | and) after you (action | and)
 *   action := go to D | pick up D' | open D(door) | put D' next to D
 *
 * where D is an object description with optional colour and (when `locations`) location.
 * Used by GoToSeq, PickupLoc, Synth*, MiniBossLevel, BossLevel*.
 */
import type { Color, DescribableType } from '../constants.js';
import { DESCRIBABLE_TYPES, LOC_NAMES } from '../constants.js';
import type { Instruction } from '../instructions.js';
import { GoToInstr, ObjDesc, OpenInstr, PickupInstr, PutNextInstr } from '../instructions.js';
import type { LevelBuilder } from '../room-grid.js';
import type { Room } from '../room-layout.js';
import { RejectSampling } from '../room-grid.js';
import { RoomLayout } from '../room-layout.js';
import { AfterInstr, AndInstr, BeforeInstr } from '../sequence.js';
import type { LevelGenerator } from './level.js';

/** Action kinds of the grammar. */
export type ActionKind = 'goto' | 'pickup' | 'open' | 'putnext';
/** Top-level instruction kinds of the grammar. */
export type InstrKind = 'action' | 'and' | 'seq';

/** LevelGen parameters (BabyAI defaults in brackets). */
export interface LevelGenOptions {
  readonly roomSize?: number; // [8]
  readonly numRows?: number; // [3]
  readonly numCols?: number; // [3]
  readonly numDists?: number; // [18]
  readonly lockedRoomProb?: number; // [0.5]
  readonly locations?: boolean; // [true]
  readonly unblocking?: boolean; // [true]
  readonly implicitUnlock?: boolean; // [true]
  readonly actionKinds?: readonly ActionKind[]; // [all four]
  readonly instrKinds?: readonly InstrKind[]; // [all three]
}

const NOT_DOOR: readonly DescribableType[] = DESCRIBABLE_TYPES.filter((t) => t !== 'door');
const MAX_OBJ_TRIES = 100;

/**
 * A LevelGen level.
 * @example levelGen({ roomSize: 5, numRows: 2, numCols: 2, numDists: 4, actionKinds: ['goto'], lockedRoomProb: 0, locations: false, unblocking: false })
 */
export function levelGen(options: LevelGenOptions = {}): LevelGenerator {
  const o = {
    roomSize: 8,
    numRows: 3,
    numCols: 3,
    numDists: 18,
    lockedRoomProb: 0.5,
    locations: true,
    unblocking: true,
    implicitUnlock: true,
    actionKinds: ['goto', 'pickup', 'open', 'putnext'] as readonly ActionKind[],
    instrKinds: ['action', 'and', 'seq'] as readonly InstrKind[],
    ...options,
  };
  return {
    shape: { roomSize: o.roomSize, numRows: o.numRows, numCols: o.numCols },
    unblocking: o.unblocking,
    // Minigrid keeps `locked_room` on the level object: an attempt (or a reset) that adds no locked
    // room still filters descriptions against the last one added, which then matters.
    carriesState: !o.implicitUnlock && o.lockedRoomProb > 0,
    genMission(b) {
      let lockedRoom: Room | null = b.minigrid ? (b.carry.lockedRoom ?? null) : null;
      if (b.randFloat() < o.lockedRoomProb) {
        lockedRoom = addLockedRoom(b);
        if (b.minigrid) b.carry.lockedRoom = lockedRoom;
      }
      b.connectAll();
      b.addDistractors(undefined, undefined, o.numDists, false);
      for (;;) {
        b.placeAgent();
        if (b.layout.roomAt(b.world.agentX, b.world.agentY) !== lockedRoom) break;
      }
      if (!o.unblocking) b.checkObjsReachable();
      const gen = new InstrGen(b, o.locations, o.implicitUnlock, lockedRoom);
      return gen.randInstr(o.actionKinds, o.instrKinds);
    },
  };
}

/** A room behind a locked door, and its key in another room (BabyAI `add_locked_room`). */
function addLockedRoom(b: LevelBuilder): Room {
  const { layout } = b;
  let room: Room;
  let color: Color;
  for (;;) {
    const i = b.randInt(0, layout.numCols);
    const j = b.randInt(0, layout.numRows);
    const doorIdx = b.randInt(0, 4);
    room = layout.room(i, j);
    if (room.neighbors[doorIdx] === null) continue;
    const [door] = b.addDoor(i, j, doorIdx, undefined, true);
    color = door.color;
    break;
  }
  for (;;) {
    const i = b.randInt(0, layout.numCols);
    const j = b.randInt(0, layout.numRows);
    if (layout.room(i, j) === room) continue;
    b.addObject(i, j, 'key', color);
    return room;
  }
}

/** Draws random instructions over the objects of a built level. */
class InstrGen {
  constructor(
    private readonly b: LevelBuilder,
    private readonly locations: boolean,
    private readonly implicitUnlock: boolean,
    private readonly lockedRoom: Room | null,
  ) {}

  /** A description matching at least one object (outside the locked room unless implicit unlock). */
  randObj(types: readonly DescribableType[] = DESCRIBABLE_TYPES): ObjDesc {
    const b = this.b;
    for (let tries = 0; tries <= MAX_OBJ_TRIES; tries++) {
      const color = b.randElem<Color | null>([null, ...b.colors]);
      const type = b.randElem(types);
      const loc = this.locations && b.randBool() ? b.randElem(LOC_NAMES) : null;
      const desc = new ObjDesc(type, color, loc);
      desc.findMatching(b.world);
      if (desc.objSet.length === 0) continue;
      const locked = this.lockedRoom;
      if (!this.implicitUnlock && locked !== null && desc.objPoss.every(([x, y]) => RoomLayout.inside(locked, x, y))) continue;
      return desc;
    }
    throw new RejectSampling('failed to find suitable object');
  }

  randInstr(actionKinds: readonly ActionKind[], instrKinds: readonly InstrKind[]): Instruction {
    const b = this.b;
    const kind = b.randElem(instrKinds);
    if (kind === 'action') {
      const action = b.randElem(actionKinds);
      if (action === 'goto') return new GoToInstr(this.randObj());
      if (action === 'pickup') return new PickupInstr(this.randObj(NOT_DOOR));
      if (action === 'open') return new OpenInstr(this.randObj(['door']));
      return new PutNextInstr(this.randObj(NOT_DOOR), this.randObj());
    }
    if (kind === 'and') return new AndInstr(this.randInstr(actionKinds, ['action']), this.randInstr(actionKinds, ['action']));
    const a = this.randInstr(actionKinds, ['action', 'and']);
    const c = this.randInstr(actionKinds, ['action', 'and']);
    return b.randBool() ? new BeforeInstr(a, c, false, b.minigrid) : new AfterInstr(a, c, false, b.minigrid);
  }
}
