/**
 * `Pick up` levels (BabyAI ICLR 2019, `minigrid/envs/babyai/pickup.py`).
 */
import type { DescribableType } from '../constants.js';
import { ObjDesc, PickupInstr } from '../instructions.js';
import { RejectSampling } from '../room-grid.js';
import type { LevelGenerator } from './level.js';

/**
 * PickupDist: one 7x7 room with 5 distinct objects; pick up one named by type, colour or both.
 * `debug` (PickupDistDebug) fails the episode when a wrong object is picked up.
 * @example generateLevel(pickupDist(true), 'PickupDistDebug', 0).mission // e.g. 'pick up a red object'
 */
export function pickupDist(debug: boolean): LevelGenerator {
  return {
    shape: { roomSize: 7, numRows: 1, numCols: 1 },
    genMission(b) {
      const objs = b.addDistractors(undefined, undefined, 5, true);
      b.placeAgent(0, 0);
      const obj = b.randElem(objs);
      if (obj.type === 'wall' || obj.type === 'door') throw new RejectSampling('not an object');
      let type: DescribableType | null = obj.type;
      let color: typeof obj.color | null = obj.color;
      const selectBy = b.randElem(['type', 'color', 'both'] as const);
      if (selectBy === 'color') type = null;
      else if (selectBy === 'type') color = null;
      return new PickupInstr(new ObjDesc(type, color), debug);
    },
  };
}
