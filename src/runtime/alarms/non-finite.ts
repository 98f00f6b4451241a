/**
 * The one alarm that is not a threshold: a training step whose loss or gradient norm is NaN or
 * ±Inf. The trainer already skips an update whose gradient norm is not finite, but the run must
 * not go on as if it had trained, nor write a checkpoint of that step: it stops, with the alarm
 * stored as a run event (`alarm/nonFinite`) and reported, and fails resumable from the last good
 * checkpoint (the step's trajectories are already in the run store).
 */
import { TurnwiseError } from '../../core/errors.js';

/** The step metrics that must be finite (those absent, e.g. the critic's without a critic, are skipped). */
export const FINITE_METRICS = ['loss/total', 'loss/policy', 'optim/gradNorm', 'loss/value', 'optim/criticGradNorm'] as const;

/**
 * The metrics of `FINITE_METRICS` present in `metrics` with a non-finite value.
 * @example nonFiniteMetrics({ 'loss/total': NaN, 'optim/gradNorm': 1 }) // ['loss/total']
 */
export function nonFiniteMetrics(metrics: Readonly<Record<string, number>>): string[] {
  return FINITE_METRICS.filter((name) => typeof metrics[name] === 'number' && !Number.isFinite(metrics[name]));
}

/**
 * A training step produced a non-finite loss or gradient; the run stops before checkpointing it.
 * @example throw new NonFiniteTrainingError(12, { 'loss/total': NaN });
 */
export class NonFiniteTrainingError extends TurnwiseError {
  constructor(
    readonly step: number,
    readonly values: Readonly<Record<string, number>>,
  ) {
    super(`training went non-finite at step ${step} (${Object.entries(values).map(([k, v]) => `${k} ${v}`).join(', ')}): stopped before writing a checkpoint of it; resume from the last checkpoint with a lower algorithm.lr or algorithm.gradClip`);
  }
}
