/**
 * Generation-time checks on an instruction (BabyAI `RoomGridLevel.validate_instrs`): a `put next
 * to` must not name the same object on both sides nor be done already, and in levels with
 * unblocking no instruction may name a key that opens a locked door.
 */
import type { Color } from '../constants.js';
import { DIR_DX, DIR_DY } from '../constants.js';
import type { Instruction } from '../instructions.js';
import type { ObjDesc } from '../instructions.js';
import { GoToInstr, OpenInstr, PickupInstr, PutNextInstr } from '../instructions.js';
import type { LevelBuilder } from '../room-grid.js';
import { RejectSampling } from '../room-grid.js';
import { AfterInstr, AndInstr, BeforeInstr } from '../sequence.js';
import type { GridWorld } from '../world.js';
import type { WorldObj } from '../world-object.js';

/**
 * Throws {@link RejectSampling} when `instr` is not acceptable for the level being built.
 * @example validateInstruction(builder, new GoToInstr(new ObjDesc('ball', 'red')), false)
 */
export function validateInstruction(b: LevelBuilder, instr: Instruction, unblocking: boolean): void {
  const lockedColors = new Set<Color>();
  if (unblocking) {
    for (const row of b.layout.rooms) for (const room of row) for (const d of room.doors) if (d && d !== true && d.isLocked) lockedColors.add(d.color);
  }
  check(b, instr, unblocking, lockedColors);
}

function check(b: LevelBuilder, instr: Instruction, unblocking: boolean, lockedColors: ReadonlySet<Color>): void {
  if (instr instanceof AndInstr || instr instanceof BeforeInstr || instr instanceof AfterInstr) {
    check(b, instr.a, unblocking, lockedColors);
    check(b, instr.b, unblocking, lockedColors);
    return;
  }
  if (instr instanceof PutNextInstr) {
    instr.resetVerifier(b.world);
    const move = instr.descMove.objSet;
    const fixed = instr.descFixed.objSet;
    if (move.some((o) => fixed.includes(o))) throw new RejectSampling('there are objects that match both lhs and rhs of PutNext');
    if (instr.objsNext(b.world)) throw new RejectSampling('objs already next to each other');
  }
  if (!unblocking) return;
  const descs: ObjDesc[] = instr instanceof PutNextInstr ? [instr.descMove, instr.descFixed] : instr instanceof GoToInstr || instr instanceof PickupInstr || instr instanceof OpenInstr ? [instr.desc] : [];
  for (const desc of descs) {
    if (desc.type === 'key' && desc.color !== null && lockedColors.has(desc.color)) {
      throw new RejectSampling('cannot do anything with/to a key that can be used to open a door');
    }
  }
}

/**
 * Whether the agent can face one of `objs` without moving anything: some cell next to one of them
 * is reachable from the agent over empty floor and open or closed doors (BabyAI
 * `check_objs_reachable`, for a subset of the objects).
 * @example someReachable(builder.world, instruction.desc.objSet) // false when walled in by other objects
 */
export function someReachable(world: GridWorld, objs: readonly WorldObj[]): boolean {
  const grid = world.grid;
  const w = grid.width;
  const seen = new Uint8Array(w * grid.height);
  const targets = new Set(objs);
  const stack: number[] = [world.agentX, world.agentY];
  while (stack.length > 0) {
    const y = stack.pop() as number;
    const x = stack.pop() as number;
    if (!grid.inBounds(x, y) || seen[y * w + x] === 1) continue;
    seen[y * w + x] = 1;
    for (let dir = 0; dir < 4; dir++) {
      const nx = x + (DIR_DX[dir] as number);
      const ny = y + (DIR_DY[dir] as number);
      const cell = grid.get(nx, ny);
      if (cell !== null && targets.has(cell)) return true;
      if (cell === null || cell.type === 'door') stack.push(nx, ny);
    }
  }
  return false;
}
