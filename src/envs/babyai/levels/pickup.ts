/**
 * `Pick up` levels (BabyAI ICLR 2019, `minigrid/envs/babyai/pickup.py`).
 */
import type { DescribableType } from '../constants.js';
import { ObjDesc, PickupInstr } from '../instructions.js';
import { RejectSampling } from '../room-grid.js';
import type { LevelGenerator } from './level.js';
import { someReachable } from './validate.js';
import { levelGen } from './levelgen.js';

/**
 * PickupDist: one 7x7 room with 5 distinct objects; pick up one named by type, colour or both.
 * `debug` (PickupDistDebug) fails the episode when a wrong object is picked up, so its seeds whose
 * every target is walled in by other objects are regenerated (Minigrid keeps them; no policy wins them).
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
      const desc = new ObjDesc(type, color, null, b.minigrid);
      // Debug levels fail on touching a wrong object, so a target walled in by others is unwinnable:
      // turnwise's generator regenerates (only such seeds change; see the bot benchmark), Minigrid keeps them.
      desc.findMatching(b.world);
      if (debug && !b.minigrid && !someReachable(b.world, desc.objSet)) throw new RejectSampling('every target is walled in by other objects');
      return new PickupInstr(desc, debug);
    },
  };
}

/**
 * Pickup: a 3x3 maze of 8x8 rooms with 18 objects; pick up one of them.
 * @example generateLevel(pickup, 'Pickup', 0)
 */
export const pickup: LevelGenerator = {
  shape: { roomSize: 8, numRows: 3, numCols: 3 },
  genMission(b) {
    b.placeAgent();
    b.connectAll();
    const objs = b.addDistractors(undefined, undefined, 18, false);
    b.checkObjsReachable();
    const obj = b.randElem(objs);
    return new PickupInstr(new ObjDesc(obj.type as DescribableType, obj.color));
  },
};

/**
 * UnblockPickup: like Pickup with 20 objects, kept only when some object blocks the way.
 * @example generateLevel(unblockPickup, 'UnblockPickup', 0)
 */
export const unblockPickup: LevelGenerator = {
  shape: { roomSize: 8, numRows: 3, numCols: 3 },
  genMission(b) {
    b.placeAgent();
    b.connectAll();
    const objs = b.addDistractors(undefined, undefined, 20, false);
    if (b.checkObjsReachable(false)) throw new RejectSampling('all objects reachable');
    const obj = b.randElem(objs);
    return new PickupInstr(new ObjDesc(obj.type as DescribableType, obj.color));
  },
};

/**
 * PickupLoc: one 8x8 room, 8 objects; pick up one described by colour/type and maybe location.
 * @example generateLevel(pickupLoc, 'PickupLoc', 0).mission // e.g. 'pick up the ball on your left'
 */
export const pickupLoc: LevelGenerator = levelGen({ actionKinds: ['pickup'], instrKinds: ['action'], numRows: 1, numCols: 1, numDists: 8, lockedRoomProb: 0, locations: true, unblocking: false });

/**
 * PickupAbove: 3x3 maze of 6x6 rooms; pick up the object in the room above the agent's.
 * @example generateLevel(pickupAbove, 'PickupAbove', 0)
 */
export const pickupAbove: LevelGenerator = {
  shape: { roomSize: 6, numRows: 3, numCols: 3, maxSteps: 8 * 36 },
  genMission(b) {
    const [obj] = b.addObject(1, 0);
    b.addDoor(1, 1, 3, undefined, false);
    b.placeAgent(1, 1);
    b.connectAll();
    return new PickupInstr(new ObjDesc(obj.type as DescribableType, obj.color));
  },
};
