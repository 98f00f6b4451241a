/**
 * `Open` levels (BabyAI ICLR 2019, `minigrid/envs/babyai/open.py`).
 */
import { LOC_NAMES } from '../constants.js';
import { ObjDesc, OpenInstr } from '../instructions.js';
import { AfterInstr, BeforeInstr } from '../sequence.js';
import type { WorldObj } from '../world-object.js';
import type { LevelGenerator } from './level.js';

/**
 * OpenRedDoor: two 5x5 rooms side by side joined by a closed red door; open it.
 * @example generateLevel(openRedDoor, 'OpenRedDoor', 0).mission // 'open the red door'
 */
export const openRedDoor: LevelGenerator = {
  shape: { roomSize: 5, numRows: 1, numCols: 2 },
  genMission(b) {
    b.addDoor(0, 0, 0, 'red', false);
    b.placeAgent(0, 0);
    return new OpenInstr(new ObjDesc('door', 'red'));
  },
};

/**
 * Open: a 3x3 maze of 8x8 rooms with 18 objects; open one of its doors (by colour).
 * @example generateLevel(open, 'Open', 0).mission // e.g. 'open a red door'
 */
export const open: LevelGenerator = {
  shape: { roomSize: 8, numRows: 3, numCols: 3 },
  genMission(b) {
    b.placeAgent();
    b.connectAll();
    b.addDistractors(undefined, undefined, 18, false);
    b.checkObjsReachable();
    const doors: WorldObj[] = [];
    for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) for (const d of b.layout.room(i, j).doors) if (d && d !== true) doors.push(d);
    const door = b.randElem(doors);
    return new OpenInstr(new ObjDesc('door', door.color));
  },
};

/**
 * OpenDoorLoc (`OpenDoor` with `select_by: loc`): the middle room of 3x3 has four doors of
 * distinct colours; open the one described by where it is relative to the agent.
 * @example generateLevel(openDoorLoc, 'OpenDoorLoc', 0).mission // e.g. 'open the door on your left'
 */
export const openDoorLoc: LevelGenerator = {
  shape: { roomSize: 8, numRows: 3, numCols: 3 },
  genMission(b) {
    const colors = b.randSubset(b.colors, 4);
    const doors = colors.map((c, i) => b.addDoor(1, 1, i, c, false)[0]);
    if (doors.length !== 4) throw new RangeError('openDoorLoc: expected four doors');
    // Minigrid draws the location word before placing the agent; it is resolved against the agent's pose.
    const desc = new ObjDesc('door', null, b.randElem(LOC_NAMES));
    b.placeAgent(1, 1);
    return new OpenInstr(desc);
  },
};

/**
 * OpenRedBlueDoorsDebug (`OpenTwoDoors`): a red door on the left wall and a blue one on the right
 * wall of a 6x6 middle room; open red, then blue. Toggling any other door first fails the episode.
 * @example generateLevel(openRedBlueDoorsDebug, 'OpenRedBlueDoorsDebug', 0).mission // 'open the red door, then open the blue door'
 */
export const openRedBlueDoorsDebug: LevelGenerator = {
  shape: { roomSize: 6, numRows: 3, numCols: 3, maxSteps: 20 * 36 },
  genMission(b) {
    b.randSubset(b.colors, 2); // Minigrid draws two colours before the fixed ones override them.
    const [d1] = b.addDoor(1, 1, 2, 'red', false);
    const [d2] = b.addDoor(1, 1, 0, 'blue', false);
    b.placeAgent(1, 1);
    return new BeforeInstr(new OpenInstr(new ObjDesc('door', d1.color), true), new OpenInstr(new ObjDesc('door', d2.color)), false, b.minigrid);
  },
};

/**
 * OpenDoorsOrderN4Debug: four doors of distinct colours around a 6x6 middle room; open one, or
 * two in the order given. Toggling a wrong door fails the episode.
 * @example generateLevel(openDoorsOrder(4, true), 'OpenDoorsOrderN4Debug', 0)
 */
export function openDoorsOrder(numDoors: number, debug: boolean): LevelGenerator {
  return {
    shape: { roomSize: 6, numRows: 3, numCols: 3, maxSteps: 20 * 36 },
    genMission(b) {
      const colors = b.randSubset(b.colors, numDoors);
      const doors = colors.map((c) => b.addDoor(1, 1, undefined, c, false)[0]);
      b.placeAgent(1, 1);
      const [door1, door2] = b.randSubset(doors, 2) as [WorldObj, WorldObj];
      const desc1 = new ObjDesc('door', door1.color);
      const desc2 = new ObjDesc('door', door2.color);
      const mode = b.randInt(0, 3);
      if (mode === 0) return new OpenInstr(desc1, debug);
      if (mode === 1) return new BeforeInstr(new OpenInstr(desc1, debug), new OpenInstr(desc2, debug), false, b.minigrid);
      return new AfterInstr(new OpenInstr(desc1, debug), new OpenInstr(desc2, debug), false, b.minigrid);
    },
  };
}
