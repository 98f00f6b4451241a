/**
 * AgentGym's BabyAI text (`BabyAI.postprocess_obs` in agentenv_babyai/environment.py), byte for
 * byte: the sentence describing the observation image, and the table of text actions (each with
 * its primitive plan) and of error messages for actions that cannot be done now, in AgentGym's
 * order and with its quirks:
 *
 * - objects are sorted by Manhattan distance (walls included, so they take part in the ordering),
 *   numbered per name in that order; sentences are joined with two spaces;
 * - "You are facing a wall|box N steps away" names the nearest wall or box straight ahead;
 *   "move forward" is offered unless that barrier is one step away (so facing a ball, key or
 *   closed door it is offered; the move then does nothing);
 * - pickup and go-to actions are numbered by the order in which a path was found, so "pickup red
 *   ball 1" can be the second red ball when the first cannot be reached;
 * - "drop" is offered unless a wall, box, ball or key is in front (a door does not stop it);
 * - "toggle" is offered only facing a closed door it could toggle and go through;
 * - a closed or locked door's "no path" message prints the whole door count table as a Python
 *   dict (`{'red closed door': 1}`).
 *
 * Pure: the image, the agent's pose and what it carries in; text and tables out.
 */
import type { Direction } from '../constants.js';
import { COLORS, DIR_DX, DIR_DY, VIEW_SIZE } from '../constants.js';
import type { WorldObj } from '../world-object.js';
import { PathFinder, type PathArea } from './find-path.js';
import { cellColor, cellState, cellType, IMAGE_CELLS, TYPE_INDEX } from './image.js';

/** AgentGym's text of one observation. */
export interface AgentGymText {
  /** Scene description (no goal line, no action list). */
  readonly description: string;
  /** Available text action -> primitive plan, in AgentGym's listing order. */
  readonly plans: ReadonlyMap<string, readonly number[]>;
  /** Known-but-impossible action -> AgentGym's error message. */
  readonly errors: ReadonlyMap<string, string>;
}

/** The action that lists the others (AgentGym answers it without a primitive step). */
export const AGENTGYM_CHECK_ACTIONS = 'check available actions';

interface SeenObject {
  readonly name: string;
  readonly x: number;
  readonly y: number;
  /** Manhattan distance from the agent. */
  readonly dis: number;
  readonly wall: boolean;
  readonly door: boolean;
  /** Wall, box, ball or key: the path search cannot enter it, a drop cannot land on it. */
  readonly blocks: boolean;
}

const STATE_NAMES = ['open', 'closed', 'locked'];
const TYPE_NAMES: Record<number, string> = { [TYPE_INDEX.wall]: 'wall', [TYPE_INDEX.door]: 'door', [TYPE_INDEX.key]: 'key', [TYPE_INDEX.ball]: 'ball', [TYPE_INDEX.box]: 'box' };
const HALF = VIEW_SIZE >> 1;

const finder = new PathFinder();

/** Python's `str()` of AgentGym's door count dict: `{'red closed door': 1, 'blue open door': 2}`. */
function pythonDict(counts: ReadonlyMap<string, number>): string {
  return `{${[...counts].map(([name, n]) => `'${name}': ${n}`).join(', ')}}`;
}

/**
 * AgentGym's text for an observation image.
 * @example const text = agentGymText(image, world.agentX, world.agentY, world.agentDir, world.carrying);
 */
export function agentGymText(image: Int32Array, ax: number, ay: number, dir: Direction, carrying: WorldObj | null): AgentGymText {
  const fx = DIR_DX[dir] as number;
  const fy = DIR_DY[dir] as number;
  // Minigrid's right vector is (-dy, dx).
  const rx = -fy;
  const ry = fx;
  const objects: SeenObject[] = [];
  const barriers: { name: string; dis: number }[] = [];
  for (let j = 0; j < VIEW_SIZE; j++) {
    for (let i = 0; i < VIEW_SIZE; i++) {
      const ahead = VIEW_SIZE - 1 - j;
      const side = i - HALF;
      const x = ax + fx * ahead + rx * side;
      const y = ay + fy * ahead + ry * side;
      if (x < 0 || y < 0) continue;
      const dis = Math.abs(x - ax) + Math.abs(y - ay);
      if (dis === 0) continue;
      const code = image[j * VIEW_SIZE + i] as number;
      const type = TYPE_NAMES[cellType(code)];
      if (type === undefined) continue;
      const color = COLORS[cellColor(code)] as string;
      const name = type === 'door' ? `${color} ${STATE_NAMES[cellState(code)]} door` : `${color} ${type}`;
      objects.push({ name, x, y, dis, wall: type === 'wall', door: type === 'door', blocks: type !== 'door' });
      // np.cross(dir, rel) == 0: the cell lies straight ahead; its distance is dot(dir, rel).
      if ((type === 'box' || type === 'wall') && side === 0) barriers.push({ name: type, dis: ahead });
    }
  }
  objects.sort((a, b) => a.dis - b.dis);
  barriers.sort((a, b) => a.dis - b.dis);

  let description: string;
  if (objects.length > 0) {
    description = 'In front of you in this room, you can see several objects: ';
    const counts = new Map<string, number>();
    for (const o of objects) {
      if (o.wall) continue;
      const relX = o.x - ax;
      const relY = o.y - ay;
      const front = relX * fx + relY * fy;
      const right = relX * rx + relY * ry;
      let where: string;
      if (right === 0) where = `right in front of you ${front} steps away. `;
      else if (right > 0) where = `${front} steps in front of you and ${right} steps to your right. `;
      else where = `${front} steps in front of you and ${-right} steps to your left. `;
      const n = (counts.get(o.name) ?? 0) + 1;
      counts.set(o.name, n);
      description += `There is a ${o.name} ${n} ${where} `;
    }
  } else {
    description = 'You cannot see any objects within sight.';
  }
  description += 'The room has walls around you. ';
  const barrier = barriers[0];
  if (barrier !== undefined) description += `You are facing a ${barrier.name} ${barrier.dis} steps away. `;
  description += carrying === null ? 'You are not carrying anything.' : `You are carrying a ${carrying.color} ${carrying.type}.`;

  const { plans, errors } = actionTable(objects, barrier, ax, ay, dir, carrying);
  return { description, plans, errors };
}

/** AgentGym's x and y ranges for the path search (the view square as its corner arithmetic makes it). */
function pathArea(objects: readonly SeenObject[], ax: number, ay: number, dir: Direction): PathArea {
  const fx = DIR_DX[dir] as number;
  const fy = DIR_DY[dir] as number;
  const rx = -fy;
  const ry = fx;
  const tlx = ax + fx * (VIEW_SIZE - 1) - rx * HALF;
  const tly = ay + fy * (VIEW_SIZE - 1) - ry * HALF;
  const bx = tlx + VIEW_SIZE * (rx - fx);
  const by = tly + VIEW_SIZE * (ry - fy);
  // range(b, tl + 1) when the border is below the corner, else range(tl, b).
  const [x0, x1] = bx < tlx ? [bx, tlx] : [tlx, bx - 1];
  const [y0, y1] = by < tly ? [by, tly] : [tly, by - 1];
  const height = y1 - y0 + 1;
  const closed = new Uint8Array((x1 - x0 + 1) * height);
  for (const o of objects) {
    if (o.blocks && o.x >= x0 && o.x <= x1 && o.y >= y0 && o.y <= y1) closed[(o.x - x0) * height + (o.y - y0)] = 1;
  }
  return { x0, x1, y0, y1, closed };
}

function actionTable(
  objects: readonly SeenObject[],
  barrier: { name: string; dis: number } | undefined,
  ax: number,
  ay: number,
  dir: Direction,
  carrying: WorldObj | null,
): { plans: Map<string, number[]>; errors: Map<string, string> } {
  const plans = new Map<string, number[]>([
    ['turn left', [0]],
    ['turn right', [1]],
  ]);
  const errors = new Map<string, string>();
  if (barrier === undefined || barrier.dis > 1) plans.set('move forward', [2]);
  else errors.set('move forward', "There is a barrier in front of you, you can't move forward.");

  // AgentGym calls find_path only when some object is visible, and its range checks sit inside a
  // loop over the objects, so an empty view would search without bounds; it never comes to that.
  const area = objects.length > 0 ? pathArea(objects, ax, ay, dir) : null;
  // AgentGym searches again for the same object in each table below; the answer cannot differ
  // within one observation, so each (object, arrive) search runs once (a copy is handed out:
  // callers append to it).
  const found = new Map<SeenObject, number[] | null>();
  const path = (o: SeenObject, arrive: boolean): number[] | null => {
    if (area === null) return null;
    if (arrive) return finder.find(area, ax, ay, dir, o.x, o.y, true);
    let plan = found.get(o);
    if (plan === undefined) {
      plan = finder.find(area, ax, ay, dir, o.x, o.y, false);
      found.set(o, plan);
    }
    return plan === null ? null : plan.slice();
  };

  if (carrying === null) {
    const counts = new Map<string, number>();
    for (const o of objects) {
      if (o.wall || o.door) continue;
      const plan = path(o, false);
      const first = `pickup ${o.name} 1`;
      if (plan !== null) {
        plan.push(3);
        if (!plans.has(first)) {
          counts.set(o.name, 1);
          plans.set(first, plan);
        } else {
          const n = (counts.get(o.name) as number) + 1;
          counts.set(o.name, n);
          plans.set(`pickup ${o.name} ${n}`, plan);
        }
      } else if (!plans.has(first)) {
        errors.set(first, `You cannot pickup ${o.name} 1, as there is no path leading to it.`);
      } else {
        const n = (counts.get(o.name) as number) + 1;
        errors.set(`pickup ${o.name} ${n}`, `You cannot pickup ${o.name} ${n}, as there is no path leading to it.`);
      }
    }
  }

  if (carrying !== null) {
    const dx = ax + (DIR_DX[dir] as number);
    const dy = ay + (DIR_DY[dir] as number);
    if (objects.some((o) => o.blocks && o.x === dx && o.y === dy)) errors.set('drop', 'You cannot drop the object, as there is already an object in front of you.');
    else plans.set('drop', [4]);
  } else {
    errors.set('drop', 'You cannot drop the object, as you are not carrying anything.');
  }

  const doors = new Map<string, number>();
  for (const o of objects) {
    if (!o.door) continue;
    const k = (doors.get(o.name) ?? 0) + 1;
    doors.set(o.name, k);
    const label = `${o.name} ${k}`;
    if (o.name.endsWith(' open door')) {
      const plan = path(o, true);
      if (plan !== null) plans.set(`go through ${label}`, plan);
      else errors.set(`go through ${label}`, `You cannot go through ${label}, as there is no path leading to it.`);
      continue;
    }
    const locked = o.name.endsWith(' locked door');
    if (locked) {
      if (carrying === null || carrying.type !== 'key') {
        errors.set(`toggle and go through ${label}`, `You cannot toggle and go through ${label}, as you are not carrying a key.`);
        continue;
      }
      if (carrying.color !== o.name.split(' ')[0]) {
        errors.set(`toggle and go through ${label}`, `You cannot toggle and go through ${label}, as the color of the key you are carrying does not match the color of door.`);
        continue;
      }
    }
    const plan = path(o, false);
    if (plan !== null) plans.set(`toggle and go through ${label}`, [...plan, 5, 2]);
    else errors.set(`toggle and go through ${label}`, `You cannot toggle and go through ${o.name} ${pythonDict(doors)}, as there is no path leading to it.`);
    if (plan !== null && plan.length === 0) plans.set('toggle', [5]);
    if (!locked) errors.set(`go through ${label}`, `You cannot go through ${label}, as it is closed. You should toggle it first.`);
  }

  const goTo = new Map<string, number>();
  for (const o of objects) {
    if (o.wall) continue;
    const plan = path(o, false);
    const first = `go to ${o.name} 1`;
    if (plan !== null) {
      if (!plans.has(first)) {
        plans.set(first, plan);
        goTo.set(o.name, 1);
      } else {
        const n = (goTo.get(o.name) as number) + 1;
        goTo.set(o.name, n);
        plans.set(`go to ${o.name} ${n}`, plan);
      }
    } else if (!plans.has(first)) {
      errors.set(first, `You cannot go to ${o.name} 1, as there is no path leading to it.`);
    } else {
      const n = (goTo.get(o.name) as number) + 1;
      errors.set(`go to ${o.name} ${n}`, `You cannot go to ${o.name} ${n}, as there is no path leading to it.`);
    }
  }
  plans.set(AGENTGYM_CHECK_ACTIONS, []);
  return { plans, errors };
}

/** The cell count of an image, re-exported for callers sizing buffers. */
export { IMAGE_CELLS };
