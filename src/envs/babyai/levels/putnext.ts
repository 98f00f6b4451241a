/**
 * `Put next to` levels (BabyAI ICLR 2019, `minigrid/envs/babyai/putnext.py`, and MoveTwoAcross
 * from `other.py`).
 */
import type { DescribableType } from '../constants.js';
import { ObjDesc, PutNextInstr } from '../instructions.js';
import { BeforeInstr } from '../sequence.js';
import type { WorldObj } from '../world-object.js';
import type { LevelGenerator } from './level.js';

function desc(obj: WorldObj): ObjDesc {
  return new ObjDesc(obj.type as DescribableType, obj.color);
}

/**
 * PutNextLocal: one room of `roomSize` with `numObjs` distinct objects; put one next to another.
 * @example generateLevel(putNextLocal(6, 4), 'PutNextLocalS6N4', 0).mission // e.g. 'put the red ball next to the blue key'
 */
export function putNextLocal(roomSize: number, numObjs: number): LevelGenerator {
  return {
    shape: { roomSize, numRows: 1, numCols: 1 },
    genMission(b) {
      b.placeAgent();
      const objs = b.addDistractors(undefined, undefined, numObjs, true);
      b.checkObjsReachable();
      const [o1, o2] = b.randSubset(objs, 2) as [WorldObj, WorldObj];
      return new PutNextInstr(desc(o1), desc(o2));
    },
  };
}

/**
 * PutNext: two rooms of `roomSize` side by side with the wall between them removed, `objsPerRoom`
 * distinct objects in each; put an object from one side next to one from the other. With
 * `startCarrying` (PutNextS7N4Carrying) the agent starts holding the object to move.
 * @example generateLevel(putNext(7, 4, true), 'PutNextS7N4Carrying', 0)
 */
export function putNext(roomSize: number, objsPerRoom: number, startCarrying: boolean): LevelGenerator {
  return {
    shape: { roomSize, numRows: 1, numCols: 2, maxSteps: 8 * roomSize * roomSize },
    genMission(b) {
      b.placeAgent(0, 0);
      const left = b.addDistractors(0, 0, objsPerRoom, true);
      const right = b.addDistractors(1, 0, objsPerRoom, true);
      b.removeWall(0, 0, 0);
      let a = b.randElem(left);
      let c = b.randElem(right);
      if (b.randBool()) [a, c] = [c, a];
      if (startCarrying) b.startCarrying = a;
      return new PutNextInstr(desc(a), desc(c));
    },
  };
}

/**
 * MoveTwoAcross: like PutNext with `objsPerRoom` per room; put a left object next to a right one,
 * then a right object next to a left one.
 * @example generateLevel(moveTwoAcross(8, 9), 'MoveTwoAcrossS8N9', 0)
 */
export function moveTwoAcross(roomSize: number, objsPerRoom: number): LevelGenerator {
  return {
    shape: { roomSize, numRows: 1, numCols: 2, maxSteps: 16 * roomSize * roomSize },
    genMission(b) {
      b.placeAgent(0, 0);
      const left = b.addDistractors(0, 0, objsPerRoom, true);
      const right = b.addDistractors(1, 0, objsPerRoom, true);
      b.removeWall(0, 0, 0);
      const [a, d] = b.randSubset(left, 2) as [WorldObj, WorldObj];
      const [c1, c2] = b.randSubset(right, 2) as [WorldObj, WorldObj];
      return new BeforeInstr(new PutNextInstr(desc(a), desc(c1)), new PutNextInstr(desc(c2), desc(d)), false, b.minigrid);
    },
  };
}
