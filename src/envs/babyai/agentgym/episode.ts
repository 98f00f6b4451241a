/**
 * One BabyAI episode as AgentGym's server plays it (`BabyAI.reset` / `BabyAI.step` and the
 * server's payloads in agentenv_babyai/environment.py), on a world from Minigrid's generator:
 *
 * - an action is lower-cased and stripped; one containing "check" lists the actions; "" and
 *   unknown or impossible actions answer a message and change nothing;
 * - a listed action runs its primitive plan through Minigrid's `step` one primitive at a time,
 *   stopping after a primitive that left the observation image unchanged; the reward and the
 *   "episode ended" flag are those of the last primitive run (so a plan that succeeds and then
 *   takes one more step, e.g. "toggle and go through" on an Open level, ends with reward 0);
 * - "The task is completed." is said whenever Minigrid ended the episode, but `done` is reported
 *   only when the reward is above 0.5; otherwise the episode goes on;
 * - `reward` is the last reward, kept across later invalid actions; the server's `score` adds it
 *   on every step.
 */
import { Act, type PrimitiveAction } from '../constants.js';
import type { Instruction } from '../instructions.js';
import type { GeneratedLevel } from '../levels/level.js';
import { EgoView } from '../view.js';
import type { GridWorld } from '../world.js';
import { encodeImage, IMAGE_CELLS, sameImage } from './image.js';
import { AGENTGYM_CHECK_ACTIONS, type AgentGymText, agentGymText } from './text.js';

/** What one AgentGym step answers (the server adds `score`). */
export interface AgentGymStep {
  /** Observation text with the `Available actions: [...]` line. */
  readonly observation: string;
  /** AgentGym's `reward`: the last primitive's reward, kept across invalid actions. */
  readonly reward: number;
  /** AgentGym's `done`: Minigrid ended the episode with a reward above 0.5. */
  readonly done: boolean;
  /** Whether the action ran primitives (false: a message, or the action list). */
  readonly executed: boolean;
  /** Whether an action was refused (not listed, or empty). */
  readonly invalid: boolean;
  /** Whether Minigrid ended the episode on this step (success or a Debug level's failure). */
  readonly minigridEnded: boolean;
  /** Primitives run. */
  readonly primitives: number;
}

const view = new EgoView();

/**
 * AgentGym's list line.
 * @example actionListLine(['turn left']) // '\nAvailable actions: ["turn left"]'
 */
export function actionListLine(actions: Iterable<string>): string {
  let out = '\nAvailable actions: [';
  let first = true;
  for (const a of actions) {
    out += first ? `"${a}"` : `, "${a}"`;
    first = false;
  }
  return first ? out : `${out}]`;
}

/**
 * AgentGym's goal line: the mission with every "then" and "after you" replaced by "and" (plain
 * substring replacement, as Python's `str.replace`).
 * @example agentGymGoal('open the red door, then open the blue door') // 'open the red door, and open the blue door'
 */
export function agentGymGoal(mission: string): string {
  return mission.replaceAll('then', 'and').replaceAll('after you', 'and');
}

/**
 * Minigrid's `RoomGridLevel.step` for one primitive: the move, the objects' positions refreshed
 * after every drop, the instruction verified; the reward of success is `1 - 0.9 * steps / max`.
 * @example minigridStep(world, instruction, Act.forward) // { reward: 0, ended: false }
 */
export function minigridStep(world: GridWorld, instruction: Instruction, action: PrimitiveAction): { reward: number; ended: boolean } {
  world.step(action);
  if (action === Act.drop) instruction.updateObjsPoss(world);
  const status = instruction.verify(world, action);
  if (status === 'success') return { reward: 1 - 0.9 * (world.stepCount / world.maxSteps), ended: true };
  return { reward: 0, ended: status === 'failure' };
}

/**
 * The live episode.
 * @example
 * const episode = new AgentGymEpisode(generateLevel(goToRedBall, 'GoToRedBall', 0, 'minigrid'));
 * episode.resetObservation(); // 'Your goal: go to the red ball\nIn front of you ...'
 * episode.step('turn left');
 */
export class AgentGymEpisode {
  /** AgentGym's `obs_2d`: the image the next primitive's image is compared with. */
  private image = new Int32Array(IMAGE_CELLS);
  private scratch = new Int32Array(IMAGE_CELLS);
  private text: AgentGymText;
  /** AgentGym's `self.reward`. */
  reward = 0;
  done = false;
  readonly goal: string;

  constructor(readonly level: GeneratedLevel) {
    const { world } = level;
    this.goal = agentGymGoal(level.mission);
    const carried = level.startCarrying;
    if (carried !== null) {
      // Minigrid's reset observation is made before PutNext moves the object into the agent's hands.
      world.grid.set(carried.x, carried.y, carried.obj);
      world.carrying = null;
      encodeImage(world, view, this.image);
      world.grid.set(carried.x, carried.y, null);
      world.carrying = carried.obj;
    } else {
      encodeImage(world, view, this.image);
    }
    this.text = agentGymText(this.image, world.agentX, world.agentY, world.agentDir, world.carrying);
  }

  /** The actions listed now, in AgentGym's order. */
  get actions(): string[] {
    return [...this.text.plans.keys()];
  }

  /** The reset observation: goal line, description, action list. */
  resetObservation(): string {
    return `Your goal: ${this.goal}\n${this.text.description}${actionListLine(this.text.plans.keys())}`;
  }

  /** An answer that runs no primitive: a message, the state unchanged. */
  private answer(message: string, invalid: boolean): AgentGymStep {
    return { observation: message + actionListLine(this.text.plans.keys()), reward: this.reward, done: this.done, executed: false, invalid, minigridEnded: false, primitives: 0 };
  }

  /** Applies one action text as AgentGym's server receives it. */
  step(raw: string): AgentGymStep {
    const action = raw.toLowerCase().trim();
    if (action.includes('check')) return this.answer(`You can take the following actions: ${[...this.text.plans.keys()].join(', ')}`, false);
    if (action === '') return this.answer('No change in state.', true);
    const plan = this.text.plans.get(action);
    if (plan === undefined) return this.answer(this.text.errors.get(action) ?? 'The action is not recognized. Please check valid actions.', true);
    if (action === AGENTGYM_CHECK_ACTIONS || plan.length === 0) return this.answer('No change in state.', false);

    const { world, instruction } = this.level;
    let reward = 0;
    let ended = false;
    let primitives = 0;
    for (const primitive of plan) {
      ({ reward, ended } = minigridStep(world, instruction, primitive as PrimitiveAction));
      primitives++;
      encodeImage(world, view, this.scratch);
      if (sameImage(this.scratch, this.image)) break;
      [this.image, this.scratch] = [this.scratch, this.image];
    }
    // AgentGym keeps the image of the last primitive (identical to the kept one when it stopped early).
    this.text = agentGymText(this.image, world.agentX, world.agentY, world.agentDir, world.carrying);
    let observation = this.text.description;
    if (ended) observation += '\n The task is completed.';
    this.reward = reward;
    this.done = ended && reward > 0.5;
    return { observation: observation + actionListLine(this.text.plans.keys()), reward, done: this.done, executed: true, invalid: false, minigridEnded: ended, primitives };
  }
}
