/**
 * Cell contents of the grid: walls, doors, keys, balls, boxes (MiniGrid `world_object.py`
 * semantics). Objects are plain mutable records; instructions track them by identity, as BabyAI's
 * verifiers do, so a moved object is still "the" object.
 */
import type { Color, ObjectType, PickableType } from './constants.js';

/** One object in a grid cell (or carried by the agent). */
export interface WorldObj {
  readonly type: ObjectType;
  color: Color;
  /** Doors only: open doors can be walked through and seen through. */
  isOpen: boolean;
  /** Doors only: locked doors open only with a key of the same colour. */
  isLocked: boolean;
  /** Boxes only: what toggling the box reveals (null = empty box). */
  contains: WorldObj | null;
}

/**
 * The one wall record shared by every wall cell (walls have no state, so identity is irrelevant).
 * @example grid.set(0, 0, WALL)
 */
export const WALL: WorldObj = Object.freeze({ type: 'wall', color: 'grey', isOpen: false, isLocked: false, contains: null }) as WorldObj;

/**
 * A new key, ball or box.
 * @example makeObject('ball', 'red')
 */
export function makeObject(type: PickableType, color: Color): WorldObj {
  return { type, color, isOpen: false, isLocked: false, contains: null };
}

/**
 * A new door (closed unless `isOpen`; a locked door is always closed).
 * @example makeDoor('red', { locked: true })
 */
export function makeDoor(color: Color, state: { open?: boolean; locked?: boolean } = {}): WorldObj {
  const locked = state.locked === true;
  return { type: 'door', color, isOpen: !locked && state.open === true, isLocked: locked, contains: null };
}

/**
 * Whether the agent may stand on a cell holding `obj` (empty cells and open doors).
 * @example canOverlap(null) // true
 */
export function canOverlap(obj: WorldObj | null): boolean {
  return obj === null || (obj.type === 'door' && obj.isOpen);
}

/**
 * Whether sight passes through `obj` (walls and closed doors block it; MiniGrid `see_behind`).
 * @example seeBehind(WALL) // false
 */
export function seeBehind(obj: WorldObj | null): boolean {
  if (obj === null) return true;
  if (obj.type === 'wall') return false;
  if (obj.type === 'door') return obj.isOpen;
  return true;
}

/**
 * Whether the agent can pick `obj` up (keys, balls, boxes).
 * @example canPickup(makeObject('key', 'red')) // true
 */
export function canPickup(obj: WorldObj | null): boolean {
  return obj !== null && (obj.type === 'key' || obj.type === 'ball' || obj.type === 'box');
}

/**
 * MiniGrid's door state word: `open`, `closed` or `locked`.
 * @example doorState(makeDoor('red')) // 'closed'
 */
export function doorState(door: WorldObj): 'open' | 'closed' | 'locked' {
  if (door.isOpen) return 'open';
  return door.isLocked ? 'locked' : 'closed';
}
