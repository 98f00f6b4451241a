/**
 * The remaining levels (`minigrid/envs/babyai/other.py`): ActionObjDoor, FindObj, KeyCorridor,
 * OneRoom.
 */
import type { DescribableType } from '../constants.js';
import type { Instruction } from '../instructions.js';
import { GoToInstr, ObjDesc, OpenInstr, PickupInstr } from '../instructions.js';
import type { WorldObj } from '../world-object.js';
import type { LevelGenerator } from './level.js';

/**
 * ActionObjDoor: the 7x7 middle room holds 5 objects and 4 doors; go to / pick up an object or
 * go to / open a door.
 * @example generateLevel(actionObjDoor, 'ActionObjDoor', 0)
 */
export const actionObjDoor: LevelGenerator = {
  shape: { roomSize: 7, numRows: 3, numCols: 3 },
  genMission(b) {
    const objs: WorldObj[] = b.addDistractors(1, 1, 5, true);
    for (let k = 0; k < 4; k++) objs.push(b.addDoor(1, 1, undefined, undefined, false)[0]);
    b.placeAgent(1, 1);
    const obj = b.randElem(objs);
    const desc = new ObjDesc(obj.type as DescribableType, obj.color);
    let instr: Instruction;
    if (obj.type === 'door') instr = b.randBool() ? new GoToInstr(desc) : new OpenInstr(desc);
    else instr = b.randBool() ? new GoToInstr(desc) : new PickupInstr(desc);
    return instr;
  },
};

/**
 * FindObjS7 (`FindObjS5` with room size 7): pick up an object (named by type) in a random room of
 * a 3x3 maze; the agent starts in the middle.
 * @example generateLevel(findObj(7), 'FindObjS7', 0).mission // e.g. 'pick up the key'
 */
export function findObj(roomSize: number): LevelGenerator {
  return {
    shape: { roomSize, numRows: 3, numCols: 3, maxSteps: 20 * roomSize * roomSize },
    genMission(b) {
      // Minigrid draws i from num_rows and j from num_cols; with 3x3 the order does not matter.
      const i = b.randInt(0, 3);
      const j = b.randInt(0, 3);
      const [obj] = b.addObject(i, j);
      b.placeAgent(1, 1);
      b.connectAll();
      return new PickupInstr(new ObjDesc(obj.type as DescribableType));
    },
  };
}

/**
 * KeyCorridorS6R3: a corridor of 3 rooms down the middle column; a ball is behind a locked door
 * on its right, the key in a room on its left; pick up the ball.
 * @example generateLevel(keyCorridor(6, 3), 'KeyCorridorS6R3', 0).mission // 'pick up the ball'
 */
export function keyCorridor(roomSize: number, numRows: number): LevelGenerator {
  return {
    shape: { roomSize, numRows, numCols: 3, maxSteps: 30 * roomSize * roomSize },
    genMission(b) {
      for (let j = 1; j < numRows; j++) b.removeWall(1, j, 3);
      const roomIdx = b.randInt(0, numRows);
      const [door] = b.addDoor(2, roomIdx, 2, undefined, true);
      const [obj] = b.addObject(2, roomIdx, 'ball');
      b.addObject(0, b.randInt(0, numRows), 'key', door.color);
      b.placeAgent(1, numRows >> 1);
      b.connectAll();
      return new PickupInstr(new ObjDesc(obj.type as DescribableType));
    },
  };
}

/**
 * OneRoomS20 (`OneRoomS8` with room size 20): one big room with a ball; pick it up.
 * @example generateLevel(oneRoom(20), 'OneRoomS20', 0).mission // 'pick up the ball'
 */
export function oneRoom(roomSize: number): LevelGenerator {
  return {
    shape: { roomSize, numRows: 1, numCols: 1 },
    genMission(b) {
      const [obj] = b.addObject(0, 0, 'ball');
      b.placeAgent();
      return new PickupInstr(new ObjDesc(obj.type as DescribableType));
    },
  };
}
