/**
 * The four grid moves shared by Maze, Sokoban and FrozenLake: their names, (row, column) deltas,
 * and a lenient reader that accepts `up`, `move up`, `go up` or `Up`.
 */

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
