/**
 * The Sokoban text environment (RAGEN's testbed): the agent sees the room as a text grid and moves
 * up, down, left or right, pushing boxes. Reward 1 on the move that puts the last box on a target,
 * else 0 (no shaping: AgentGym-RL trains on the last step's reward, so per-push bonuses would only
 * leak into truncated episodes). The episode ends when solved or after `maxSteps` moves; moves
 * into walls or unpushable boxes are legal no-ops that count and say why.
 */
import { EnvironmentError } from '../../core/errors.js';
import type { Observation, StepResult } from '../../core/types.js';
import { formatAvailableActions } from '../action-list.js';
import { DIRECTIONS, MOVE_TOOLS, parseGridAction, readDirection } from '../directions.js';
import type { ToolSpec } from '../tools.js';
import type { Environment, EnvironmentOptions } from '../environment.js';
import { roomSpec, type SokobanSettings, sokobanSettings } from './catalog.js';
import { generateRoom } from './generate.js';
import { applyMove, boxesOnTargets, drawRoom, isSolved, type SokobanState } from './room.js';

/** The instruction shown before the first observation. */
export const SOKOBAN_INSTRUCTION = [
  'You are playing Sokoban. Push every box onto a target. You can push one box at a time and cannot pull.',
  'Symbols: # wall, _ floor, O target, X box, √ box on a target, P you, S you on a target.',
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

const NAME = 'sokoban';

/**
 * One Sokoban episode at a time; the room is a pure function of (settings, task index).
 * @example
 * const env = new SokobanEnvironment();
 * env.reset(0).text; // 'Push every box onto a target. ...\n######\n...'
 */
export class SokobanEnvironment implements Environment {
  readonly name = NAME;
  private readonly settings: SokobanSettings;
  private state: SokobanState | null = null;
  private steps = 0;
  private done = false;
  private closed = false;

  constructor(options: EnvironmentOptions = {}) {
    this.settings = sokobanSettings(options);
  }

  instruction(): string {
    return SOKOBAN_INSTRUCTION;
  }
  tools(): readonly ToolSpec[] {
    return MOVE_TOOLS;
  }


  reset(index: number): Observation {
    if (this.closed) throw new EnvironmentError(NAME, 'reset called after close');
    if (!Number.isInteger(index) || index < 0) throw new EnvironmentError(NAME, `reset: task index must be a non-negative integer, got ${index}`);
    try {
      this.state = generateRoom(roomSpec(this.settings), index).state;
    } catch (error) {
      throw new EnvironmentError(NAME, `reset(${index}): ${(error as Error).message}`, { cause: error });
    }
    this.steps = 0;
    this.done = false;
    const boxes = this.settings.boxes === 1 ? 'the box X onto the target O' : `all ${this.settings.boxes} boxes X onto the targets O`;
    return this.observation(`Push ${boxes}.`);
  }

  step(actionText: string): StepResult {
    if (this.closed) throw new EnvironmentError(NAME, 'step called after close');
    const state = this.state;
    if (state === null) throw new EnvironmentError(NAME, 'step called before reset');
    if (this.done) return this.reject('The episode is over. Reset the environment to start a new one.', 'episode-over', true);
    const parsed = parseGridAction(typeof actionText === 'string' ? actionText : '');
    if (!parsed.ok) return this.reject(parsed.message, parsed.reason);
    const move = readDirection(parsed.action);
    if (move === null) return this.reject(`"${parsed.action}" is not a move. Reply with one of: ${DIRECTIONS.join(', ')}.`, 'unrecognized');

    this.steps++;
    const { state: next, outcome } = applyMove(state, move);
    this.state = next;
    const success = isSolved(next);
    const truncated = !success && this.steps >= this.settings.maxSteps;
    this.done = success || truncated;
    let text =
      outcome === 'moved'
        ? `You moved ${move}.`
        : outcome === 'pushed'
          ? `You pushed a box ${move}.`
          : outcome === 'wall'
            ? `You cannot move ${move}: there is a wall.`
            : `You cannot push that box ${move}: a wall or another box is behind it.`;
    if (success) text += ' Every box is on a target. Task completed.';
    else if (truncated) text += ` You have used all ${this.settings.maxSteps} moves.`;
    return {
      observation: this.observation(text),
      reward: success ? 1 : 0,
      done: this.done,
      success,
      info: { invalid: false, action: move, outcome, boxesOnTargets: boxesOnTargets(next), steps: this.steps, truncated },
    };
  }

  close(): void {
    this.closed = true;
    this.state = null;
  }

  render(): string {
    return this.state === null ? '(no episode)' : drawRoom(this.state);
  }

  /** The current room, for tests and solvers. */
  currentState(): SokobanState | null {
    return this.state;
  }

  private reject(message: string, error: string, done = false): StepResult {
    return { observation: this.observation(message), reward: 0, done, success: false, info: { invalid: true, error } };
  }

  private observation(text: string): Observation {
    const room = this.state === null ? '' : `\n${drawRoom(this.state)}`;
    return { text: `${text}${room}\n${formatAvailableActions(DIRECTIONS)}`, availableActions: DIRECTIONS };
  }
}
