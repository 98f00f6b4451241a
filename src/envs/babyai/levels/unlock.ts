/**
 * `Unlock` levels (BabyAI ICLR 2019, `minigrid/envs/babyai/unlock.py`): locked doors and the keys
 * that open them.
 */
import { ObjDesc, OpenInstr, PickupInstr } from '../instructions.js';
import type { DescribableType } from '../constants.js';
import { makeObject } from '../world-object.js';
import { addLockedRoomWithKey, placeAgentOutside } from './goto.js';
import type { LevelGenerator } from './level.js';

/**
 * Unlock: a 3x3 maze of 8x8 rooms, one room locked, its key elsewhere; open the locked door.
 * @example generateLevel(unlock, 'Unlock', 0).mission // e.g. 'open the purple door'
 */
export const unlock: LevelGenerator = {
  shape: { roomSize: 8, numRows: 3, numCols: 3 },
  genMission(b) {
    const locked = addLockedRoomWithKey(b);
    if (b.randBool()) b.connectAll(b.colors.filter((c) => c !== locked.door.color));
    else b.connectAll();
    // As in GoToImpUnlock, Minigrid's `is not` test lets the locked room have distractors too.
    for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) if (b.minigrid || b.layout.room(i, j) !== locked.room) b.addDistractors(i, j, 3, false);
    placeAgentOutside(b, locked.room);
    b.checkObjsReachable();
    return new OpenInstr(new ObjDesc('door', locked.door.color));
  },
};

/**
 * UnlockLocalDist (`UnlockLocal` with distractors): open the locked door of the agent's room; the
 * key and 3 distractors are in the room.
 * @example generateLevel(unlockLocal(true), 'UnlockLocalDist', 0).mission // 'open the door'
 */
export function unlockLocal(distractors: boolean): LevelGenerator {
  return {
    shape: { roomSize: 8, numRows: 3, numCols: 3 },
    genMission(b) {
      const [door] = b.addDoor(1, 1, undefined, undefined, true);
      b.addObject(1, 1, 'key', door.color);
      if (distractors) b.addDistractors(1, 1, 3, true);
      b.placeAgent(1, 1);
      return new OpenInstr(new ObjDesc('door'));
    },
  };
}

/**
 * KeyInBox: open the locked door of the agent's room; the key is hidden in a box (toggle the box).
 * @example generateLevel(keyInBox, 'KeyInBox', 0).mission // 'open the door'
 */
export const keyInBox: LevelGenerator = {
  shape: { roomSize: 8, numRows: 3, numCols: 3 },
  genMission(b) {
    const [door] = b.addDoor(1, 1, undefined, undefined, true);
    const box = makeObject('box', b.randColor());
    box.contains = makeObject('key', door.color);
    b.placeInRoom(1, 1, box);
    b.placeAgent(1, 1);
    return new OpenInstr(new ObjDesc('door'));
  },
};

/**
 * UnlockPickupDist: two 6x6 rooms joined by a locked door; the key is in the agent's room; pick up
 * the box behind the door (4 distractors anywhere).
 * @example generateLevel(unlockPickup(true), 'UnlockPickupDist', 0)
 */
export function unlockPickup(distractors: boolean): LevelGenerator {
  // Minigrid's `if max is None` never holds, so the budget stays BabyAI's default: 1 x 6² x 2 rooms.
  return {
    shape: { roomSize: 6, numRows: 1, numCols: 2 },
    genMission(b) {
      const [obj] = b.addObject(1, 0, 'box');
      const [door] = b.addDoor(0, 0, 0, undefined, true);
      b.addObject(0, 0, 'key', door.color);
      if (distractors) b.addDistractors(undefined, undefined, 4, true);
      b.placeAgent(0, 0);
      return new PickupInstr(new ObjDesc(obj.type as DescribableType, obj.color));
    },
  };
}

/**
 * BlockedUnlockPickup: like UnlockPickup, but a ball blocks the door from the agent's side.
 * @example generateLevel(blockedUnlockPickup, 'BlockedUnlockPickup', 0).mission // 'pick up the box'
 */
export const blockedUnlockPickup: LevelGenerator = {
  shape: { roomSize: 6, numRows: 1, numCols: 2, maxSteps: 16 * 36 },
  genMission(b) {
    b.addObject(1, 0, 'box');
    const [door, [dx, dy]] = b.addDoor(0, 0, 0, undefined, true);
    b.world.grid.set(dx - 1, dy, makeObject('ball', b.randColor()));
    b.addObject(0, 0, 'key', door.color);
    b.placeAgent(0, 0);
    return new PickupInstr(new ObjDesc('box'));
  },
};

/**
 * UnlockToUnlock: three 6x6 rooms in a row; the ball is behind a locked door whose key is behind
 * another locked door whose key is in the agent's room.
 * @example generateLevel(unlockToUnlock, 'UnlockToUnlock', 0).mission // 'pick up the ball'
 */
export const unlockToUnlock: LevelGenerator = {
  shape: { roomSize: 6, numRows: 1, numCols: 3, maxSteps: 30 * 36 },
  genMission(b) {
    const [c0, c1] = b.randSubset(b.colors, 2);
    if (c0 === undefined || c1 === undefined) throw new RangeError('unlockToUnlock: two colours expected');
    b.addDoor(0, 0, 0, c0, true);
    b.addObject(2, 0, 'key', c0);
    b.addDoor(1, 0, 0, c1, true);
    b.addObject(1, 0, 'key', c1);
    b.addObject(0, 0, 'ball');
    b.placeAgent(1, 0);
    return new PickupInstr(new ObjDesc('ball'));
  },
};
