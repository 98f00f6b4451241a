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
  /** Known but impossible text action -> explanation. */
  readonly errors: ReadonlyMap<string, string>;
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

/**
 * Turns a world into text and an action table. Holds reusable buffers: one per environment.
 * @example
 * const text = new TextRenderer();
 * const state = text.observe(world);
 * state.plans.has('go to red ball 1');
 */
export class TextRenderer {
  private readonly view = new EgoView();
  private readonly planner = new Planner();

  /** Describes the world and plans every available action. */
  observe(world: GridWorld): TextState {
    const { objects, barrier } = this.scan(world);
    let description =
      objects.length === 0
        ? 'You see no objects.'
        : `In front of you in this room, you can see several objects: ${objects.map((o) => `There is a ${o.name} ${o.number} ${where(o.ahead, o.right)}`).join(' ')}`;
    description += ' The room has walls around you.';
    if (barrier !== null) description += ` You are facing a ${barrier.kind} ${barrier.ahead} steps away.`;
    description += world.carrying === null ? ' You are not carrying anything.' : ` You are carrying a ${world.carrying.color} ${world.carrying.type}.`;

    this.planner.search(world, this.view);
    const { plans, errors } = this.planActions(world, objects);
    return { description, objects, plans, errors };
  }

  /**
   * The available actions and their plans only (what {@link TextRenderer.observe} lists, without
   * the description): for searches that never show text.
   */
  plans(world: GridWorld): ReadonlyMap<string, readonly PrimitiveAction[]> {
    const { objects } = this.scan(world);
    this.planner.search(world, this.view);
    return this.planActions(world, objects).plans;
  }

  /** Visible objects, numbered per name nearest first, and the nearest wall or box straight ahead. */
  private scan(world: GridWorld): { objects: SeenObject[]; barrier: { kind: string; ahead: number } | null } {
    const view = this.view;
    view.compute(world);
    const seen: (SeenObject & { dist: number })[] = [];
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
        seen.push({ obj: cell, name: objectName(cell), number: 0, x: view.absX[k] as number, y: view.absY[k] as number, ahead, right, dist: ahead + Math.abs(right) });
      }
    }
    seen.sort((a, b) => a.dist - b.dist);
    const counts = new Map<string, number>();
    const objects: SeenObject[] = seen.map((o) => {
      const n = (counts.get(o.name) ?? 0) + 1;
      counts.set(o.name, n);
      return { obj: o.obj, name: o.name, number: n, x: o.x, y: o.y, ahead: o.ahead, right: o.right };
    });
    return { objects, barrier };
  }

  private planActions(world: GridWorld, objects: readonly SeenObject[]): { plans: Map<string, PrimitiveAction[]>; errors: Map<string, string> } {
    const planner = this.planner;
    const plans = new Map<string, PrimitiveAction[]>();
    const errors = new Map<string, string>();
    plans.set('turn left', [Act.left]);
    plans.set('turn right', [Act.right]);
    const front = world.frontCell();
    const frontInside = world.grid.inBounds(world.frontX, world.frontY);
    if (frontInside && canOverlap(front)) plans.set('move forward', [Act.forward]);
    else errors.set('move forward', "There is a barrier in front of you, you can't move forward.");

    const carrying = world.carrying;
    if (carrying === null) {
      errors.set('drop', 'You cannot drop anything, as you are not carrying anything.');
      for (const o of objects) {
        if (o.obj.type === 'door') continue;
        const key = `pickup ${o.name} ${o.number}`;
        const plan = planner.planToFace(o.x, o.y);
        if (plan === null) errors.set(key, `You cannot pick up ${o.name} ${o.number}, as there is no path leading to it.`);
        else plans.set(key, [...plan, Act.pickup]);
      }
    } else if (frontInside && front === null) {
      plans.set('drop', [Act.drop]);
    } else {
      errors.set('drop', 'You cannot drop the object, as there is already something in front of you.');
    }

    for (const o of objects) {
      const door = o.obj;
      if (door.type !== 'door') continue;
      const label = `${o.name} ${o.number}`;
      if (door.isOpen) {
        const plan = planner.planToStand(o.x, o.y);
        if (plan === null) errors.set(`go through ${label}`, `You cannot go through ${label}, as there is no path leading to it.`);
        else plans.set(`go through ${label}`, plan);
        continue;
      }
      errors.set(`go through ${label}`, `You cannot go through ${label}, as it is ${doorState(door)}. You should toggle it first.`);
      if (door.isLocked && (carrying === null || carrying.type !== 'key')) {
        errors.set(`toggle and go through ${label}`, `You cannot toggle and go through ${label}, as you are not carrying a key.`);
        continue;
      }
      if (door.isLocked && carrying !== null && carrying.color !== door.color) {
        errors.set(`toggle and go through ${label}`, `You cannot toggle and go through ${label}, as the colour of the key you are carrying does not match the colour of the door.`);
        continue;
      }
      const plan = planner.planToFace(o.x, o.y);
      if (plan === null) {
        errors.set(`toggle and go through ${label}`, `You cannot toggle and go through ${label}, as there is no path leading to it.`);
        continue;
      }
      plans.set(`toggle and go through ${label}`, [...plan, Act.toggle, Act.forward]);
      if (plan.length === 0) plans.set('toggle', [Act.toggle]);
    }

    for (const o of objects) {
      const key = `go to ${o.name} ${o.number}`;
      const plan = planner.planToFace(o.x, o.y);
      if (plan === null) errors.set(key, `You cannot go to ${o.name} ${o.number}, as there is no path leading to it.`);
      else plans.set(key, plan);
    }
    // Beyond AgentGym (which offers `toggle` only for a closed door it can open): an open door in
    // front can be closed and a box in front opened, so that every BabyAI level stays solvable
    // (re-opening a door an instruction names; KeyInBox's key is inside a box).
    if (front !== null && ((front.type === 'door' && front.isOpen) || front.type === 'box')) plans.set('toggle', [Act.toggle]);
    plans.set(CHECK_ACTIONS, []);
    if (!plans.has('toggle')) errors.set('toggle', 'There is nothing right in front of you that you can toggle.');
    return { plans, errors };
  }
}

/**
 * AgentGym's action-list line.
 * @example formatActionList(['turn left']) // 'Available actions: ["turn left"]'
 */
export function formatActionList(actions: readonly string[]): string {
  return `Available actions: [${actions.map((a) => `"${a}"`).join(', ')}]`;
}
