/**
 * `Go to` levels (BabyAI ICLR 2019, `minigrid/envs/babyai/goto.py`).
 */
import { GoToInstr, ObjDesc } from '../instructions.js';
import { RejectSampling } from '../room-grid.js';
import type { LevelGenerator } from './level.js';

/**
 * GoToRedBallGrey: one 8x8 room, a red ball and 7 grey distractors.
 * @example generateLevel(goToRedBallGrey, 'GoToRedBallGrey', 0)
 */
export const goToRedBallGrey: LevelGenerator = {
  shape: { roomSize: 8, numRows: 1, numCols: 1 },
  genMission(b) {
    b.placeAgent();
    b.addObject(0, 0, 'ball', 'red');
    for (const d of b.addDistractors(undefined, undefined, 7, false)) d.color = 'grey';
    b.checkObjsReachable();
    return new GoToInstr(new ObjDesc('ball', 'red'));
  },
};

/** Shared body of GoToRedBall and GoToRedBallNoDists. */
function goToRedBallWith(numDists: number): LevelGenerator {
  return {
    shape: { roomSize: 8, numRows: 1, numCols: 1 },
    genMission(b) {
      b.placeAgent();
      b.addObject(0, 0, 'ball', 'red');
      b.addDistractors(undefined, undefined, numDists, false);
      b.checkObjsReachable();
      return new GoToInstr(new ObjDesc('ball', 'red'));
    },
  };
}

/**
 * GoToRedBall: one 8x8 room, a red ball and 7 random distractors.
 * @example generateLevel(goToRedBall, 'GoToRedBall', 0).mission // 'go to the red ball' (or 'a red ball')
 */
export const goToRedBall: LevelGenerator = goToRedBallWith(7);

/**
 * GoToRedBallNoDists: one 8x8 room and only the red ball.
 * @example generateLevel(goToRedBallNoDists, 'GoToRedBallNoDists', 0)
 */
export const goToRedBallNoDists: LevelGenerator = goToRedBallWith(0);

/**
 * GoToObj in a room of `roomSize` (GoToObjS6: 6): one object, go to it.
 * @example generateLevel(goToObj(6), 'GoToObjS6', 0)
 */
export function goToObj(roomSize: number): LevelGenerator {
  return {
    shape: { roomSize, numRows: 1, numCols: 1 },
    genMission(b) {
      b.placeAgent();
      const [obj] = b.addDistractors(undefined, undefined, 1, true);
      if (obj === undefined || obj.type === 'wall' || obj.type === 'door') throw new RejectSampling('no object');
      return new GoToInstr(new ObjDesc(obj.type, obj.color));
    },
  };
}

/**
 * GoToLocal in a room of `roomSize` with `numDists` objects (GoToLocalS8N7: 8, 7): go to one of them.
 * @example generateLevel(goToLocal(8, 7), 'GoToLocalS8N7', 0)
 */
export function goToLocal(roomSize: number, numDists: number): LevelGenerator {
  return {
    shape: { roomSize, numRows: 1, numCols: 1 },
    genMission(b) {
      b.placeAgent();
      const objs = b.addDistractors(undefined, undefined, numDists, false);
      b.checkObjsReachable();
      const obj = b.randElem(objs);
      if (obj.type === 'wall' || obj.type === 'door') throw new RejectSampling('not an object');
      return new GoToInstr(new ObjDesc(obj.type, obj.color));
    },
  };
}

/**
 * GoToRedBlueBall: one 8x8 room, exactly one red-or-blue ball and 7 distractors that are not.
 * @example generateLevel(goToRedBlueBall, 'GoToRedBlueBall', 0)
 */
export const goToRedBlueBall: LevelGenerator = {
  shape: { roomSize: 8, numRows: 1, numCols: 1 },
  genMission(b) {
    b.placeAgent();
    const dists = b.addDistractors(undefined, undefined, 7, false);
    for (const d of dists) if (d.type === 'ball' && (d.color === 'red' || d.color === 'blue')) throw new RejectSampling('can only have one blue or red ball');
    const color = b.randElem(['red', 'blue'] as const);
    b.addObject(0, 0, 'ball', color);
    b.checkObjsReachable();
    return new GoToInstr(new ObjDesc('ball', color));
  },
};

/**
 * GoToDoor: the middle room of a 3x3 grid of 7x7 rooms has four doors; go to one by colour.
 * @example generateLevel(goToDoor, 'GoToDoor', 0)
 */
export const goToDoor: LevelGenerator = {
  shape: { roomSize: 7, numRows: 3, numCols: 3 },
  genMission(b) {
    const doors = [];
    for (let k = 0; k < 4; k++) doors.push(b.addDoor(1, 1)[0]);
    b.placeAgent(1, 1);
    const door = b.randElem(doors);
    return new GoToInstr(new ObjDesc('door', door.color));
  },
};
