/**
 * Instruction combinators (`minigrid/envs/babyai/core/verifier.py` `AndInstr`, `BeforeInstr`,
 * `AfterInstr`): "A and B" (both, any order), "A, then B" (A completed before B counts) and
 * "A after you B" (B first). A part's success sticks; in a sequence the second part is not
 * verified at all until the first has succeeded, so doing it early does not count.
 *
 * One deliberate difference from Minigrid: on the primitive step that completes the first part,
 * Minigrid verifies the second part with that same step, and a strict second part then fails on
 * it (the toggle that opened door A counts as "toggled a wrong door" for B), which makes two thirds
 * of OpenDoorsOrderN4Debug unwinnable. With turnwise's generator that hand-over step can complete
 * the second part but never fail it; Minigrid's generator builds its combinators with
 * `handOverFailures` set, which keeps Minigrid's rule.
 */
import type { PrimitiveAction } from './constants.js';
import type { ActionInstr, Instruction, VerifierState, VerifyStatus } from './instructions.js';
import type { GridWorld } from './world.js';

/** Status of the second part on the step that completed the first: success counts, failure only when asked. */
function handOver(status: VerifyStatus, failures: boolean): VerifyStatus {
  return status === 'failure' && !failures ? 'continue' : status;
}

/** Shared shape of the three combinators. */
abstract class Combined {
  abstract readonly kind: 'and' | 'before' | 'after';
  protected aStatus: VerifyStatus = 'continue';
  protected bStatus: VerifyStatus = 'continue';
  constructor(
    readonly a: Instruction,
    readonly b: Instruction,
    /** Fail when the part that must wait succeeds first (BabyAI `strict`; no level uses it). */
    readonly strict = false,
    /** Let the second part fail on the step that completed the first, as Minigrid does. */
    readonly handOverFailures = false,
  ) {}
  get navs(): number {
    return this.a.navs + this.b.navs;
  }
  resetVerifier(world: GridWorld): void {
    this.a.resetVerifier(world);
    this.b.resetVerifier(world);
    this.aStatus = 'continue';
    this.bStatus = 'continue';
  }
  updateObjsPoss(world: GridWorld): void {
    this.a.updateObjsPoss(world);
    this.b.updateObjsPoss(world);
  }
  saveVerifier(): VerifierState {
    return { aStatus: this.aStatus, bStatus: this.bStatus, a: this.a.saveVerifier(), b: this.b.saveVerifier() };
  }
  loadVerifier(state: VerifierState): void {
    if (!('aStatus' in state)) throw new TypeError('loadVerifier: state of a single action given to a combined instruction');
    this.aStatus = state.aStatus;
    this.bStatus = state.bStatus;
    this.a.loadVerifier(state.a);
    this.b.loadVerifier(state.b);
  }
  abstract surface(world: GridWorld): string;
  abstract verify(world: GridWorld, action: PrimitiveAction): VerifyStatus;
  abstract pending(): ActionInstr[];
}

/**
 * "A and B": success once both parts have succeeded, in either order.
 * @example new AndInstr(new GoToInstr(red), new PickupInstr(key))
 */
export class AndInstr extends Combined implements Instruction {
  readonly kind = 'and' as const;
  surface(world: GridWorld): string {
    return `${this.a.surface(world)} and ${this.b.surface(world)}`;
  }
  verify(world: GridWorld, action: PrimitiveAction): VerifyStatus {
    if (this.aStatus !== 'success') this.aStatus = this.a.verify(world, action);
    if (this.bStatus !== 'success') this.bStatus = this.b.verify(world, action);
    return this.aStatus === 'success' && this.bStatus === 'success' ? 'success' : 'continue';
  }
  pending(): ActionInstr[] {
    return [...(this.aStatus === 'success' ? [] : this.a.pending()), ...(this.bStatus === 'success' ? [] : this.b.pending())];
  }
}

/**
 * "A, then B": B is verified only once A has succeeded (on the same primitive step, too).
 * @example new BeforeInstr(new OpenInstr(red), new OpenInstr(blue))
 */
export class BeforeInstr extends Combined implements Instruction {
  readonly kind = 'before' as const;
  surface(world: GridWorld): string {
    return `${this.a.surface(world)}, then ${this.b.surface(world)}`;
  }
  verify(world: GridWorld, action: PrimitiveAction): VerifyStatus {
    if (this.aStatus === 'success') {
      this.bStatus = this.b.verify(world, action);
      return this.bStatus;
    }
    this.aStatus = this.a.verify(world, action);
    if (this.aStatus === 'failure') return 'failure';
    if (this.aStatus === 'success') {
      this.bStatus = handOver(this.b.verify(world, action), this.handOverFailures);
      return this.bStatus;
    }
    if (this.strict && this.b.verify(world, action) === 'success') return 'failure';
    return 'continue';
  }
  pending(): ActionInstr[] {
    return this.aStatus === 'success' ? this.b.pending() : [...this.a.pending(), ...this.b.pending()];
  }
}

/**
 * "A after you B": A is verified only once B has succeeded.
 * @example new AfterInstr(new OpenInstr(red), new OpenInstr(blue)) // open blue first
 */
export class AfterInstr extends Combined implements Instruction {
  readonly kind = 'after' as const;
  surface(world: GridWorld): string {
    return `${this.a.surface(world)} after you ${this.b.surface(world)}`;
  }
  verify(world: GridWorld, action: PrimitiveAction): VerifyStatus {
    if (this.bStatus === 'success') {
      this.aStatus = this.a.verify(world, action);
      return this.aStatus;
    }
    this.bStatus = this.b.verify(world, action);
    if (this.bStatus === 'failure') return 'failure';
    if (this.bStatus === 'success') {
      this.aStatus = handOver(this.a.verify(world, action), this.handOverFailures);
      return this.aStatus;
    }
    if (this.strict && this.a.verify(world, action) === 'success') return 'failure';
    return 'continue';
  }
  pending(): ActionInstr[] {
    return this.bStatus === 'success' ? this.a.pending() : [...this.b.pending(), ...this.a.pending()];
  }
}
