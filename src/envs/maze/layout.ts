/**
 * Maze layouts as pure data: LMRL-Gym's double-T maze with its 26 listed start positions and goal
 * (8, 6), and small random perfect mazes for held-out layouts. Rows are strings, `#` wall and `.`
 * floor; positions are (row, column) from the top-left corner, as LMRL-Gym writes them.
 */
import { Rng } from '../../core/rng.js';

/** A (row, column) position. */
export type Position = readonly [number, number];

/** A maze layout: the wall grid, where the agent starts, where the goal is. */
export interface MazeLayout {
  /** [rows] strings of equal length: `#` wall, `.` floor. The border is all wall. */
  readonly grid: readonly string[];
  readonly start: Position;
  readonly goal: Position;
}

/** LMRL-Gym's `double_t_maze` (10 x 13): two T junctions joined by a stem that leads down to the goal. */
export const DOUBLE_T_GRID: readonly string[] = [
  '#############',
  '#.....#.....#',
  '###.#####.###',
  '###.#####.###',
  '###.#####.###',
  '###.......###',
  '######.######',
  '######.######',
  '######.######',
  '#############',
];

/** The goal of the double-T maze. */
export const DOUBLE_T_GOAL: Position = [8, 6];

/**
 * The 26 start positions AgentGym's maze server indexes by `game` (0-25), in its order. The last,
 * (8, 6), is the goal itself: LMRL-Gym's reset refuses it, and so does ours.
 */
export const DOUBLE_T_STARTS: readonly Position[] = [
  [1, 1], [1, 2], [1, 3], [1, 4], [1, 5], [1, 7], [1, 8], [1, 9], [1, 10], [1, 11],
  [2, 3], [3, 3], [4, 3], [5, 3], [5, 4], [5, 5], [5, 6], [6, 6], [7, 6], [5, 7],
  [5, 8], [5, 9], [4, 9], [3, 9], [2, 9], [8, 6],
];

/**
 * True when (row, col) is a wall or outside the grid.
 * @example isWall(DOUBLE_T_GRID, [0, 0]) // true
 */
export function isWall(grid: readonly string[], [row, col]: Position): boolean {
  const line = grid[row];
  return line === undefined || line[col] !== '.';
}

/** Where a random maze puts the start and the goal. */
export type Placement = 'random' | 'corners';

/**
 * A random perfect maze (one path between any two cells; recursive backtracker) of `size` x `size`
 * including its border (`size` odd, >= 5). `placement: 'random'` draws the start and a distinct
 * goal from its floor; `'corners'` starts top-left and puts the goal bottom-right. Deterministic
 * in `seed`.
 * @example randomMaze(5, 0).grid.length // 5
 */
export function randomMaze(size: number, seed: number, placement: Placement = 'random'): MazeLayout {
  const rng = Rng.fromSeed(seed).fork('maze/random');
  const cells: string[][] = Array.from({ length: size }, () => Array.from({ length: size }, () => '#'));
  const open = (r: number, c: number): void => {
    (cells[r] as string[])[c] = '.';
  };
  const stack: [number, number][] = [[1, 1]];
  open(1, 1);
  while (stack.length > 0) {
    const [r, c] = stack[stack.length - 1] as [number, number];
    const next = ([[-2, 0], [2, 0], [0, -2], [0, 2]] as const)
      .map(([dr, dc]) => [r + dr, c + dc] as [number, number])
      .filter(([nr, nc]) => nr > 0 && nc > 0 && nr < size - 1 && nc < size - 1 && cells[nr]?.[nc] === '#');
    if (next.length === 0) {
      stack.pop();
      continue;
    }
    const [nr, nc] = rng.pick(next);
    open((r + nr) / 2, (c + nc) / 2);
    open(nr, nc);
    stack.push([nr, nc]);
  }
  const grid = cells.map((row) => row.join(''));
  const floor: Position[] = [];
  grid.forEach((line, r) => {
    for (let c = 0; c < line.length; c++) if (line[c] === '.') floor.push([r, c]);
  });
  if (placement === 'corners') return { grid, start: [1, 1], goal: [size - 2, size - 2] };
  const goal = rng.pick(floor);
  const start = rng.pick(floor.filter((p) => p[0] !== goal[0] || p[1] !== goal[1]));
  return { grid, start, goal };
}
