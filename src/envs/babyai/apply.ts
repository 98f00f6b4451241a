/**
 * One text action's effect on the true state: its primitive plan, step by step, as the
 * environment runs it. Shared by the environment and by searches over text actions, so both
 * agree on every edge case (a plan stops where its next move fails, the instruction is decided,
 * or the primitive budget runs out).
 */
import type { PrimitiveAction } from './constants.js';
import { Act } from './constants.js';
import type { Instruction, VerifyStatus } from './instructions.js';
import type { GridWorld } from './world.js';

/** What running a plan did. */
export interface PlanOutcome {
  /** The instruction's status after the last primitive run. */
  readonly status: VerifyStatus;
  /** Primitives actually run (the plan may stop early). */
  readonly primitives: number;
}

/**
 * Runs `plan` on `world`, verifying `instruction` after every primitive.
 * @example applyPlan(world, instruction, [Act.left, Act.pickup]) // { status: 'success', primitives: 2 }
 */
export function applyPlan(world: GridWorld, instruction: Instruction, plan: readonly PrimitiveAction[]): PlanOutcome {
  let status: VerifyStatus = 'continue';
  let primitives = 0;
  for (const primitive of plan) {
    const changed = world.step(primitive);
    primitives++;
    if (primitive === Act.drop && changed) instruction.updateObjsPoss(world);
    status = instruction.verify(world, primitive);
    if (status !== 'continue' || world.outOfSteps || !changed) break;
  }
  return { status, primitives };
}
