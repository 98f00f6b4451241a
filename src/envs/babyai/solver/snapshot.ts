/**
 * Save, restore and fingerprint the true state of one BabyAI episode in place, for searches over
 * text actions. Objects keep their identity (verifiers track objects by identity), so a snapshot
 * holds only what changes: agent pose, carried object, step count, where each movable object
 * lies, door flags and the verifier's progress. Walls never change and doors never move; object
 * records change only in a door's open/locked flags.
 */
import type { Direction } from '../constants.js';
import type { Instruction, VerifierState, VerifyStatus } from '../instructions.js';
import type { GridWorld } from '../world.js';
import type { WorldObj } from '../world-object.js';

/** The mutable part of an episode at one moment (about 100 bytes). */
export interface EpisodeSnapshot {
  readonly x: number;
  readonly y: number;
  readonly dir: Direction;
  readonly carrying: WorldObj | null;
  readonly stepCount: number;
  /** [movable objects] flat cell index of each key/ball/box, -1 when carried or gone (an opened box). */
  readonly positions: Int32Array;
  /** [doors] 0 closed, 1 open, 2 locked. */
  readonly doors: Uint8Array;
  readonly verifier: VerifierState;
}

const STATUS_CODE: Record<VerifyStatus, number> = { continue: 1, success: 2, failure: 3 };

/**
 * Snapshots and fingerprints for one episode (world + instruction), numbering its objects once.
 * @example
 * const states = new EpisodeStates(world, instruction);
 * const root = states.save();
 * world.step(Act.forward);
 * states.restore(root); // the agent is back
 */
export class EpisodeStates {
  /** Every door of the level. */
  private readonly doors: WorldObj[] = [];
  /** Keys, balls and boxes, box contents included. */
  private readonly movables: WorldObj[] = [];
  /** Index of each movable in {@link movables}. */
  private readonly movableIndex = new Map<WorldObj, number>();
  /** Flat indices of the cells that are not walls (the only cells that ever change). */
  private readonly open: Int32Array;
  private readonly positions: Int32Array;
  private h1 = 0;
  private h2 = 0;

  constructor(
    readonly world: GridWorld,
    readonly instruction: Instruction,
  ) {
    const add = (o: WorldObj | null): void => {
      if (o === null || o.type === 'wall' || o.type === 'door' || this.movableIndex.has(o)) return;
      this.movableIndex.set(o, this.movables.length);
      this.movables.push(o);
      add(o.contains);
    };
    const open: number[] = [];
    world.grid.cells.forEach((cell, c) => {
      if (cell === null || cell.type !== 'wall') open.push(c);
      if (cell?.type === 'door') this.doors.push(cell);
      add(cell ?? null);
    });
    add(world.carrying);
    this.open = Int32Array.from(open);
    this.positions = new Int32Array(this.movables.length);
  }

  /** The current state. */
  save(): EpisodeSnapshot {
    const w = this.world;
    const doors = new Uint8Array(this.doors.length);
    for (let k = 0; k < doors.length; k++) {
      const d = this.doors[k] as WorldObj;
      doors[k] = d.isLocked ? 2 : d.isOpen ? 1 : 0;
    }
    return { x: w.agentX, y: w.agentY, dir: w.agentDir, carrying: w.carrying, stepCount: w.stepCount, positions: this.locate().slice(), doors, verifier: this.instruction.saveVerifier() };
  }

  /** Puts the world and verifier back as they were at `snap`. */
  restore(snap: EpisodeSnapshot): void {
    const w = this.world;
    w.agentX = snap.x;
    w.agentY = snap.y;
    w.agentDir = snap.dir;
    w.carrying = snap.carrying;
    w.stepCount = snap.stepCount;
    const cells = w.grid.cells;
    for (const c of this.open) {
      const cell = cells[c];
      if (cell != null && cell.type !== 'door') cells[c] = null;
    }
    for (let k = 0; k < this.movables.length; k++) {
      const at = snap.positions[k] as number;
      if (at >= 0) cells[at] = this.movables[k] as WorldObj;
    }
    for (let k = 0; k < this.doors.length; k++) {
      const d = this.doors[k] as WorldObj;
      d.isLocked = snap.doors[k] === 2;
      d.isOpen = snap.doors[k] === 1;
    }
    this.instruction.loadVerifier(snap.verifier);
  }

  /**
   * Fingerprint of the current state: a 52-bit hash of everything {@link save} keeps except the
   * step count (states equal up to primitive steps spent have the same futures while the budget
   * lasts). Two 26-bit FNV-style lanes; a collision among the ~1e5 states of one search has
   * odds below 1e-5.
   */
  key(): number {
    const w = this.world;
    this.h1 = 0x811c9dc5;
    this.h2 = 0x01000193;
    this.mix(w.agentX);
    this.mix(w.agentY);
    this.mix(w.agentDir);
    this.mix(w.carrying === null ? -1 : (this.movableIndex.get(w.carrying) ?? -2));
    const positions = this.locate();
    for (const p of positions) this.mix(p);
    for (const d of this.doors) this.mix(d.isLocked ? 2 : d.isOpen ? 1 : 0);
    this.mixVerifier(this.instruction.saveVerifier());
    return (this.h1 & 0x3ffffff) * 0x4000000 + (this.h2 & 0x3ffffff);
  }

  /** Fills {@link positions} from the grid. */
  private locate(): Int32Array {
    const positions = this.positions;
    positions.fill(-1);
    const cells = this.world.grid.cells;
    for (const c of this.open) {
      const cell = cells[c];
      if (cell == null || cell.type === 'door') continue;
      const k = this.movableIndex.get(cell);
      if (k !== undefined) positions[k] = c;
    }
    return positions;
  }

  private mix(v: number): void {
    this.h1 = Math.imul(this.h1 ^ (v & 0xffff), 0x01000193);
    this.h1 = Math.imul(this.h1 ^ (v >>> 16), 0x01000193);
    this.h2 = Math.imul(this.h2 ^ v, 0x5bd1e995);
    this.h2 ^= this.h2 >>> 15;
  }

  private mixVerifier(state: VerifierState): void {
    if ('aStatus' in state) {
      this.mix(STATUS_CODE[state.aStatus] * 4 + STATUS_CODE[state.bStatus]);
      this.mixVerifier(state.a);
      this.mixVerifier(state.b);
      return;
    }
    this.mix(state.pre === null ? -1 : (this.movableIndex.get(state.pre) ?? -2));
    for (const poss of state.poss) {
      this.mix(poss.length);
      for (const [x, y] of poss) this.mix(x * 1024 + y);
    }
  }
}
