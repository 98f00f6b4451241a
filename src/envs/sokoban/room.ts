/**
 * Sokoban rules as pure functions over an immutable state: the player walks onto floor, pushes a
 * box one cell when the cell beyond it is free floor, never pulls, never pushes two boxes. Cells
 * are numbered row-major (`row * width + col`).
 *
 * Text symbols are RAGEN's: `#` wall, `_` floor, `O` target, `X` box, `√` box on target, `P`
 * player, `S` player on a target.
 */
import { DELTAS, type Direction } from '../directions.js';

/** A room: walls never change; boxes and player do. */
export interface SokobanState {
  readonly width: number;
  readonly height: number;
  /** [width * height] 1 where a wall is. */
  readonly walls: Uint8Array;
  /** Target cells, sorted. */
  readonly targets: readonly number[];
  /** Box cells, sorted. */
  readonly boxes: readonly number[];
  readonly player: number;
}

/** What a move did. */
export type MoveOutcome = 'moved' | 'pushed' | 'wall' | 'box-blocked';

/**
 * The cell next to `cell` in direction `move`, or -1 outside the room.
 * @example neighbour(state, 7, 'left') // 6 when 7 is not in column 0
 */
export function neighbour(state: Pick<SokobanState, 'width' | 'height'>, cell: number, move: Direction): number {
  const row = Math.floor(cell / state.width) + DELTAS[move][0];
  const col = (cell % state.width) + DELTAS[move][1];
  if (row < 0 || col < 0 || row >= state.height || col >= state.width) return -1;
  return row * state.width + col;
}

/** True when `cell` is outside the room or a wall. */
export function blocked(state: SokobanState, cell: number): boolean {
  return cell < 0 || state.walls[cell] === 1;
}

/**
 * Applies one move with Sokoban's push rules.
 * @example applyMove(state, 'up') // { state: <next>, outcome: 'moved' }
 */
export function applyMove(state: SokobanState, move: Direction): { state: SokobanState; outcome: MoveOutcome } {
  const next = neighbour(state, state.player, move);
  if (blocked(state, next)) return { state, outcome: 'wall' };
  const boxAt = state.boxes.indexOf(next);
  if (boxAt < 0) return { state: { ...state, player: next }, outcome: 'moved' };
  const beyond = neighbour(state, next, move);
  if (blocked(state, beyond) || state.boxes.includes(beyond)) return { state, outcome: 'box-blocked' };
  const boxes = state.boxes.map((b) => (b === next ? beyond : b)).sort((a, b) => a - b);
  return { state: { ...state, boxes, player: next }, outcome: 'pushed' };
}

/** True when every box stands on a target. */
export function isSolved(state: SokobanState): boolean {
  return state.boxes.every((b) => state.targets.includes(b));
}

/** Boxes standing on targets. */
export function boxesOnTargets(state: SokobanState): number {
  return state.boxes.filter((b) => state.targets.includes(b)).length;
}

/**
 * The room as text, one row per line, RAGEN's symbols.
 * @example drawRoom(state) // '#####\n#P_X#\n...'
 */
export function drawRoom(state: SokobanState): string {
  const lines: string[] = [];
  for (let r = 0; r < state.height; r++) {
    let line = '';
    for (let c = 0; c < state.width; c++) {
      const cell = r * state.width + c;
      const target = state.targets.includes(cell);
      if (state.walls[cell] === 1) line += '#';
      else if (cell === state.player) line += target ? 'S' : 'P';
      else if (state.boxes.includes(cell)) line += target ? '√' : 'X';
      else line += target ? 'O' : '_';
    }
    lines.push(line);
  }
  return lines.join('\n');
}

/**
 * Reads a room drawn with {@link drawRoom}'s symbols (for tests and fixtures).
 * @example parseRoom(['#####', '#PXO#', '#####'])
 */
export function parseRoom(lines: readonly string[]): SokobanState {
  const height = lines.length;
  const width = Math.max(...lines.map((l) => [...l].length));
  const walls = new Uint8Array(width * height);
  const targets: number[] = [];
  const boxes: number[] = [];
  let player = -1;
  lines.forEach((line, r) => {
    [...line.padEnd(width, '#')].forEach((ch, c) => {
      const cell = r * width + c;
      if (ch === '#') walls[cell] = 1;
      if (ch === 'O' || ch === '√' || ch === 'S') targets.push(cell);
      if (ch === 'X' || ch === '√') boxes.push(cell);
      if (ch === 'P' || ch === 'S') player = cell;
    });
  });
  if (player < 0) throw new RangeError('parseRoom: no player (P or S) in the room');
  if (boxes.length !== targets.length) throw new RangeError(`parseRoom: ${boxes.length} boxes but ${targets.length} targets`);
  return { width, height, walls, targets, boxes: boxes.sort((a, b) => a - b), player };
}
