/**
 * `Open` levels (BabyAI ICLR 2019, `minigrid/envs/babyai/open.py`).
 */
import { ObjDesc, OpenInstr } from '../instructions.js';
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
