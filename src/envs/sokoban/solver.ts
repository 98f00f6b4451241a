/**
 * Breadth-first Sokoban solver over (player, boxes) states: the shortest move sequence to a solved
 * room, or null when none exists within the node budget. It verifies every generated room and is
 * the gold answer for the test split.
 */
import { DIRECTIONS, type Direction } from '../directions.js';
import { applyMove, isSolved, type SokobanState } from './room.js';

const stateKey = (s: SokobanState): string => `${s.player}|${s.boxes.join(',')}`;

/**
 * Shortest solution, `null` when unsolvable, `'budget'` when `maxNodes` states were expanded first.
 * @example solveSokoban(parseRoom(['#####', '#PXO#', '#####'])) // ['right']
 */
export function solveSokoban(start: SokobanState, maxNodes = 200_000): Direction[] | null | 'budget' {
  if (isSolved(start)) return [];
  const parent = new Map<string, { from: string; move: Direction } | null>([[stateKey(start), null]]);
  let frontier: SokobanState[] = [start];
  let expanded = 0;
  while (frontier.length > 0) {
    const next: SokobanState[] = [];
    for (const state of frontier) {
      if (++expanded > maxNodes) return 'budget';
      const from = stateKey(state);
      for (const move of DIRECTIONS) {
        const { state: after, outcome } = applyMove(state, move);
        if (outcome === 'wall' || outcome === 'box-blocked') continue;
        const key = stateKey(after);
        if (parent.has(key)) continue;
        parent.set(key, { from, move });
        if (isSolved(after)) {
          const moves: Direction[] = [];
          for (let k: string | undefined = key; k !== undefined; ) {
            const link = parent.get(k);
            if (link === null || link === undefined) break;
            moves.push(link.move);
            k = link.from;
          }
          return moves.reverse();
        }
        next.push(after);
      }
    }
    frontier = next;
  }
  return null;
}
