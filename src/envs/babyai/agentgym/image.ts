/**
 * Minigrid's partial observation image (`MiniGridEnv.gen_obs`): the 7x7 egocentric view, each cell
 * encoded as (object type, colour, door state), cells the agent cannot see as "unseen", the
 * agent's own cell showing what it carries. AgentGym's BabyAI wrapper reads its text from this
 * image, and compares images to decide whether a primitive did anything.
 *
 * One cell is packed into one number: `type * 64 + colour * 4 + state`, with Minigrid's indices
 * (type: 0 unseen, 1 empty, 2 wall, 4 door, 5 key, 6 ball, 7 box; colour: red 0 .. grey 5;
 * state: 0 open, 1 closed, 2 locked).
 */
import { COLORS, VIEW_SIZE } from '../constants.js';
import type { EgoView } from '../view.js';
import type { GridWorld } from '../world.js';
import type { WorldObj } from '../world-object.js';

/** Cells of a view image. */
export const IMAGE_CELLS = VIEW_SIZE * VIEW_SIZE;

/** Minigrid `OBJECT_TO_IDX` for the kinds BabyAI uses. */
export const TYPE_INDEX = { unseen: 0, empty: 1, wall: 2, door: 4, key: 5, ball: 6, box: 7 } as const;

const AGENT_CELL = (VIEW_SIZE - 1) * VIEW_SIZE + (VIEW_SIZE >> 1);

/**
 * Minigrid's `WorldObj.encode()`, packed.
 * @example encodeObject(makeDoor('red', { locked: true })) // 4 * 64 + 0 * 4 + 2
 */
export function encodeObject(obj: WorldObj | null): number {
  if (obj === null) return TYPE_INDEX.empty * 64;
  const state = obj.type === 'door' ? (obj.isOpen ? 0 : obj.isLocked ? 2 : 1) : 0;
  return TYPE_INDEX[obj.type] * 64 + COLORS.indexOf(obj.color) * 4 + state;
}

/** Type index of a packed cell. */
export function cellType(code: number): number {
  return code >> 6;
}

/** Colour index of a packed cell. */
export function cellColor(code: number): number {
  return (code >> 2) & 15;
}

/** Door state of a packed cell (0 open, 1 closed, 2 locked). */
export function cellState(code: number): number {
  return code & 3;
}

/**
 * Fills `out` ([49], view order: row j from far to near, column i from left to right) with the
 * observation image of `world` now. `view` is scratch.
 * @example encodeImage(world, new EgoView(), new Int32Array(IMAGE_CELLS))
 */
export function encodeImage(world: GridWorld, view: EgoView, out: Int32Array): Int32Array {
  view.compute(world);
  for (let k = 0; k < IMAGE_CELLS; k++) out[k] = view.visible[k] === 0 ? TYPE_INDEX.unseen : encodeObject(view.cells[k] ?? null);
  // Minigrid puts what the agent carries (or nothing) in the agent's cell after computing visibility.
  out[AGENT_CELL] = encodeObject(world.carrying);
  return out;
}

/**
 * Whether two images are the same (AgentGym's `verify_action`: a primitive "worked" when the
 * image changed).
 */
export function sameImage(a: Int32Array, b: Int32Array): boolean {
  for (let k = 0; k < IMAGE_CELLS; k++) if (a[k] !== b[k]) return false;
  return true;
}
