/**
 * Breadth-first search over a maze: the shortest move sequence from the start to the goal. It is
 * the gold answer that proves every test item solvable within the step limit.
 */
import { DELTAS, DIRECTIONS, type Direction } from '../directions.js';
import { isWall, type MazeLayout } from './layout.js';

/**
 * Shortest list of moves from `layout.start` to `layout.goal`, or null when there is none.
 * @example solveMaze({ grid: ['#####', '#...#', '#####'], start: [1, 1], goal: [1, 3] }) // ['right', 'right']
 */
export function solveMaze(layout: MazeLayout): Direction[] | null {
  const { grid, start, goal } = layout;
  const width = grid[0]?.length ?? 0;
  const key = (r: number, c: number): number => r * width + c;
  const previous = new Map<number, { from: number; move: Direction }>();
  const seen = new Set<number>([key(start[0], start[1])]);
  let frontier: [number, number][] = [[start[0], start[1]]];
  while (frontier.length > 0) {
    const next: [number, number][] = [];
    for (const [r, c] of frontier) {
      if (r === goal[0] && c === goal[1]) {
        const moves: Direction[] = [];
        let at = key(r, c);
        const origin = key(start[0], start[1]);
        while (at !== origin) {
          const step = previous.get(at);
          if (step === undefined) break;
          moves.push(step.move);
          at = step.from;
        }
        return moves.reverse();
      }
      for (const move of DIRECTIONS) {
        const [dr, dc] = DELTAS[move];
        const nr = r + dr;
        const nc = c + dc;
        if (isWall(grid, [nr, nc]) || seen.has(key(nr, nc))) continue;
        seen.add(key(nr, nc));
        previous.set(key(nr, nc), { from: key(r, c), move });
        next.push([nr, nc]);
      }
    }
    frontier = next;
  }
  return null;
}
