/**
 * Retries with exponential back-off for calls to rate-limited HTTP APIs.
 *
 * Why our own loop and not the `openai` client's `maxRetries`: the client sleeps on real timers,
 * which tests cannot drive; here `sleep` is injected (time as a parameter), jitter comes from a
 * seeded draw, and every attempt is reported, so the rate-limit path is tested without waiting.
 */
import { InvalidArgumentError } from '../core/errors.js';

/** Back-off settings. */
export interface RetryPolicy {
  /** Retries after the first attempt (0 = no retry). */
  readonly maxRetries: number;
  /** Delay before the first retry; doubles each retry. */
  readonly initialDelayMs: number;
  /** Cap on one delay (also caps a server's `retry-after`). */
  readonly maxDelayMs: number;
}

/** What the loop needs from the outside world. */
export interface RetryEnv {
  /** Waits `ms` (a real timer in production, a recorded no-op in tests). */
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Uniform draw in [0, 1) for jitter; default: none (factor 1). */
  readonly random?: () => number;
  /** Called before each retry (logging, metrics). */
  readonly onRetry?: (info: { attempt: number; delayMs: number; error: unknown }) => void;
}

/** How the loop classifies an error. */
export interface RetryDecision {
  readonly retry: boolean;
  /** Delay the server asked for (`retry-after`), if any. */
  readonly retryAfterMs?: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxRetries: 5, initialDelayMs: 500, maxDelayMs: 30_000 };

/**
 * The delay before retry number `retry` (0-based): `initialDelayMs · 2^retry`, times a jitter
 * factor in [0.5, 1) when `random` is given, capped at `maxDelayMs`; a server's `retry-after`
 * wins when it is longer (still capped).
 * @example backoffDelay({ maxRetries: 3, initialDelayMs: 100, maxDelayMs: 1000 }, 2) // 400
 */
export function backoffDelay(policy: RetryPolicy, retry: number, random?: () => number, retryAfterMs?: number): number {
  const exponential = policy.initialDelayMs * 2 ** retry * (random ? 0.5 + random() / 2 : 1);
  const wanted = retryAfterMs !== undefined ? Math.max(retryAfterMs, exponential) : exponential;
  return Math.round(Math.min(policy.maxDelayMs, wanted));
}

/**
 * Reads `retry-after-ms` (OpenAI's extension) or `retry-after` (seconds, or an HTTP date relative
 * to `nowMs`, ms since the epoch). Undefined when absent or unreadable.
 * @example retryAfterMs(new Headers({ 'retry-after': '2' }), 0) // 2000
 */
export function retryAfterMs(headers: { get(name: string): string | null } | undefined, nowMs: number): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '' && Number.isFinite(Number(ms)) && Number(ms) >= 0) return Number(ms);
  const value = headers.get('retry-after');
  if (value === null || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/**
 * Calls `attempt` until it succeeds, `classify` says the error is final, or retries run out
 * (then the last error is thrown).
 * @example
 * const reply = await withRetries((n) => client.call(body), (e) => ({ retry: isRateLimit(e) }), DEFAULT_RETRY, { sleep });
 */
export async function withRetries<T>(
  attempt: (attemptIndex: number) => Promise<T>,
  classify: (error: unknown) => RetryDecision,
  policy: RetryPolicy,
  env: RetryEnv,
  signal?: AbortSignal,
): Promise<T> {
  if (!Number.isInteger(policy.maxRetries) || policy.maxRetries < 0) throw InvalidArgumentError.format('maxRetries', `expected an integer >= 0, got ${policy.maxRetries}`);
  for (let retry = 0; ; retry++) {
    try {
      return await attempt(retry);
    } catch (error) {
      const decision = classify(error);
      if (!decision.retry || retry >= policy.maxRetries || signal?.aborted) throw error;
      const delayMs = backoffDelay(policy, retry, env.random, decision.retryAfterMs);
      env.onRetry?.({ attempt: retry + 1, delayMs, error });
      await env.sleep(delayMs, signal);
    }
  }
}

/**
 * A real sleep that ends early (rejecting) when `signal` aborts.
 * @example await realSleep(250);
 */
export function realSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
