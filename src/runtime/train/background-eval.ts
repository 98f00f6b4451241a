/**
 * The held-out evaluation of a synchronous run, in the background: the evaluation after step `s`
 * samples with the weights of step `s`, and so does the rollout of step `s + 1`, so the two (and
 * that step's gradients) can run at once. The evaluation runs on a rollout runner of its own (its
 * own env sessions) through the same sampler; each episode draws from its own seeded stream, so
 * its trajectories are those it would give alone. Two gates keep every stored and printed number
 * as it was: the learner waits for it before it publishes new weights to the sampler, and a step
 * is logged only after it (so its eval line still comes before the next step's line).
 */
import { TurnwiseError } from '../../core/errors.js';

/** At most one evaluation in flight; {@link settled} waits for it and reports its failure. */
export class BackgroundEvaluation {
  private pending: Promise<void> | null = null;
  private failure: Error | null = null;

  /** Starts `evaluate` (labelled with the completed steps it evaluates) once the previous one settled. */
  start(completedSteps: number, evaluate: () => Promise<unknown>): void {
    const previous = this.pending ?? Promise.resolve();
    this.pending = previous.then(async () => {
      try {
        await evaluate();
      } catch (error) {
        this.failure ??= new TurnwiseError(`the evaluation after step ${completedSteps} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
      }
    });
  }

  /**
   * Resolves once no evaluation is in flight; rejects, every time, once one has failed (the run
   * ends failed, as a failed evaluation in the foreground ends it).
   */
  async settled(): Promise<void> {
    await this.pending;
    if (this.failure !== null) throw this.failure;
  }
}
