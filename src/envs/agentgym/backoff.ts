/**
 * Exponential back-off with "equal jitter" (AWS architecture blog, "Exponential Backoff and
 * Jitter", 2015): half the capped exponential delay is fixed, half is drawn from the injected Rng,
 * so that many clients retrying one server spread out instead of retrying in lock-step.
 */
import type { Rng } from '../../core/rng.js';

/** Back-off parameters, in milliseconds. */
export interface BackoffOptions {
  /** Delay before the first retry (before jitter). */
  readonly baseMs: number;
  /** Cap on the exponential delay. */
  readonly maxMs: number;
}

/**
 * Delay before retry number `attempt` (0 = first retry): `cap/2 + u * cap/2` with
 * `cap = min(maxMs, baseMs * 2^attempt)` and `u` uniform in [0, 1) from `rng`.
 * @example backoffDelay(2, { baseMs: 100, maxMs: 2000 }, rng) // in [200, 400)
 */
export function backoffDelay(attempt: number, options: BackoffOptions, rng: Rng): number {
  const cap = Math.min(options.maxMs, options.baseMs * 2 ** attempt);
  return cap / 2 + rng.next() * (cap / 2);
}
