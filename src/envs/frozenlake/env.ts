/**
 * The FrozenLake text environment (Gymnasium's FrozenLake-v1 rules, RAGEN-style text grid): the
 * agent walks from the top-left start to the goal `G` without stepping into a hole `O`. Reward 1
 * at the goal; the episode ends at the goal, in a hole, or after `maxSteps` moves.
 *
 * Grid symbols: `P` the agent, `_` frozen ice (the start too), `O` hole, `G` goal; after the last
 * move `X` marks the agent in a hole and `√` the agent on the goal.
 */
import { EnvironmentError } from '../../core/errors.js';
import { Rng } from '../../core/rng.js';
import type { Observation, StepResult } from '../../core/types.js';
import { formatAvailableActions } from '../action-list.js';
import { DIRECTIONS, MOVE_TOOLS, parseGridAction, readDirection } from '../directions.js';
import type { ToolSpec } from '../tools.js';
import type { Environment, EnvironmentOptions } from '../environment.js';
import { type FrozenLakeSettings, frozenLakeSettings } from './catalog.js';
import { generateLakeMap, type LakeMap, moveOnLake, slipOptions } from './map.js';

/** The instruction shown before the first observation. */
export const FROZENLAKE_INSTRUCTION = [
  'You are walking on a frozen lake drawn as a grid: P is you, _ is safe ice, O is a hole, G is the goal.',
  'Reach G without stepping into a hole. On slippery ice a move may slide you sideways instead.',
  '',
  'Actions: up, down, left, right',
  '',
  'Reply in this format:',
  'Thought:',
  '<your thought>',
  '',
  'Action:',
  '<your action>',
].join('\n');

const NAME = 'frozenlake';

/**
 * The grid as the agent sees it.
 * @example drawLake(['SF', 'HG'], [0, 0]) // 'P_\nOG'
 */
export function drawLake(map: LakeMap, at: readonly [number, number]): string {
  return map
    .map((line, r) =>
      [...line]
        .map((cell, c) => {
          const here = r === at[0] && c === at[1];
          if (cell === 'H') return here ? 'X' : 'O';
          if (cell === 'G') return here ? '√' : 'G';
          return here ? 'P' : '_';
        })
        .join(''),
    )
    .join('\n');
}

/**
 * One FrozenLake episode at a time. The map is a pure function of the task index. On slippery
 * ice the slips come from a stream forked from `settings.seed` by the task index and restarted at
 * every reset, like Gymnasium's `reset(seed=...)`: the Environment interface carries no episode
 * seed, and a task id must replay exactly, so the same moves on the same task slip the same way,
 * while different tasks draw independent 1/3 slips. Change `settings.seed` for other slips.
 * @example
 * const env = new FrozenLakeEnvironment({ settings: { size: 4 } });
 * env.reset(0);
 * env.step('down');
 */
export class FrozenLakeEnvironment implements Environment {
  readonly name = NAME;
  private readonly settings: FrozenLakeSettings;
  private map: LakeMap | null = null;
  private position: [number, number] = [0, 0];
  private steps = 0;
  private done = false;
  private closed = false;
  private slips: Rng = Rng.fromSeed(0);

  constructor(options: EnvironmentOptions = {}) {
    this.settings = frozenLakeSettings(options);
  }

  instruction(): string {
    return FROZENLAKE_INSTRUCTION;
  }
  tools(): readonly ToolSpec[] {
    return MOVE_TOOLS;
  }


  reset(index: number): Observation {
    if (this.closed) throw new EnvironmentError(NAME, 'reset called after close');
    if (!Number.isInteger(index) || index < 0) throw new EnvironmentError(NAME, `reset: task index must be a non-negative integer, got ${index}`);
    this.map = generateLakeMap(this.settings.size, this.settings.frozenProbability, index);
    this.position = [0, 0];
    this.steps = 0;
    this.done = false;
    this.slips = Rng.fromSeed(this.settings.seed).fork('frozenlake/slip', index);
    const ice = this.settings.slippery ? 'The ice is slippery.' : 'The ice is not slippery.';
    return this.observation(`Reach the goal G without falling into a hole O. ${ice}`);
  }

  step(actionText: string): StepResult {
    if (this.closed) throw new EnvironmentError(NAME, 'step called after close');
    const map = this.map;
    if (map === null) throw new EnvironmentError(NAME, 'step called before reset');
    if (this.done) return this.reject('The episode is over. Reset the environment to start a new one.', 'episode-over', true);
    const parsed = parseGridAction(typeof actionText === 'string' ? actionText : '');
    if (!parsed.ok) return this.reject(parsed.message, parsed.reason);
    const move = readDirection(parsed.action);
    if (move === null) return this.reject(`"${parsed.action}" is not a move. Reply with one of: ${DIRECTIONS.join(', ')}.`, 'unrecognized');

    this.steps++;
    const actual = this.settings.slippery ? this.slips.pick(slipOptions(move)) : move;
    const before = this.position;
    this.position = moveOnLake(map.length, before, actual);
    const cell = map[this.position[0]]?.[this.position[1]];
    const success = cell === 'G';
    const fell = cell === 'H';
    const truncated = !success && !fell && this.steps >= this.settings.maxSteps;
    this.done = success || fell || truncated;
    const stayed = before[0] === this.position[0] && before[1] === this.position[1];
    let text = actual === move ? `You moved ${move}.` : `You tried to move ${move} but slipped ${actual}.`;
    if (stayed) text = actual === move ? `You cannot move ${move}: that is the edge of the lake.` : `You tried to move ${move}, slipped ${actual} and hit the edge.`;
    if (success) text += ' You reached the goal. Task completed.';
    else if (fell) text += ' You fell into a hole. Task failed.';
    else if (truncated) text += ` You have used all ${this.settings.maxSteps} moves.`;
    return {
      observation: this.observation(text),
      reward: success ? 1 : 0,
      done: this.done,
      success,
      info: { invalid: false, action: move, moved: actual, slipped: actual !== move, hole: fell, steps: this.steps, truncated },
    };
  }

  close(): void {
    this.closed = true;
    this.map = null;
  }

  render(): string {
    return this.map === null ? '(no episode)' : drawLake(this.map, this.position);
  }

  /** The current map (Gymnasium letters), for tests and solvers. */
  currentMap(): LakeMap | null {
    return this.map;
  }

  private reject(message: string, error: string, done = false): StepResult {
    return { observation: this.observation(message), reward: 0, done, success: false, info: { invalid: true, error } };
  }

  private observation(text: string): Observation {
    const grid = this.map === null ? '' : `\n${drawLake(this.map, this.position)}`;
    return { text: `${text}${grid}\n${formatAvailableActions(DIRECTIONS)}`, availableActions: DIRECTIONS };
  }
}
