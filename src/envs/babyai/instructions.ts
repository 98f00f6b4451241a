/**
 * BabyAI instructions and their verifiers (`minigrid/envs/babyai/core/verifier.py` semantics):
 * object descriptions that match by colour/type/location with "the" (one match) or "a" (several),
 * and action instructions `go to`, `pick up`, `open`, `put next to`. Sequencing (`and`, `then`,
 * `after you`) lives in `sequence.ts`.
 */
import type { Color, DescribableType, LocName, PrimitiveAction } from './constants.js';
import { Act, DIR_DX, DIR_DY } from './constants.js';
import { RoomLayout } from './room-layout.js';
import type { GridWorld } from './world.js';
import type { WorldObj } from './world-object.js';

/** Outcome of checking an instruction after a primitive step. */
export type VerifyStatus = 'success' | 'failure' | 'continue';

/**
 * A description of a set of objects ("the red ball", "a key", "a door on your left").
 * @example
 * const desc = new ObjDesc('ball', 'red');
 * desc.surface(world); // 'the red ball' when exactly one red ball exists
 */
export class ObjDesc {
  /** Objects matching the description, tracked by identity. */
  objSet: WorldObj[] = [];
  /** Positions of those objects (refreshed when objects move). */
  objPoss: [number, number][] = [];

  constructor(
    readonly type: DescribableType | null,
    readonly color: Color | null = null,
    readonly loc: LocName | null = null,
    /**
     * Walls match a description without a type, as in Minigrid ("pick up a grey object" then
     * counts every wall, so it says "a"); turnwise's generator leaves walls out.
     */
    readonly includeWalls = false,
  ) {}

  /** Natural-language form; also resolves the matching set. */
  surface(world: GridWorld): string {
    this.findMatching(world);
    if (this.objSet.length === 0) throw new RangeError(`ObjDesc.surface: no object matches ${this.color ?? ''} ${this.type ?? 'object'}`);
    let s = this.type ?? 'object';
    if (this.color !== null) s = `${this.color} ${s}`;
    if (this.loc === 'front') s += ' in front of you';
    else if (this.loc === 'behind') s += ' behind you';
    else if (this.loc !== null) s += ` on your ${this.loc}`;
    return `${this.objSet.length > 1 ? 'a' : 'the'} ${s}`;
  }

  /**
   * Resolves matching objects. With `useLocation` false only the already tracked objects are
   * re-located (a ball "on your right" stays that ball after the agent turns).
   */
  findMatching(world: GridWorld, useLocation = true): void {
    const grid = world.grid;
    const tracked = this.objSet;
    if (useLocation) this.objSet = [];
    this.objPoss = [];
    const startRoom = world.layout?.roomAt(world.agentX, world.agentY) ?? null;
    const d1x = DIR_DX[world.agentDir] as number;
    const d1y = DIR_DY[world.agentDir] as number;
    // MiniGrid iterates columns outermost; keep that order so "first match" agrees.
    for (let x = 0; x < grid.width; x++) {
      for (let y = 0; y < grid.height; y++) {
        const cell = grid.get(x, y);
        if (cell === null || (cell.type === 'wall' && !this.includeWalls)) continue;
        if (!useLocation && !tracked.includes(cell)) continue;
        if (this.type !== null && cell.type !== this.type) continue;
        if (this.color !== null && cell.color !== this.color) continue;
        if (useLocation && this.loc !== null) {
          if (startRoom !== null && !RoomLayout.inside(startRoom, x, y)) continue;
          const vx = x - world.agentX;
          const vy = y - world.agentY;
          // (d1, d2) oriented basis: d2 = (-d1y, d1x) points to the agent's right.
          const ahead = vx * d1x + vy * d1y;
          const right = vx * -d1y + vy * d1x;
          const ok = this.loc === 'left' ? right < 0 : this.loc === 'right' ? right > 0 : this.loc === 'front' ? ahead > 0 : ahead < 0;
          if (!ok) continue;
        }
        if (useLocation) this.objSet.push(cell);
        this.objPoss.push([x, y]);
      }
    }
  }
}

/**
 * An instruction the agent must carry out; verified after every primitive step.
 * Implementations: {@link GoToInstr}, {@link PickupInstr}, {@link OpenInstr}.
 */
export interface Instruction {
  readonly kind: 'goTo' | 'pickup' | 'open' | 'putNext' | 'and' | 'before' | 'after';
  /** Text of the mission ("go to the red ball"). */
  surface(world: GridWorld): string;
  /** Resolves object sets at the start of the episode. */
  resetVerifier(world: GridWorld): void;
  /** Checks the instruction after primitive `action` was applied. */
  verify(world: GridWorld, action: PrimitiveAction): VerifyStatus;
  /** Called after a drop moved an object, so tracked positions follow it. */
  updateObjsPoss(world: GridWorld): void;
  /** Navigations the instruction needs at most; sets the primitive step budget (BabyAI `num_navs_needed`). */
  readonly navs: number;
  /**
   * The action instructions still to carry out, in an order the verifier accepts (for bots:
   * `before` lists its first part first, `after` its second part first, `and` what is not done yet).
   */
  pending(): ActionInstr[];
  /** The verifier's progress (statuses, last carried object, tracked positions), for search and undo. */
  saveVerifier(): VerifierState;
  /** Puts back progress taken by {@link Instruction.saveVerifier} on this same instruction. */
  loadVerifier(state: VerifierState): void;
}

/**
 * A verifier's progress, as plain data: a leaf keeps the object carried before the last step and
 * the tracked positions of its descriptions; a combinator keeps both parts' statuses and states.
 * Arrays are shared, never mutated: verifiers replace `objPoss` instead of editing it.
 */
export type VerifierState =
  | { readonly pre: WorldObj | null; readonly poss: readonly (readonly [number, number][])[] }
  | { readonly aStatus: VerifyStatus; readonly bStatus: VerifyStatus; readonly a: VerifierState; readonly b: VerifierState };

/** Leaf-verifier progress from its descriptions' tracked positions. */
function leafState(pre: WorldObj | null, descs: readonly ObjDesc[]): VerifierState {
  return { pre, poss: descs.map((d) => d.objPoss) };
}

/** Writes tracked positions back into descriptions; returns the carried-before object. */
function loadLeaf(state: VerifierState, descs: readonly ObjDesc[]): WorldObj | null {
  if (!('poss' in state)) throw new TypeError('loadVerifier: state of a combined instruction given to a single action');
  descs.forEach((d, k) => {
    d.objPoss = state.poss[k] as [number, number][];
  });
  return state.pre;
}

/** A single-action instruction (a leaf of the instruction tree). */
export type ActionInstr = GoToInstr | PickupInstr | OpenInstr | PutNextInstr;

/**
 * "go to <desc>": success when a matching object is in the cell in front of the agent.
 * @example new GoToInstr(new ObjDesc('ball', 'red'))
 */
export class GoToInstr implements Instruction {
  readonly kind = 'goTo' as const;
  readonly navs = 1;
  constructor(readonly desc: ObjDesc) {}
  surface(world: GridWorld): string {
    return `go to ${this.desc.surface(world)}`;
  }
  resetVerifier(world: GridWorld): void {
    this.desc.findMatching(world);
  }
  verify(world: GridWorld): VerifyStatus {
    const fx = world.frontX;
    const fy = world.frontY;
    for (const [x, y] of this.desc.objPoss) if (x === fx && y === fy) return 'success';
    return 'continue';
  }
  updateObjsPoss(world: GridWorld): void {
    this.desc.findMatching(world, false);
  }
  pending(): ActionInstr[] {
    return [this];
  }
  saveVerifier(): VerifierState {
    return leafState(null, [this.desc]);
  }
  loadVerifier(state: VerifierState): void {
    loadLeaf(state, [this.desc]);
  }
}

/**
 * "pick up <desc>": success when a pickup makes the agent carry a matching object. `strict`
 * (the Debug levels) fails the episode when a wrong object is picked up.
 * @example new PickupInstr(new ObjDesc('key', null), true)
 */
export class PickupInstr implements Instruction {
  readonly kind = 'pickup' as const;
  readonly navs = 1;
  private preCarrying: WorldObj | null = null;
  constructor(
    readonly desc: ObjDesc,
    readonly strict = false,
  ) {}
  surface(world: GridWorld): string {
    return `pick up ${this.desc.surface(world)}`;
  }
  resetVerifier(world: GridWorld): void {
    this.preCarrying = null;
    this.desc.findMatching(world);
  }
  verify(world: GridWorld, action: PrimitiveAction): VerifyStatus {
    const before = this.preCarrying;
    this.preCarrying = world.carrying;
    if (action !== Act.pickup) return 'continue';
    if (before === null && world.carrying !== null && this.desc.objSet.includes(world.carrying)) return 'success';
    if (this.strict && world.carrying !== null) return 'failure';
    return 'continue';
  }
  updateObjsPoss(world: GridWorld): void {
    this.desc.findMatching(world, false);
  }
  pending(): ActionInstr[] {
    return [this];
  }
  saveVerifier(): VerifierState {
    return leafState(this.preCarrying, [this.desc]);
  }
  loadVerifier(state: VerifierState): void {
    this.preCarrying = loadLeaf(state, [this.desc]);
  }
}

/**
 * "open <door desc>": success when a toggle leaves a matching door in front of the agent open.
 * @example new OpenInstr(new ObjDesc('door', 'red'))
 */
export class OpenInstr implements Instruction {
  readonly kind = 'open' as const;
  readonly navs = 1;
  constructor(
    readonly desc: ObjDesc,
    readonly strict = false,
  ) {}
  surface(world: GridWorld): string {
    return `open ${this.desc.surface(world)}`;
  }
  resetVerifier(world: GridWorld): void {
    this.desc.findMatching(world);
  }
  verify(world: GridWorld, action: PrimitiveAction): VerifyStatus {
    if (action !== Act.toggle) return 'continue';
    const front = world.frontCell();
    if (front?.isOpen && this.desc.objSet.includes(front)) return 'success';
    if (this.strict && front !== null && front.type === 'door') return 'failure';
    return 'continue';
  }
  updateObjsPoss(world: GridWorld): void {
    this.desc.findMatching(world, false);
  }
  pending(): ActionInstr[] {
    return [this];
  }
  saveVerifier(): VerifierState {
    return leafState(null, [this.desc]);
  }
  loadVerifier(state: VerifierState): void {
    loadLeaf(state, [this.desc]);
  }
}

/** Whether two cells are 4-neighbours (BabyAI `pos_next_to`). */
function nextTo(ax: number, ay: number, bx: number, by: number): boolean {
  return Math.abs(ax - bx) + Math.abs(ay - by) === 1;
}

/**
 * "put <move> next to <fixed>": success when a drop leaves the object just carried (one of
 * `move`) next to a position of `fixed`. `strict` fails the episode on picking up while carrying.
 * @example new PutNextInstr(new ObjDesc('ball', 'red'), new ObjDesc('key', 'blue'))
 */
export class PutNextInstr implements Instruction {
  readonly kind = 'putNext' as const;
  readonly navs = 2;
  private preCarrying: WorldObj | null = null;
  constructor(
    readonly descMove: ObjDesc,
    readonly descFixed: ObjDesc,
    readonly strict = false,
  ) {}
  surface(world: GridWorld): string {
    return `put ${this.descMove.surface(world)} next to ${this.descFixed.surface(world)}`;
  }
  resetVerifier(world: GridWorld): void {
    this.preCarrying = null;
    this.descMove.findMatching(world);
    this.descFixed.findMatching(world);
  }
  /** Whether some `move` object already lies next to a `fixed` position (generation rejects that). */
  objsNext(world: GridWorld): boolean {
    for (const obj of this.descMove.objSet) {
      const at = world.grid.find(obj);
      if (at === null) continue;
      for (const [x, y] of this.descFixed.objPoss) if (nextTo(at.x, at.y, x, y)) return true;
    }
    return false;
  }
  verify(world: GridWorld, action: PrimitiveAction): VerifyStatus {
    const before = this.preCarrying;
    this.preCarrying = world.carrying;
    if (this.strict && action === Act.pickup && world.carrying !== null) return 'failure';
    if (action !== Act.drop || before === null || !this.descMove.objSet.includes(before)) return 'continue';
    // The dropped object lies in front of the agent.
    const ax = world.frontX;
    const ay = world.frontY;
    if (world.grid.get(ax, ay) !== before) return 'continue';
    for (const [x, y] of this.descFixed.objPoss) if (nextTo(ax, ay, x, y)) return 'success';
    return 'continue';
  }
  updateObjsPoss(world: GridWorld): void {
    this.descMove.findMatching(world, false);
    this.descFixed.findMatching(world, false);
  }
  pending(): ActionInstr[] {
    return [this];
  }
  saveVerifier(): VerifierState {
    return leafState(this.preCarrying, [this.descMove, this.descFixed]);
  }
  loadVerifier(state: VerifierState): void {
    this.preCarrying = loadLeaf(state, [this.descMove, this.descFixed]);
  }
}
