/**
 * `Go to` levels (BabyAI ICLR 2019, `minigrid/envs/babyai/goto.py`).
 */
import type { DescribableType } from '../constants.js';
import { GoToInstr, ObjDesc } from '../instructions.js';
import type { LevelBuilder } from '../room-grid.js';
import type { Room } from '../room-layout.js';
import { RejectSampling } from '../room-grid.js';
import type { WorldObj } from '../world-object.js';
import type { LevelGenerator } from './level.js';
import { levelGen } from './levelgen.js';

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

/**
 * GoTo over a rows x cols maze of rooms joined by closed doors (GoToObjMazeS7: 7x7 rooms, one
 * object): go to one of `numDists` objects, possibly in another room.
 * @example generateLevel(goToMaze(7, 1), 'GoToObjMazeS7', 0)
 */
export function goToMaze(roomSize: number, numDists: number): LevelGenerator {
  return {
    shape: { roomSize, numRows: 3, numCols: 3 },
    genMission(b) {
      b.placeAgent();
      b.connectAll();
      const objs = b.addDistractors(undefined, undefined, numDists, false);
      b.checkObjsReachable();
      const obj = b.randElem(objs);
      return new GoToInstr(new ObjDesc(obj.type as DescribableType, obj.color));
    },
  };
}

/**
 * GoToImpUnlock: go to an object inside a locked room; its key lies in another room.
 * @example generateLevel(goToImpUnlock, 'GoToImpUnlock', 0)
 */
export const goToImpUnlock: LevelGenerator = {
  shape: { roomSize: 8, numRows: 3, numCols: 3 },
  genMission(b) {
    const lockedRoom = addLockedRoomWithKey(b);
    b.connectAll();
    // Minigrid skips the locked room with `i is not id or j is not jd`, an identity test between a
    // Python int and a NumPy integer that is always true: every room gets distractors there.
    for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) if (b.minigrid || b.layout.room(i, j) !== lockedRoom.room) b.addDistractors(i, j, 2, false);
    placeAgentOutside(b, lockedRoom.room);
    b.checkObjsReachable();
    const [obj] = b.addDistractors(lockedRoom.i, lockedRoom.j, 1, false);
    if (obj === undefined) throw new RejectSampling('no object');
    return new GoToInstr(new ObjDesc(obj.type as DescribableType, obj.color));
  },
};

/**
 * A locked door on a random wall of a random room, and a key of its colour in another room
 * (the opening of GoToImpUnlock and Unlock). Minigrid means "another room" but tests it with
 * `ik is id and jk is jd` on NumPy integers, which never holds: with its generator the first room
 * drawn takes the key, the locked one included.
 * @example const { room, door } = addLockedRoomWithKey(b);
 */
export function addLockedRoomWithKey(b: LevelBuilder, keyInOtherRoom = true): { room: Room; i: number; j: number; door: WorldObj } {
  const i = b.randInt(0, b.layout.numCols);
  const j = b.randInt(0, b.layout.numRows);
  const [door] = b.addDoor(i, j, undefined, undefined, true);
  const room = b.layout.room(i, j);
  if (keyInOtherRoom) {
    for (;;) {
      const ik = b.randInt(0, b.layout.numCols);
      const jk = b.randInt(0, b.layout.numRows);
      if (!b.minigrid && ik === i && jk === j) continue;
      b.addObject(ik, jk, 'key', door.color);
      break;
    }
  }
  return { room, i, j, door };
}

/**
 * Places the agent in a random room other than `room`.
 * @example placeAgentOutside(b, lockedRoom)
 */
export function placeAgentOutside(b: LevelBuilder, room: Room): void {
  for (;;) {
    b.placeAgent();
    if (b.layout.roomAt(b.world.agentX, b.world.agentY) !== room) return;
  }
}

/**
 * GoToSeqS5R2: a 2x2 maze of 5x5 rooms, 4 distractors, a sequence of go-to instructions.
 * @example generateLevel(goToSeq, 'GoToSeqS5R2', 0).mission // e.g. 'go to a box and go to the red key, then go to a ball'
 */
export const goToSeq: LevelGenerator = levelGen({ roomSize: 5, numRows: 2, numCols: 2, numDists: 4, actionKinds: ['goto'], lockedRoomProb: 0, locations: false, unblocking: false });

/**
 * GoToObjDoor: the middle room of a 3x3 grid of 8x8 rooms holds 8 objects and 4 doors; go to one.
 * @example generateLevel(goToObjDoor, 'GoToObjDoor', 0)
 */
export const goToObjDoor: LevelGenerator = {
  shape: { roomSize: 8, numRows: 3, numCols: 3 },
  genMission(b) {
    b.placeAgent(1, 1);
    const objs: WorldObj[] = b.addDistractors(1, 1, 8, false);
    for (let k = 0; k < 4; k++) objs.push(b.addDoor(1, 1)[0]);
    b.checkObjsReachable();
    const obj = b.randElem(objs);
    return new GoToInstr(new ObjDesc(obj.type as DescribableType, obj.color));
  },
};
