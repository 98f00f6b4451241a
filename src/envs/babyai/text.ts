/**
 * The text face of a BabyAI state, as AgentGym's BabyAI server shows it (`postprocess_obs`): the
 * visible objects relative to the agent, what lies straight ahead, what is carried, and the table
 * of text actions available now, each with the primitive plan it stands for (or, when it cannot
 * be done, the error to answer with).
 *
 * Objects are named `<colour> <type>` (doors `<colour> <state> door`) and numbered per name by
 * distance from the agent, 1-based; the same numbers are used in the descriptions and actions.
 */
import type { PrimitiveAction } from './constants.js';
import { Act, VIEW_SIZE } from './constants.js';
import { Planner } from './planner.js';
import { EgoView } from './view.js';
import type { GridWorld } from './world.js';
import type { WorldObj } from './world-object.js';
import { canOverlap, doorState } from './world-object.js';

/** One object the agent can see. */
export interface SeenObject {
  readonly obj: WorldObj;
  /** e.g. `red ball`, `grey closed door`. */
  readonly name: string;
  /** 1-based rank among visible objects of the same name, nearest first. */
  readonly number: number;
  readonly x: number;
  readonly y: number;
  /** Steps ahead of the agent. */
  readonly ahead: number;
  /** Steps to the agent's right (negative: left). */
  readonly right: number;
}

/** What the agent perceives now and can do. */
export interface TextState {
  /** Scene description (objects, walls, carried object). */
  readonly description: string;
  readonly objects: readonly SeenObject[];
  /** Available text action -> primitive plan (empty plan for `check available actions`). */
  readonly plans: ReadonlyMap<string, readonly PrimitiveAction[]>;
  /** The available text actions in listing order (the keys of `plans`). */
  readonly actions: readonly string[];
  /**
   * Why a known action is impossible now (e.g. "... as there is no path leading to it."), or
   * undefined for an available or unknown action. Built on demand: most turns never ask.
   */
  explain(action: string): string | undefined;
}

/** Text action that lists the available actions (costs a turn, no primitive step). */
export const CHECK_ACTIONS = 'check available actions';

/**
 * The name an object goes by in observations and actions.
 * @example objectName(makeDoor('red')) // 'red closed door'
 */
export function objectName(obj: WorldObj): string {
  return obj.type === 'door' ? `${obj.color} ${doorState(obj)} door` : `${obj.color} ${obj.type}`;
}

function where(ahead: number, right: number): string {
  if (right === 0) return `right in front of you ${ahead} steps away.`;
  return `${ahead} steps in front of you and ${Math.abs(right)} steps to your ${right > 0 ? 'right' : 'left'}.`;
}

/** Why an action is impossible; `Blocked.*` values index {@link BLOCKED_KEY} and {@link blockedMessage}. */
const Blocked = {
  moveForward: 0,
  dropNothing: 1,
  dropOccupied: 2,
  toggleNothing: 3,
  pickupNoPath: 4,
  goThroughNoPath: 5,
  goThroughClosed: 6,
  toggleThroughNoKey: 7,
  toggleThroughWrongKey: 8,
  toggleThroughNoPath: 9,
  goToNoPath: 10,
} as const;
type Blocked = (typeof Blocked)[keyof typeof Blocked];

/** The action text of a blocked record: a fixed action, or a prefix followed by the object's label. */
const BLOCKED_KEY: readonly string[] = ['move forward', 'drop', 'drop', 'toggle', 'pickup', 'go through', 'go through', 'toggle and go through', 'toggle and go through', 'toggle and go through', 'go to'];
const FIRST_PER_OBJECT = Blocked.pickupNoPath;

function blockedMessage(kind: Blocked, label: string, door: string): string {
  switch (kind) {
    case Blocked.moveForward:
      return "There is a barrier in front of you, you can't move forward.";
    case Blocked.dropNothing:
      return 'You cannot drop anything, as you are not carrying anything.';
    case Blocked.dropOccupied:
      return 'You cannot drop the object, as there is already something in front of you.';
    case Blocked.toggleNothing:
      return 'There is nothing right in front of you that you can toggle.';
    case Blocked.pickupNoPath:
      return `You cannot pick up ${label}, as there is no path leading to it.`;
    case Blocked.goThroughNoPath:
      return `You cannot go through ${label}, as there is no path leading to it.`;
    case Blocked.goThroughClosed:
      return `You cannot go through ${label}, as it is ${door}. You should toggle it first.`;
    case Blocked.toggleThroughNoKey:
      return `You cannot toggle and go through ${label}, as you are not carrying a key.`;
    case Blocked.toggleThroughWrongKey:
      return `You cannot toggle and go through ${label}, as the colour of the key you are carrying does not match the colour of the door.`;
    case Blocked.toggleThroughNoPath:
      return `You cannot toggle and go through ${label}, as there is no path leading to it.`;
    default:
      return `You cannot go to ${label}, as there is no path leading to it.`;
  }
}

/**
 * One observation's text state. The impossible actions are kept as (kind, object) pairs and put
 * into words only when asked: each step used to build a dozen error sentences that nobody read,
 * and with thousands of live episodes those strings survived to the next turn and cost GC time.
 */
class RenderedState implements TextState {
  private cachedActions: string[] | null = null;

  constructor(
    readonly description: string,
    readonly objects: readonly SeenObject[],
    readonly plans: ReadonlyMap<string, readonly PrimitiveAction[]>,
    /** Pairs (kind, object index or -1), flattened. */
    private readonly blocked: readonly number[],
    /** The state word of each door object at observation time (doors change state later). */
    private readonly doorStates: readonly string[],
  ) {}

  get actions(): readonly string[] {
    this.cachedActions ??= [...this.plans.keys()];
    return this.cachedActions;
  }

  explain(action: string): string | undefined {
    if (this.plans.has(action)) return undefined;
    for (let r = 0; r < this.blocked.length; r += 2) {
      const kind = this.blocked[r] as Blocked;
      const index = this.blocked[r + 1] as number;
      const prefix = BLOCKED_KEY[kind] as string;
      if (kind < FIRST_PER_OBJECT) {
        if (action === prefix) return blockedMessage(kind, '', '');
        continue;
      }
      const o = this.objects[index] as SeenObject;
      const label = `${o.name} ${o.number}`;
      if (action === `${prefix} ${label}`) return blockedMessage(kind, label, this.doorStates[index] ?? '');
    }
    return undefined;
  }
}

/**
 * Scratch buffers shared by every renderer of this thread (one view; one planner per grid size).
 * Safe because `observe` and `plans` run to completion without yielding and copy out all they
 * return. Why: with one set per environment, 10,000 live BabyAI instances held 80,000 small typed
 * arrays; the collector's bookkeeping of them was a large part of an environment worker's time.
 */
const sharedView = new EgoView();
const plannersBySize = new Map<number, Planner>();

function plannerFor(world: GridWorld): Planner {
  const key = world.grid.width * 65536 + world.grid.height;
  let planner = plannersBySize.get(key);
  if (planner === undefined) {
    planner = new Planner();
    plannersBySize.set(key, planner);
  }
  return planner;
}

/**
 * Turns a world into text and an action table (stateless: its scratch buffers are per thread).
 * @example
 * const text = new TextRenderer();
 * const state = text.observe(world);
 * state.plans.has('go to red ball 1');
 */
export class TextRenderer {
  private readonly view = sharedView;

  /** Describes the world and plans every available action. */
  observe(world: GridWorld): TextState {
    const { objects, barrier } = this.scan(world);
    let description = 'You see no objects.';
    if (objects.length > 0) {
      description = 'In front of you in this room, you can see several objects:';
      for (const o of objects) description += ` There is a ${o.name} ${o.number} ${where(o.ahead, o.right)}`;
    }
    description += ' The room has walls around you.';
    if (barrier !== null) description += ` You are facing a ${barrier.kind} ${barrier.ahead} steps away.`;
    description += world.carrying === null ? ' You are not carrying anything.' : ` You are carrying a ${world.carrying.color} ${world.carrying.type}.`;

    const planner = plannerFor(world);
    planner.search(world, this.view);
    const blocked: number[] = [];
    const plans = this.planActions(world, planner, objects, blocked);
    const doorStates = objects.map((o) => (o.obj.type === 'door' ? doorState(o.obj) : ''));
    return new RenderedState(description, objects, plans, blocked, doorStates);
  }

  /**
   * The available actions and their plans only (what {@link TextRenderer.observe} lists, without
   * the description): for searches that never show text.
   */
  plans(world: GridWorld): ReadonlyMap<string, readonly PrimitiveAction[]> {
    const { objects } = this.scan(world);
    const planner = plannerFor(world);
    planner.search(world, this.view);
    return this.planActions(world, planner, objects, null);
  }

  /** Visible objects, numbered per name nearest first, and the nearest wall or box straight ahead. */
  private scan(world: GridWorld): { objects: SeenObject[]; barrier: { kind: string; ahead: number } | null } {
    const view = this.view;
    view.compute(world);
    const seen: { -readonly [K in keyof SeenObject]: SeenObject[K] }[] = [];
    let barrier: { kind: string; ahead: number } | null = null;
    const half = VIEW_SIZE >> 1;
    // Scan far row to near row, left to right (AgentGym's order); stable sort by distance keeps it for ties.
    for (let j = 0; j < VIEW_SIZE; j++) {
      for (let i = 0; i < VIEW_SIZE; i++) {
        const k = view.index(i, j);
        const cell = view.cells[k] ?? null;
        if (view.visible[k] === 0 || cell === null) continue;
        const ahead = view.forwardOf(j);
        const right = view.sideOf(i);
        if (ahead === 0 && right === 0) continue;
        if (i === half && (cell.type === 'wall' || cell.type === 'box') && (barrier === null || ahead < barrier.ahead)) {
          barrier = { kind: cell.type, ahead };
        }
        if (cell.type === 'wall') continue;
        seen.push({ obj: cell, name: objectName(cell), number: 0, x: view.absX[k] as number, y: view.absY[k] as number, ahead, right });
      }
    }
    seen.sort((a, b) => a.ahead + Math.abs(a.right) - (b.ahead + Math.abs(b.right)));
    // Number per name in distance order (a handful of objects: a scan beats a Map).
    for (let a = 0; a < seen.length; a++) {
      const o = seen[a] as (typeof seen)[number];
      let n = 1;
      for (let b = 0; b < a; b++) if ((seen[b] as SeenObject).name === o.name) n++;
      o.number = n;
    }
    return { objects: seen, barrier };
  }

  /** Plans every available action; records the impossible ones in `blocked` (when given) as (kind, object) pairs. */
  private planActions(world: GridWorld, planner: Planner, objects: readonly SeenObject[], blocked: number[] | null): Map<string, PrimitiveAction[]> {
    const plans = new Map<string, PrimitiveAction[]>();
    const block = (kind: Blocked, index: number) => blocked?.push(kind, index);
    plans.set('turn left', [Act.left]);
    plans.set('turn right', [Act.right]);
    const front = world.frontCell();
    const frontInside = world.grid.inBounds(world.frontX, world.frontY);
    if (frontInside && canOverlap(front)) plans.set('move forward', [Act.forward]);
    else block(Blocked.moveForward, -1);

    const carrying = world.carrying;
    if (carrying === null) {
      block(Blocked.dropNothing, -1);
      for (let i = 0; i < objects.length; i++) {
        const o = objects[i] as SeenObject;
        if (o.obj.type === 'door') continue;
        const plan = planner.planToFace(o.x, o.y, Act.pickup);
        if (plan === null) block(Blocked.pickupNoPath, i);
        else plans.set(`pickup ${o.name} ${o.number}`, plan);
      }
    } else if (frontInside && front === null) {
      plans.set('drop', [Act.drop]);
    } else {
      block(Blocked.dropOccupied, -1);
    }

    for (let i = 0; i < objects.length; i++) {
      const o = objects[i] as SeenObject;
      const door = o.obj;
      if (door.type !== 'door') continue;
      if (door.isOpen) {
        const plan = planner.planToStand(o.x, o.y);
        if (plan === null) block(Blocked.goThroughNoPath, i);
        else plans.set(`go through ${o.name} ${o.number}`, plan);
        continue;
      }
      block(Blocked.goThroughClosed, i);
      if (door.isLocked && (carrying === null || carrying.type !== 'key')) {
        block(Blocked.toggleThroughNoKey, i);
        continue;
      }
      if (door.isLocked && carrying !== null && carrying.color !== door.color) {
        block(Blocked.toggleThroughWrongKey, i);
        continue;
      }
      const plan = planner.planToFace(o.x, o.y, Act.toggle, Act.forward);
      if (plan === null) {
        block(Blocked.toggleThroughNoPath, i);
        continue;
      }
      plans.set(`toggle and go through ${o.name} ${o.number}`, plan);
      if (plan.length === 2) plans.set('toggle', [Act.toggle]);
    }

    for (let i = 0; i < objects.length; i++) {
      const o = objects[i] as SeenObject;
      const plan = planner.planToFace(o.x, o.y);
      if (plan === null) block(Blocked.goToNoPath, i);
      else plans.set(`go to ${o.name} ${o.number}`, plan);
    }
    // Beyond AgentGym (which offers `toggle` only for a closed door it can open): an open door in
    // front can be closed and a box in front opened, so that every BabyAI level stays solvable
    // (re-opening a door an instruction names; KeyInBox's key is inside a box).
    if (front !== null && ((front.type === 'door' && front.isOpen) || front.type === 'box')) plans.set('toggle', [Act.toggle]);
    plans.set(CHECK_ACTIONS, []);
    if (!plans.has('toggle')) block(Blocked.toggleNothing, -1);
    return plans;
  }
}

/**
 * AgentGym's action-list line.
 * @example formatActionList(['turn left']) // 'Available actions: ["turn left"]'
 */
export function formatActionList(actions: readonly string[]): string {
  let out = 'Available actions: [';
  for (let i = 0; i < actions.length; i++) out += i === 0 ? `"${actions[i]}"` : `, "${actions[i]}"`;
  return `${out}]`;
}
