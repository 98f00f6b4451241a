/**
 * The four grid moves shared by Maze, Sokoban and FrozenLake: their names, (row, column) deltas,
 * a lenient reader that accepts `up`, `move up`, `go up` or `Up`, and the `move` tool.
 */
import { type ParsedAction, parseAction } from './parse-action.js';
import { readToolAction } from './tool-action.js';
import type { ToolSpec } from './tools.js';

/** A move on a grid. */
export type Direction = 'up' | 'down' | 'left' | 'right';

/** The directions in a fixed order (the order environments list them in). */
export const DIRECTIONS: readonly Direction[] = ['up', 'down', 'left', 'right'];

/** Row and column change of each direction (rows grow downwards). */
export const DELTAS: Readonly<Record<Direction, readonly [number, number]>> = {
  up: [-1, 0],
  down: [1, 0],
  left: [0, -1],
  right: [0, 1],
};

/**
 * Reads a normalised action (lower-case words) as a direction, or null.
 * @example readDirection('move left') // 'left'
 */
export function readDirection(action: string, verbs: readonly string[] = ['move', 'go', 'push', 'walk']): Direction | null {
  const words = action.trim().toLowerCase().split(/\s+/);
  if (words.length === 2 && verbs.includes(words[0] as string)) words.shift();
  if (words.length !== 1) return null;
  const word = words[0] as string;
  return (DIRECTIONS as readonly string[]).includes(word) ? (word as Direction) : null;
}

/** The one tool of the grid environments: `move(direction)`, its direction one of {@link DIRECTIONS}. */
export const MOVE_TOOLS: readonly ToolSpec[] = Object.freeze([
  {
    name: 'move',
    description: 'Move one cell (or push a box) in a direction.',
    parameters: { type: 'object', properties: { direction: { type: 'string', enum: DIRECTIONS, description: 'up, down, left or right.' } }, required: ['direction'] },
  },
]);

/**
 * Parses a grid environment's action: a `move` call's canonical text becomes its direction, a
 * malformed call an error with the checker's message, anything else `parseAction`'s reading.
 * @example parseGridAction('{"name":"move","arguments":{"direction":"up"}}') // { ok: true, action: 'up', thought: null }
 */
export function parseGridAction(text: string): ParsedAction {
  const call = readToolAction(text, MOVE_TOOLS);
  if (call.kind === 'invalid') return { ok: false, reason: 'empty', message: call.message };
  return parseAction(call.kind === 'call' ? (call.args.direction as string) : text);
}
