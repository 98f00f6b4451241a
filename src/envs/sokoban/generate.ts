/**
 * Procedural Sokoban rooms, generated as gym-sokoban and RAGEN do: carve a floor by a random walk,
 * place the targets and the player with every box on its target (a solved room), then play
 * backwards (the player pulls boxes) and keep the most scrambled state reached. Every forward move
 * undoes a reverse one, so the start is solvable by construction; a BFS solve then confirms it and
 * bounds its length, so no room starts in a deadlock or out of reach of `maxSteps`.
 */
import { Rng } from '../../core/rng.js';
import { DIRECTIONS, type Direction } from '../directions.js';
import { blocked, neighbour, type SokobanState } from './room.js';
import { solveSokoban } from './solver.js';

/** Room shape and difficulty. */
export interface RoomSpec {
  /** Columns, including the outer wall. */
  readonly width: number;
  /** Rows, including the outer wall. */
  readonly height: number;
  readonly boxes: number;
  /** Longest accepted solution, in moves. */
  readonly maxSolutionMoves: number;
  /** Shortest accepted solution, in moves (keeps one-push rooms out). */
  readonly minSolutionMoves: number;
}

/** A generated room with its BFS solution (the gold answer). */
export interface GeneratedRoom {
  readonly state: SokobanState;
  readonly solution: readonly Direction[];
}

const ATTEMPTS = 200;
const REVERSE_WALKS = 8;

function carveFloor(spec: RoomSpec, rng: Rng): Uint8Array {
  const { width, height } = spec;
  const walls = new Uint8Array(width * height).fill(1);
  let row = 1 + rng.int(height - 2);
  let col = 1 + rng.int(width - 2);
  let dir = rng.pick(DIRECTIONS);
  const steps = 2 * (width + height);
  const carve = (r: number, c: number): void => {
    if (r > 0 && c > 0 && r < height - 1 && c < width - 1) walls[r * width + c] = 0;
  };
  for (let s = 0; s < steps; s++) {
    if (rng.next() < 0.35) dir = rng.pick(DIRECTIONS);
    // gym-sokoban carves small masks around the walker, which widens corridors into rooms.
    carve(row, col);
    const side = dir === 'up' || dir === 'down' ? [0, 1] : [1, 0];
    if (rng.next() < 0.5) carve(row + (side[0] as number), col + (side[1] as number));
    if (rng.next() < 0.25) carve(row - (side[0] as number), col - (side[1] as number));
    const nr = row + (dir === 'down' ? 1 : dir === 'up' ? -1 : 0);
    const nc = col + (dir === 'right' ? 1 : dir === 'left' ? -1 : 0);
    if (nr > 0 && nc > 0 && nr < height - 1 && nc < width - 1) {
      row = nr;
      col = nc;
    }
  }
  return walls;
}

/** One random reverse walk from the solved room; returns the most scrambled state it passed. */
function reverseWalk(solved: SokobanState, origins: readonly number[], steps: number, rng: Rng): { state: SokobanState; score: number } | null {
  let player = solved.player;
  const boxes = [...solved.boxes];
  let pulls = 0;
  let best: { state: SokobanState; score: number } | null = null;
  for (let s = 0; s < steps; s++) {
    const move = rng.pick(DIRECTIONS);
    const next = neighbour(solved, player, move);
    if (blocked(solved, next) || boxes.includes(next)) continue;
    const opposite: Direction = move === 'up' ? 'down' : move === 'down' ? 'up' : move === 'left' ? 'right' : 'left';
    const behind = neighbour(solved, player, opposite);
    const boxIndex = boxes.indexOf(behind);
    if (boxIndex >= 0 && rng.next() < 0.8) {
      boxes[boxIndex] = player;
      pulls++;
    }
    player = next;
    if (boxes.some((b) => solved.targets.includes(b))) continue;
    // gym-sokoban's score: how far the boxes travelled, times how much pulling it took.
    const distance = boxes.reduce((sum, b, i) => {
      const o = origins[i] as number;
      return sum + Math.abs(Math.floor(b / solved.width) - Math.floor(o / solved.width)) + Math.abs((b % solved.width) - (o % solved.width));
    }, 0);
    const score = pulls * distance;
    if (best === null || score > best.score) {
      best = { state: { ...solved, boxes: [...boxes].sort((a, b) => a - b), player }, score };
    }
  }
  return best;
}

/**
 * A solvable room for `seed`: deterministic in (spec, seed).
 * @example generateRoom({ width: 6, height: 6, boxes: 1, minSolutionMoves: 3, maxSolutionMoves: 100 }, 0).solution.length > 0 // true
 */
export function generateRoom(spec: RoomSpec, seed: number): GeneratedRoom {
  const rng = Rng.fromSeed(seed).fork('sokoban/room');
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const walls = carveFloor(spec, rng);
    const floor: number[] = [];
    walls.forEach((w, cell) => {
      if (w === 0) floor.push(cell);
    });
    if (floor.length < spec.boxes + 3) continue;
    const chosen = rng.shuffle([...floor]).slice(0, spec.boxes + 1);
    const targets = chosen.slice(1).sort((a, b) => a - b);
    const solved: SokobanState = { width: spec.width, height: spec.height, walls, targets, boxes: targets, player: chosen[0] as number };
    let best: { state: SokobanState; score: number } | null = null;
    for (let w = 0; w < REVERSE_WALKS; w++) {
      const found = reverseWalk(solved, targets, 3 * floor.length + 20, rng);
      if (found !== null && (best === null || found.score > best.score)) best = found;
    }
    if (best === null || best.score === 0) continue;
    const solution = solveSokoban(best.state);
    if (solution === null || solution === 'budget' || solution.length < spec.minSolutionMoves || solution.length > spec.maxSolutionMoves) continue;
    return { state: best.state, solution };
  }
  throw new RangeError(`generateRoom: no solvable ${spec.width}x${spec.height} room with ${spec.boxes} boxes after ${ATTEMPTS} attempts (seed ${seed}); try a larger room or fewer boxes`);
}
