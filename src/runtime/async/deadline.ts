/**
 * A deadline on any wait, on the run's clock: the asynchronous loop's waits for weight loads use
 * it so that a lost message fails the run with a message instead of hanging it.
 */
import type { Clock } from '../../core/clock.js';
import { TurnwiseError } from '../../core/errors.js';

/**
 * Resolves like `work`, or rejects with a `TurnwiseError` naming `what` after `timeoutMs` of `clock`.
 * @example await withDeadline(waitForWeights(sampler, 3), 120_000, clock, 'samplers to load weights 3');
 */
export function withDeadline<T>(work: Promise<T>, timeoutMs: number, clock: Pick<Clock, 'setTimeout' | 'clearTimeout'>, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = clock.setTimeout(() => reject(new TurnwiseError(`timed out after ${timeoutMs} ms waiting for ${what}`)), timeoutMs);
    work.then(
      (value) => {
        clock.clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clock.clearTimeout(timer);
        reject(error);
      },
    );
  });
}
