/**
 * Generation-time checks on an instruction (BabyAI `RoomGridLevel.validate_instrs`): a `put next
 * to` must not name the same object on both sides nor be done already, and in levels with
 * unblocking no instruction may name a key that opens a locked door.
 */
import type { Color } from '../constants.js';
import type { Instruction } from '../instructions.js';
import type { ObjDesc } from '../instructions.js';
import { GoToInstr, OpenInstr, PickupInstr, PutNextInstr } from '../instructions.js';
import type { LevelBuilder } from '../room-grid.js';
import { RejectSampling } from '../room-grid.js';
import { AfterInstr, AndInstr, BeforeInstr } from '../sequence.js';

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
