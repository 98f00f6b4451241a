/**
 * A BabyAI bot that solves levels from the true state, acting only through the text actions the
 * environment lists (in the spirit of Minigrid's `BabyAIBot`, `minigrid/utils/baby_ai_bot.py`:
 * instruction -> subgoals -> moves; our own design). Each turn it re-plans from scratch:
 *
 * 1. the instruction's first pending action (`pending()` orders `then` / `after you` parts);
 * 2. that action's goal: cells to face and a final primitive (pickup, toggle, drop);
 * 3. if walls of objects or a locked door stand in the way, a subgoal first: pick the blocker up
 *    (and later put it where it blocks nothing), or fetch the door's key (from a box if hidden);
 * 4. among the listed text actions, the one whose primitive plan ends nearest (in primitive steps
 *    on the true grid) to the goal, or the one that completes it.
 *
 * Re-planning each turn keeps it stateless: the same state always gives the same action.
 */
import { Act, DIR_DX, DIR_DY } from '../constants.js';
import type { ActionInstr, Instruction } from '../instructions.js';
import { GoToInstr, OpenInstr, PickupInstr } from '../instructions.js';
import type { TextState } from '../text.js';
import { CHECK_ACTIONS } from '../text.js';
import type { GridWorld } from '../world.js';
import type { WorldObj } from '../world-object.js';
import { DistanceField, FAR } from './distance.js';
import { LoopGuard } from './guard.js';
import { dropCells, findRoute } from './obstacles.js';

/** What the agent must reach: face one of `targets` (flat cell indices), then do `final`. */
export interface Goal {
  readonly targets: readonly number[];
  readonly final: 'none' | 'pickup' | 'toggle' | 'drop';
  /** The final action needs empty hands (pickup). */
  readonly hands: boolean;
  /** The targets are locked doors: a key of one of these colours must be in hand first. */
  readonly keyColors?: readonly string[];
  /** The targets are keys for locked doors of these colours: those doors cannot be on the way to them. */
  readonly forKeys?: readonly string[];
}

/** What the bot needs from the environment each turn (see `BabyAIEnvironment.trueState`). */
export interface BotView {
  readonly world: GridWorld;
  readonly instruction: Instruction;
  readonly text: TextState;
}

const MAX_DEPTH = 4;

/**
 * Chooses text actions for the current BabyAI episode.
 * @example
 * const bot = new BabyAIBot();
 * env.reset(120);
 * const action = bot.act(env.trueState()!); // e.g. 'go to red ball 1'
 */
export class BabyAIBot {
  private readonly field = new DistanceField();

  /** Cells a put-down object must not take this turn (the way to, and the cells beside, a put-next target). */
  private keepClear = new Set<number>();

  /** Hands over to a search when the heuristic is stuck or would loop. */
  private readonly guard = new LoopGuard((view) => this.suggest(view));

  /** The next text action. */
  act(view: BotView): string {
    return this.guard.choose(view) ?? 'turn left';
  }

  /** Times the bot fell back to searching (over all episodes it played). */
  get searches(): number {
    return this.guard.searches;
  }

  /** The heuristic's action for this state, or null when it sees no way forward. */
  private suggest(view: BotView): string | null {
    const task = view.instruction.pending()[0];
    this.keepClear.clear();
    if (task === undefined) return null;
    const goal = this.goalOf(view.world, task);
    // Whatever gets put down on the way must not land on the way to the task's own target.
    for (const c of findRoute(view.world, goal.targets)?.cells ?? []) this.keepClear.add(c);
    return this.pursue(view, goal, 0);
  }

  /** The goal of one action instruction in the current state. */
  goalOf(world: GridWorld, task: ActionInstr): Goal {
    const w = world.grid.width;
    const idx = (x: number, y: number): number => y * w + x;
    if (task instanceof GoToInstr) return { targets: task.desc.objPoss.map(([x, y]) => idx(x, y)), final: 'none', hands: false };
    if (task instanceof PickupInstr) return { targets: positionsOf(world, task.desc.objSet), final: 'pickup', hands: true };
    if (task instanceof OpenInstr) return this.openGoal(world, task);
    // put next to: carry one of the objects to move, then drop it beside a fixed one.
    const carrying = world.carrying;
    const spots: number[] = [];
    const crowd: number[] = [];
    for (const [x, y] of task.descFixed.objPoss) {
      for (let dir = 0; dir < 4; dir++) {
        const nx = x + (DIR_DX[dir] as number);
        const ny = y + (DIR_DY[dir] as number);
        if (!world.grid.inBounds(nx, ny)) continue;
        const cell = world.grid.get(nx, ny);
        this.keepClear.add(idx(nx, ny));
        if (cell === null) spots.push(idx(nx, ny));
        else if (cell.type !== 'wall' && cell.type !== 'door' && !task.descMove.objSet.includes(cell)) crowd.push(idx(nx, ny));
      }
    }
    if (carrying !== null && task.descMove.objSet.includes(carrying)) return { targets: spots, final: 'drop', hands: false };
    // Before fetching the object, make room: a free cell beside the fixed one, and a clear way to it.
    if (spots.length === 0 && crowd.length > 0) return { targets: crowd, final: 'pickup', hands: true };
    const route = findRoute(world, spots);
    for (const c of route?.cells ?? []) this.keepClear.add(c);
    const blocker = route?.obstacle ?? null;
    // A locked door on the way: unlock it before fetching the object (else the bot carries the
    // object to the door, drops it to fetch the key, and picks it up again, for ever).
    const locked = route?.cells.find((c) => world.grid.cells[c]?.type === 'door' && world.grid.cells[c]?.isLocked === true);
    const door = locked === undefined ? null : (world.grid.cells[locked] ?? null);
    if (locked !== undefined && door !== null) return { targets: [locked], final: 'toggle', hands: false, keyColors: [door.color] };
    // (When the blocker is itself an object to move, taking it is both steps at once.)
    if (blocker !== null && blocker.obj.type !== 'door') return { targets: [blocker.cell], final: 'pickup', hands: true };
    return { targets: positionsOf(world, task.descMove.objSet), final: 'pickup', hands: true };
  }

  private openGoal(world: GridWorld, task: OpenInstr): Goal {
    const doors = task.desc.objSet;
    const unlocked = doors.filter((d) => !d.isLocked);
    if (unlocked.length > 0) return { targets: positionsOf(world, unlocked), final: 'toggle', hands: false };
    const carrying = world.carrying;
    if (carrying !== null && carrying.type === 'key') {
      const matching = doors.filter((d) => d.color === carrying.color);
      if (matching.length > 0) return { targets: positionsOf(world, matching), final: 'toggle', hands: false };
    }
    return { targets: positionsOf(world, doors), final: 'toggle', hands: false, keyColors: doors.map((d) => d.color) };
  }

  /** Fetch a key of one of `colors`: from the floor, or by opening the box that hides one. */
  private keyGoal(world: GridWorld, colors: readonly string[]): Goal {
    const keys: number[] = [];
    const boxes: number[] = [];
    world.grid.cells.forEach((cell, c) => {
      if (cell === null) return;
      if (cell.type === 'key' && colors.includes(cell.color)) keys.push(c);
      if (cell.type === 'box' && cell.contains?.type === 'key' && colors.includes(cell.contains.color)) boxes.push(c);
    });
    if (keys.length > 0 || boxes.length === 0) return { targets: keys, final: 'pickup', hands: true, forKeys: colors };
    return { targets: boxes, final: 'toggle', hands: false, forKeys: colors };
  }

  /** The text action that makes progress on `goal`, or null when none is found. */
  private pursue(view: BotView, goal: Goal, depth: number): string | null {
    const { world } = view;
    if (goal.targets.length === 0 || depth > MAX_DEPTH) return null;
    const carried = world.carrying;
    if (goal.keyColors !== undefined && !(carried !== null && carried.type === 'key' && goal.keyColors.includes(carried.color))) {
      // Clear the way to the door before fetching its key (an object may stand where the agent must).
      const route = findRoute(world, goal.targets);
      const blocker = route?.obstacle ?? null;
      if (blocker !== null && blocker.obj.type === 'box' && blocker.obj.contains?.type === 'key' && goal.keyColors.includes(blocker.obj.contains.color)) return this.pursue(view, { targets: [blocker.cell], final: 'toggle', hands: false }, depth + 1);
      if (blocker !== null && blocker.obj.type !== 'door') return this.pursue(view, { targets: [blocker.cell], final: 'pickup', hands: true }, depth + 1);
      return this.pursue(view, this.keyGoal(world, goal.keyColors), depth + 1);
    }
    const field = this.field;
    field.compute(world, goal.targets);
    const here = field.at(world.agentX, world.agentY, world.agentDir);
    const carrying = world.carrying;
    if (here < FAR) {
      if (goal.hands && carrying !== null && !this.keyNeeded(world, goal)) return this.dropAway(view, goal, depth);
      field.compute(world, goal.targets);
      if (here === 0) return this.finish(view, goal);
      return this.bestMove(view, goal, here);
    }
    // A key's way may not lead through the door it is fetched for (that would chase the same key again).
    const route = findRoute(world, goal.targets, goal.forKeys);
    if (route === null || route.obstacle === null) return null;
    // The subgoal's own pursuit puts down what the hands hold (unless it is the key that opens its way).
    const { obj, cell } = route.obstacle;
    if (obj.type === 'door') return this.pursue(view, this.keyGoal(world, [obj.color]), depth + 1);
    return this.pursue(view, { targets: [cell], final: 'pickup', hands: true }, depth + 1);
  }

  /** Whether the carried key is what opens the way to `goal` (then it must not be dropped yet). */
  private keyNeeded(world: GridWorld, goal: Goal): boolean {
    const carrying = world.carrying;
    if (carrying === null || carrying.type !== 'key') return false;
    world.carrying = null;
    try {
      this.field.compute(world, goal.targets);
      return this.field.at(world.agentX, world.agentY, world.agentDir) >= FAR;
    } finally {
      world.carrying = carrying;
    }
  }

  /** Put the carried object down where it blocks neither the way to `goal` nor a doorway. */
  private dropAway(view: BotView, goal: Goal, depth: number): string | null {
    const { world } = view;
    const route = findRoute(world, goal.targets);
    const avoid = new Set<number>([...(route?.cells ?? []), ...this.keepClear]);
    for (const t of goal.targets) avoid.add(t);
    const cells = dropCells(world, avoid);
    const front = world.frontY * world.grid.width + world.frontX;
    if (world.grid.inBounds(world.frontX, world.frontY) && cells.includes(front) && view.text.plans.has('drop')) return 'drop';
    const away = this.pursue(view, { targets: cells, final: 'drop', hands: false }, depth + 1);
    if (away !== null) return away;
    // Boxed in: no reachable cell is out of the way, so put it down anywhere but on a target (it
    // may have to be moved again later; the loop guard stops that from cycling).
    const anywhere = dropCells(world, new Set(goal.targets));
    if (world.grid.inBounds(world.frontX, world.frontY) && anywhere.includes(front) && view.text.plans.has('drop')) return 'drop';
    return this.pursue(view, { targets: anywhere, final: 'drop', hands: false }, depth + 1);
  }

  /** The action that completes `goal` from a pose facing a target. */
  private finish(view: BotView, goal: Goal): string | null {
    const { world, text } = view;
    if (goal.final === 'drop') return text.plans.has('drop') ? 'drop' : null;
    if (goal.final === 'toggle') return text.plans.has('toggle') ? 'toggle' : null;
    if (goal.final === 'pickup') {
      const o = text.objects.find((s) => s.x === world.frontX && s.y === world.frontY);
      const label = o === undefined ? '' : `pickup ${o.name} ${o.number}`;
      return text.plans.has(label) ? label : null;
    }
    return null;
  }

  /** Among the listed actions, the one ending nearest the goal (or completing it). */
  private bestMove(view: BotView, goal: Goal, here: number): string | null {
    const { world, text } = view;
    const w = world.grid.width;
    const targets = new Set(goal.targets);
    let best: string | null = null;
    let bestScore = here;
    let bestLen = 0;
    for (const [label, plan] of text.plans) {
      if (label === CHECK_ACTIONS || plan.length === 0) continue;
      const last = plan[plan.length - 1];
      let score: number;
      if (last === Act.pickup || last === Act.drop) {
        // Completes the goal when it picks up a target.
        if (goal.final !== 'pickup' || last !== Act.pickup) continue;
        const end = simulate(world, plan.slice(0, -1));
        if (end === null || !targets.has(end.fy * w + end.fx)) continue;
        score = -1;
      } else {
        const end = simulate(world, plan);
        if (end === null) continue;
        if (end.toggled !== null && targets.has(end.toggled) && goal.final === 'toggle') score = -1;
        else if (end.toggled !== null && end.closedOpen) continue;
        else score = this.field.at(end.x, end.y, end.dir);
      }
      if (score < bestScore || (score === bestScore && best !== null && plan.length < bestLen)) {
        best = label;
        bestScore = score;
        bestLen = plan.length;
      }
    }
    return best;
  }
}

/** Flat cell indices of the objects in `objs` that lie on the grid. */
function positionsOf(world: GridWorld, objs: readonly WorldObj[]): number[] {
  const out: number[] = [];
  const w = world.grid.width;
  for (const o of objs) {
    const at = world.grid.find(o);
    if (at !== null) out.push(at.y * w + at.x);
  }
  return out;
}

/**
 * End pose of a plan of turns, forwards and toggles on the true grid (stops where the
 * environment would: at the first move that fails). `toggled` is the last door cell toggled;
 * `closedOpen` says a toggle would close an open door or open a box (never useful on the way).
 */
function simulate(world: GridWorld, plan: readonly number[]): { x: number; y: number; dir: number; fx: number; fy: number; toggled: number | null; closedOpen: boolean } | null {
  const { grid } = world;
  let x = world.agentX;
  let y = world.agentY;
  let dir: number = world.agentDir;
  let opened = -1;
  let toggled: number | null = null;
  let closedOpen = false;
  const key = world.carrying !== null && world.carrying.type === 'key' ? world.carrying.color : null;
  for (const a of plan) {
    const fx = x + (DIR_DX[dir] as number);
    const fy = y + (DIR_DY[dir] as number);
    const front = grid.get(fx, fy);
    const fi = fy * grid.width + fx;
    if (a === Act.left) dir = (dir + 3) & 3;
    else if (a === Act.right) dir = (dir + 1) & 3;
    else if (a === Act.forward) {
      const free = front === null || (front.type === 'door' && (front.isOpen || fi === opened));
      if (!free || !grid.inBounds(fx, fy)) break;
      x = fx;
      y = fy;
    } else if (a === Act.toggle) {
      if (front === null) break;
      toggled = fi;
      if (front.type === 'door' && !front.isOpen && (!front.isLocked || key === front.color)) opened = fi;
      else closedOpen = true;
    } else return null;
  }
  return { x, y, dir, fx: x + (DIR_DX[dir] as number), fy: y + (DIR_DY[dir] as number), toggled, closedOpen };
}
