/**
 * The maze text environment (LMRL-Gym's maze as AgentGym serves it): the agent sees its position,
 * the goal position and the walls next to it as text, and moves one cell per turn. Reward 1 on
 * reaching the goal, else 0; the episode ends at the goal or after `maxSteps` moves. A move into
 * a wall is a legal move that leaves the agent where it is (as in LMRL-Gym), and says so.
 */
import { EnvironmentError } from '../../core/errors.js';
import type { Observation, StepResult } from '../../core/types.js';
import { formatAvailableActions } from '../action-list.js';
import { DELTAS, type Direction, MOVE_TOOLS, parseGridAction, readDirection } from '../directions.js';
import type { ToolSpec } from '../tools.js';
import type { Environment, EnvironmentOptions } from '../environment.js';
import { type MazeSettings, mazeSettings, mazeTask } from './catalog.js';
import { isWall, type MazeLayout, type Position } from './layout.js';

/** The instruction shown before the first observation. */
export const MAZE_INSTRUCTION = [
  'You are solving a maze laid out on a grid of rows and columns; row numbers grow downwards and column numbers grow to the right.',
  'Each round you are told your position, the goal position and which sides of your cell are walls.',
  'Reach the goal in as few moves as you can. Moving into a wall leaves you where you are.',
  '',
  'Actions: move up, move down, move left, move right',
  '',
  'Reply in this format:',
  'Thought:',
  '<your thought>',
  '',
  'Action:',
  '<your action>',
].join('\n');

/** The four actions, in AgentGym's spelling. */
export const MAZE_ACTIONS: readonly string[] = ['move up', 'move down', 'move left', 'move right'];

const NAME = 'maze';

/**
 * The observation line of a position.
 * @example describePosition(DOUBLE_T_GRID, [1, 1], [8, 6]) // 'You are at row 1, column 1. The goal is at row 8, column 6. Walls: up, down, left.'
 */
export function describePosition(grid: readonly string[], position: Position, goal: Position): string {
  const walls = (['up', 'down', 'left', 'right'] as const).filter((d) => isWall(grid, [position[0] + DELTAS[d][0], position[1] + DELTAS[d][1]]));
  return `You are at row ${position[0]}, column ${position[1]}. The goal is at row ${goal[0]}, column ${goal[1]}. Walls: ${walls.length > 0 ? walls.join(', ') : 'none'}.`;
}

/**
 * One maze episode at a time.
 * @example
 * const env = new MazeEnvironment();
 * env.reset(0); // double-T game 0, start (1, 1)
 * env.step('Action: move right').observation.text; // 'You moved right. You are at row 1, column 2. ...'
 */
export class MazeEnvironment implements Environment {
  readonly name = NAME;
  private readonly settings: MazeSettings;
  private layout: MazeLayout | null = null;
  private position: Position = [0, 0];
  private steps = 0;
  private done = false;
  private closed = false;

  constructor(options: EnvironmentOptions = {}) {
    this.settings = mazeSettings(options);
  }

  instruction(): string {
    return MAZE_INSTRUCTION;
  }
  tools(): readonly ToolSpec[] {
    return MOVE_TOOLS;
  }


  reset(index: number): Observation {
    if (this.closed) throw new EnvironmentError(NAME, 'reset called after close');
    const task = mazeTask(this.settings, index);
    if (!task.ok) throw new EnvironmentError(NAME, `reset(${index}): ${task.reason}`);
    this.layout = task.layout;
    this.position = task.layout.start;
    this.steps = 0;
    this.done = false;
    return this.observation(`Find the goal. ${describePosition(task.layout.grid, this.position, task.layout.goal)}`);
  }

  step(actionText: string): StepResult {
    if (this.closed) throw new EnvironmentError(NAME, 'step called after close');
    const layout = this.layout;
    if (layout === null) throw new EnvironmentError(NAME, 'step called before reset');
    if (this.done) return this.reject('The episode is over. Reset the environment to start a new one.', 'episode-over', true);
    const parsed = parseGridAction(typeof actionText === 'string' ? actionText : '');
    if (!parsed.ok) return this.reject(parsed.message, parsed.reason);
    const move = readDirection(parsed.action);
    if (move === null) return this.reject(`"${parsed.action}" is not a move. Reply with one of: ${MAZE_ACTIONS.join(', ')}.`, 'unrecognized');

    this.steps++;
    const target: Position = [this.position[0] + DELTAS[move][0], this.position[1] + DELTAS[move][1]];
    const blocked = isWall(layout.grid, target);
    if (!blocked) this.position = target;
    const success = this.position[0] === layout.goal[0] && this.position[1] === layout.goal[1];
    const truncated = !success && this.steps >= this.settings.maxSteps;
    this.done = success || truncated;
    const what = blocked ? `You cannot move ${move}: there is a wall.` : `You moved ${move}.`;
    let text = `${what} ${describePosition(layout.grid, this.position, layout.goal)}`;
    if (success) text = `You moved ${move} and reached the goal at row ${layout.goal[0]}, column ${layout.goal[1]}. Task completed.`;
    else if (truncated) text += ` You have used all ${this.settings.maxSteps} moves.`;
    return {
      observation: this.observation(text),
      reward: success ? 1 : 0,
      done: this.done,
      success,
      info: { invalid: false, action: `move ${move}`, blocked, steps: this.steps, truncated },
    };
  }

  close(): void {
    this.closed = true;
    this.layout = null;
  }

  /** The maze with `A` for the agent and `G` for the goal. */
  render(): string {
    const layout = this.layout;
    if (layout === null) return '(no episode)';
    return layout.grid
      .map((line, r) =>
        [...line]
          .map((cell, c) => {
            if (r === this.position[0] && c === this.position[1]) return 'A';
            if (r === layout.goal[0] && c === layout.goal[1]) return 'G';
            return cell;
          })
          .join(''),
      )
      .join('\n');
  }

  /** The layout with the agent's current position as its start (for solvers, tests and oracles). */
  currentLayout(): MazeLayout | null {
    return this.layout === null ? null : { ...this.layout, start: this.position };
  }

  private reject(message: string, error: string, done = false): StepResult {
    return { observation: this.observation(message), reward: 0, done, success: false, info: { invalid: true, error } };
  }

  private observation(text: string): Observation {
    return { text: `${text}\n${formatAvailableActions(MAZE_ACTIONS)}`, availableActions: MAZE_ACTIONS };
  }
}

/** A move name as the action text the environment accepts. */
export function mazeAction(move: Direction): string {
  return `move ${move}`;
}
