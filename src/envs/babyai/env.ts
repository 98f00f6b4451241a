/**
 * The native BabyAI text environment: MiniGrid/BabyAI levels behind AgentGym's text interface.
 *
 * Two settings shape it (`settings.ts`): `generator` (which worlds: Minigrid's, draw for draw, by
 * default) and `textProfile` (which words). With the `turnwise` profile each agent action is one
 * turn; high-level actions (`go to`, `pickup`, `go through`, `toggle and go through`) run their
 * primitive plan until it completes, the instruction is decided, or the primitive budget runs
 * out, and the episode ends there; reward is MiniGrid's `1 - 0.9 * steps / maxSteps` on success,
 * else 0. With the `agentgym` profile every observation, reward and `done` is what AgentGym's
 * BabyAI server answers (`agentgym/episode.ts`).
 */
import { EnvironmentError } from '../../core/errors.js';
import type { Observation, StepResult } from '../../core/types.js';
import type { Environment, EnvironmentOptions } from '../environment.js';
import { parseAction, tooLongAction } from '../parse-action.js';
import { AgentGymEpisode, actionListLine } from './agentgym/episode.js';
import { babyaiTaskOf } from './catalog.js';
import { applyPlan } from './apply.js';
import type { Instruction } from './instructions.js';
import { generateLevel } from './levels/level.js';
import { renderWorld } from './render.js';
import type { BabyAISettings } from './settings.js';
import { babyaiSettings } from './settings.js';
import type { TextState } from './text.js';
import { CHECK_ACTIONS, formatActionList, TextRenderer } from './text.js';
import type { GridWorld } from './world.js';

/**
 * The BabyAI instruction shown before the first observation (AgentGym's conversation_start[0],
 * in our words): the role, the action vocabulary and the reply format.
 */
export const BABYAI_INSTRUCTION = [
  'You are an agent exploring a grid world and you must complete the goal you are given.',
  'Each round you receive an observation and reply with your thought and one action.',
  '',
  'Actions:',
  '- turn left',
  '- turn right',
  '- move forward',
  '- go to <object> <id>',
  '- pickup <object> <id>',
  '- drop',
  '- go through <door> <id>: the door must be open.',
  '- toggle and go through <door> <id>: for a closed or locked door; a locked door needs a key of its colour.',
  '- toggle: open or close the door right in front of you (a locked door needs a key of its colour), or open the box in front of you.',
  '- check available actions',
  '',
  'Reply in this format:',
  'Thought:',
  '<your thought>',
  '',
  'Action:',
  '<your action>',
].join('\n');

const NAME = 'babyai';

/**
 * One BabyAI episode at a time.
 * @example
 * const env = new BabyAIEnvironment();
 * const first = env.reset(1); // GoToRedBall, seed 0
 * const result = env.step('Thought: look around\nAction: turn left');
 */
export class BabyAIEnvironment implements Environment {
  readonly name = NAME;
  private readonly text = new TextRenderer();
  private world: GridWorld | null = null;
  private instr: Instruction | null = null;
  private mission = '';
  private state: TextState | null = null;
  private done = false;
  private closed = false;
  private levelName = '';
  /** The live episode under the agentgym profile. */
  private agentgym: AgentGymEpisode | null = null;

  /** The parsed settings (level selection only shapes the catalog). */
  readonly settings: BabyAISettings;

  constructor(readonly options: EnvironmentOptions = {}) {
    this.settings = babyaiSettings(options);
  }

  instruction(): string {
    return BABYAI_INSTRUCTION;
  }

  /** Starts task `index`: level `index % 40`, seed `floor(index / 40)`. */
  reset(index: number): Observation {
    this.assertOpen('reset');
    if (!Number.isInteger(index) || index < 0) throw new EnvironmentError(NAME, `reset: task index must be a non-negative integer, got ${index}`);
    const { level, seed } = babyaiTaskOf(index);
    const generated = generateLevel(level.generator, level.name, seed, this.settings.generator);
    this.world = generated.world;
    this.instr = generated.instruction;
    this.levelName = level.name;
    this.done = false;
    if (this.settings.textProfile === 'agentgym') {
      this.agentgym = new AgentGymEpisode(generated);
      this.mission = this.agentgym.goal;
      this.state = null;
      return { text: this.agentgym.resetObservation(), availableActions: this.agentgym.actions };
    }
    this.agentgym = null;
    // AgentGym rewrites sequencing words so the goal reads as one conjunction (the order is lost:
    // `settings.sequenceWords: true` keeps BabyAI's "then" / "after you").
    this.mission = this.settings.sequenceWords ? generated.mission : generated.mission.replace(/\bthen\b/g, 'and').replace(/\bafter you\b/g, 'and');
    this.state = this.text.observe(this.world);
    return this.observation(`Your goal: ${this.mission}\n${this.state.description}`);
  }

  /** Applies the agent's raw text (Thought/Action format or a bare action). */
  step(actionText: string): StepResult {
    this.assertOpen('step');
    if (this.agentgym !== null) return this.stepAgentGym(this.agentgym, actionText);
    const world = this.world;
    const instr = this.instr;
    const state = this.state;
    if (world === null || instr === null || state === null) throw new EnvironmentError(NAME, 'step called before reset');
    if (this.done) return this.over();
    if (typeof actionText !== 'string') throw new EnvironmentError(NAME, `step: actionText must be a string, got ${typeof actionText}`);
    let action: string;
    // Fast path: a listed action key is already in parsed form (lower-case words and digits,
    // single spaces), so parsing would return it unchanged.
    if (state.plans.has(actionText)) action = actionText;
    else {
      const parsed = parseAction(actionText);
      if (!parsed.ok) return this.reject(parsed.message, parsed.reason, null);
      // The prompt spells it "pick up"; the action keys say "pickup" (as AgentGym's do).
      action = parsed.action.replace(/^pick up /, 'pickup ');
    }
    if (action === CHECK_ACTIONS) {
      return { observation: this.observation(this.withGoal(`You can take the following actions: ${state.actions.join(', ')}`)), reward: 0, done: false, success: false, info: { invalid: false, action } };
    }
    const plan = state.plans.get(action);
    if (plan === undefined) {
      const known = state.explain(action);
      if (known !== undefined) return this.reject(known, 'not-executable', action);
      return this.reject(`The action "${action}" is not recognized. Say "check available actions" to list the valid ones.`, 'unrecognized', action);
    }

    const { status, primitives } = applyPlan(world, instr, plan);
    const success = status === 'success';
    const truncated = !success && world.outOfSteps;
    this.done = success || status === 'failure' || truncated;
    const reward = success ? 1 - (0.9 * world.stepCount) / world.maxSteps : 0;
    this.state = this.text.observe(world);
    let text = this.withGoal(this.state.description);
    if (success) text += '\nThe task is completed.';
    else if (status === 'failure') text += '\nThe task has failed.';
    else if (truncated) text += '\nYou have used up all your steps.';
    return {
      observation: this.observation(text),
      reward,
      done: this.done,
      success,
      info: { invalid: false, action, level: this.levelName, primitiveSteps: primitives, stepCount: world.stepCount, truncated },
    };
  }

  /**
   * The agentgym profile: a reply in `Thought: ... Action: ...` form has its action extracted as
   * AgentGym's client does (its refusals answered without a step); a bare action goes to
   * AgentGym's server logic untouched, as it arrives over HTTP (so "" answers "No change in state.").
   */
  private stepAgentGym(episode: AgentGymEpisode, actionText: string): StepResult {
    if (this.done) return this.over();
    if (typeof actionText !== 'string') throw new EnvironmentError(NAME, `step: actionText must be a string, got ${typeof actionText}`);
    let action = actionText;
    // A bare action is passed on untouched, but never one so long that its echo would flood the observation.
    const parsed = /Action:|Thought:/.test(actionText) ? parseAction(actionText) : tooLongAction(actionText);
    if (parsed !== null) {
      if (!parsed.ok) {
        const text = parsed.message + actionListLine(episode.actions);
        return { observation: { text, availableActions: episode.actions }, reward: episode.reward, done: false, success: false, info: { invalid: true, error: parsed.reason, action: null } };
      }
      action = parsed.action;
    }
    const r = episode.step(action);
    this.done = r.done;
    const world = episode.level.world;
    return {
      observation: { text: r.observation, availableActions: episode.actions },
      reward: r.reward,
      done: r.done,
      success: r.done && r.reward > 0,
      info: { invalid: r.invalid, action, level: this.levelName, primitiveSteps: r.primitives, stepCount: world.stepCount, minigridEnded: r.minigridEnded },
    };
  }

  private over(): StepResult {
    const text = 'The episode is over. Reset the environment to start a new one.';
    const actions = this.agentgym?.actions ?? this.state?.actions ?? [];
    return { observation: { text: `${text}\n${formatActionList(actions)}`, availableActions: actions }, reward: 0, done: true, success: false, info: { invalid: true, error: 'episode-over' } };
  }

  close(): void {
    this.closed = true;
    this.world = null;
    this.instr = null;
    this.state = null;
    this.agentgym = null;
  }

  render(): string {
    if (this.world === null) return '(no episode)';
    return renderWorld(this.world, this.mission);
  }

  /**
   * The true state of the current episode, for planners and tests (never shown to the agent):
   * the world, the instruction with its verifier state, and the current turnwise text view.
   * Null before a reset and under the agentgym profile (the bot and the solver speak turnwise's
   * actions).
   */
  trueState(): { world: GridWorld; instruction: Instruction; text: TextState } | null {
    if (this.world === null || this.instr === null || this.state === null) return null;
    return { world: this.world, instruction: this.instr, text: this.state };
  }

  /** The goal of the current episode ("go to the red ball"). */
  goal(): string {
    return this.mission;
  }

  private reject(message: string, error: string, action: string | null): StepResult {
    return { observation: this.observation(this.withGoal(message)), reward: 0, done: false, success: false, info: { invalid: true, error, action } };
  }

  /** A step observation's text, with the goal line first when `settings.restateGoal` is on. */
  private withGoal(text: string): string {
    return this.settings.restateGoal ? `Your goal: ${this.mission}\n${text}` : text;
  }

  private observation(text: string): Observation {
    const actions = this.state === null ? [] : this.state.actions;
    return { text: `${text}\n${formatActionList(actions)}`, availableActions: actions };
  }

  private assertOpen(method: string): void {
    if (this.closed) throw new EnvironmentError(NAME, `${method} called after close`);
  }
}
