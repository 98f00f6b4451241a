/**
 * FrozenLake maps and dynamics as pure functions, with Gymnasium's semantics: rows of `S` start,
 * `F` frozen, `H` hole, `G` goal; a map is generated cell by cell (frozen with probability `p`)
 * until a path of non-hole cells joins S to G; on slippery ice the agent moves in the intended
 * direction or one of the two perpendicular ones, 1/3 each; moves off the edge leave it in place.
 */
import { Rng } from '../../core/rng.js';
import { DELTAS, DIRECTIONS, type Direction } from '../directions.js';

/** A map: [size] rows of `S`/`F`/`H`/`G`. */
export type LakeMap = readonly string[];

/** Most maps drawn before giving up (a valid map is all but certain for p >= 0.5 long before). */
const MAX_DRAWS = 10_000;

/**
 * Breadth-first shortest path of moves from S (top-left) to G over non-hole cells, or null.
 * @example lakePath(['SF', 'HG']) // ['right', 'down']
 */
export function lakePath(map: LakeMap): Direction[] | null {
  const n = map.length;
  const prev = new Map<number, { from: number; move: Direction }>();
  const seen = new Set([0]);
  const queue = [0];
  for (let head = 0; head < queue.length; head++) {
    const at = queue[head] as number;
    const r = Math.floor(at / n);
    const c = at % n;
    if (map[r]?.[c] === 'G') {
      const moves: Direction[] = [];
      for (let k = at; k !== 0; ) {
        const step = prev.get(k) as { from: number; move: Direction };
        moves.push(step.move);
        k = step.from;
      }
      return moves.reverse();
    }
    for (const move of DIRECTIONS) {
      const nr = r + DELTAS[move][0];
      const nc = c + DELTAS[move][1];
      const key = nr * n + nc;
      if (nr < 0 || nc < 0 || nr >= n || nc >= n || map[nr]?.[nc] === 'H' || seen.has(key)) continue;
      seen.add(key);
      prev.set(key, { from: at, move });
      queue.push(key);
    }
  }
  return null;
}

/**
 * A random `size` x `size` map with a guaranteed path (Gymnasium's `generate_random_map`, checked
 * by BFS). Deterministic in `seed`.
 * @example generateLakeMap(4, 0.8, 3).length // 4
 */
export function generateLakeMap(size: number, frozenProbability: number, seed: number): LakeMap {
  const rng = Rng.fromSeed(seed).fork('frozenlake/map');
  for (let draw = 0; draw < MAX_DRAWS; draw++) {
    const rows = Array.from({ length: size }, () => Array.from({ length: size }, () => (rng.next() < frozenProbability ? 'F' : 'H')));
    (rows[0] as string[])[0] = 'S';
    (rows[size - 1] as string[])[size - 1] = 'G';
    const map = rows.map((row) => row.join(''));
    if (lakePath(map) !== null) return map;
  }
  throw new RangeError(`generateLakeMap: no map with a path after ${MAX_DRAWS} draws (size ${size}, frozenProbability ${frozenProbability})`);
}

/** The directions a slippery move may take: [left-of-intended, intended, right-of-intended], as Gymnasium orders them. */
export function slipOptions(move: Direction): readonly Direction[] {
  // Gymnasium's action order LEFT, DOWN, RIGHT, UP; a move slips to its neighbours in that cycle.
  const cycle: readonly Direction[] = ['left', 'down', 'right', 'up'];
  const i = cycle.indexOf(move);
  return [cycle[(i + 3) % 4] as Direction, move, cycle[(i + 1) % 4] as Direction];
}

/**
 * The cell reached from (row, col) by `move`, staying put at the edge.
 * @example moveOnLake(4, [0, 0], 'up') // [0, 0]
 */
export function moveOnLake(size: number, [row, col]: readonly [number, number], move: Direction): [number, number] {
  const r = Math.min(size - 1, Math.max(0, row + DELTAS[move][0]));
  const c = Math.min(size - 1, Math.max(0, col + DELTAS[move][1]));
  return [r, c];
}

/**
 * Probability that the best policy reaches G within `steps` moves (finite-horizon value
 * iteration). 1 for any valid non-slippery map with a short enough path; below 1 on slippery ice.
 * @example successProbability(['SF', 'FG'], false, 2) // 1
 */
export function successProbability(map: LakeMap, slippery: boolean, steps: number): number {
  const n = map.length;
  let value = new Float64Array(n * n);
  for (let t = 0; t < steps; t++) {
    const next = new Float64Array(n * n);
    for (let r = 0; r < n; r++) {
      for (let c = 0; c < n; c++) {
        const cell = map[r]?.[c];
        if (cell === 'H' || cell === 'G') continue;
        let best = 0;
        for (const move of DIRECTIONS) {
          const outcomes = slippery ? slipOptions(move) : [move];
          let total = 0;
          for (const actual of outcomes) {
            const [nr, nc] = moveOnLake(n, [r, c], actual);
            const there = map[nr]?.[nc];
            total += there === 'G' ? 1 : there === 'H' ? 0 : (value[nr * n + nc] as number);
          }
          best = Math.max(best, total / outcomes.length);
        }
        next[r * n + c] = best;
      }
    }
    value = next;
  }
  return value[0] as number;
}
