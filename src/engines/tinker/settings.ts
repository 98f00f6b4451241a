/**
 * Settings of the Tinker client, with the defaults a run gets when it names only a URL. The
 * defaults follow the official Python SDK where it has one (heartbeat every 10 s, `X-API-Key`,
 * retries with exponential back-off and jitter) and SkyRL tx's behaviour where they differ
 * (its `retrieve_future` holds a request up to 300 s, so a poll waits a little longer than that).
 */
import { InvalidConfigError } from '../../core/errors.js';
import type { RetryPolicy } from '../../policies/retry.js';

/** What a user sets to point turnwise at a Tinker server. */
export interface TinkerClientSettings {
  /** Server root, e.g. `http://localhost:8000` (SkyRL tx) or hosted Tinker's service URL; `/api/v1/…` is appended. */
  readonly url: string;
  /** Name of the environment variable holding the API key (never the key itself); absent = send no key. */
  readonly apiKeyEnv?: string;
  /** Calls in flight at once (each call = its submission and the polls of its future). Default 64. */
  readonly concurrency?: number;
  /** Timeout of one ordinary HTTP request (a submission, a GET), ms. Default 60 000. */
  readonly requestTimeoutMs?: number;
  /** Timeout of one `retrieve_future` long poll, ms; a poll that times out is simply repeated. Default 310 000. */
  readonly pollTimeoutMs?: number;
  /** Longest wait for one future's result across all its polls, ms; 0 = no limit. Default 3 600 000. */
  readonly futureTimeoutMs?: number;
  /** Pause before polling again after a `try_again` answer, ms. Default 100. */
  readonly tryAgainDelayMs?: number;
  /** `session_heartbeat` period, ms. Default 10 000 (the SDK's; SkyRL unloads a model after 300 s without one). */
  readonly heartbeatIntervalMs?: number;
  /** Back-off of retried submissions and polls (connection loss, timeouts, 5xx, 429). */
  readonly retry?: Partial<RetryPolicy>;
}

/** {@link TinkerClientSettings} with every default filled in. */
export interface ResolvedTinkerSettings {
  /** The server root without a trailing slash. */
  readonly url: string;
  readonly apiKeyEnv: string | undefined;
  readonly concurrency: number;
  readonly requestTimeoutMs: number;
  readonly pollTimeoutMs: number;
  readonly futureTimeoutMs: number;
  readonly tryAgainDelayMs: number;
  readonly heartbeatIntervalMs: number;
  readonly retry: RetryPolicy;
}

/** Back-off of the Tinker client: 8 retries from 500 ms doubling to 30 s (about 1.5 min of outage in all). */
export const TINKER_RETRY: RetryPolicy = { maxRetries: 8, initialDelayMs: 500, maxDelayMs: 30_000 };

function positiveInteger(path: string, value: number | undefined, fallback: number, allowZero = false): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < (allowZero ? 0 : 1)) throw new InvalidConfigError(path, `expected an integer >= ${allowZero ? 0 : 1}, got ${v}`);
  return v;
}

/**
 * Fills in defaults and checks every value, naming the field at fault (`model.tinker.<field>`).
 * @example resolveTinkerSettings({ url: 'http://localhost:8000' }).concurrency // 64
 */
export function resolveTinkerSettings(settings: TinkerClientSettings, path = 'model.tinker'): ResolvedTinkerSettings {
  let url: URL;
  try {
    url = new URL(settings.url);
  } catch {
    throw new InvalidConfigError(`${path}.url`, `expected an http(s) URL, got ${JSON.stringify(redactUrlText(settings.url))}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new InvalidConfigError(`${path}.url`, `expected an http(s) URL, got protocol '${url.protocol}'`);
  if (url.username !== '' || url.password !== '') throw new InvalidConfigError(`${path}.url`, `credentials in the URL are refused: put the key in the environment variable named by '${path}.apiKeyEnv'`);
  if (settings.apiKeyEnv !== undefined && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(settings.apiKeyEnv)) {
    throw new InvalidConfigError(`${path}.apiKeyEnv`, 'expected the NAME of an environment variable (letters, digits, _), not a key');
  }
  const retry = { ...TINKER_RETRY, ...settings.retry };
  positiveInteger(`${path}.retry.maxRetries`, retry.maxRetries, 0, true);
  positiveInteger(`${path}.retry.initialDelayMs`, retry.initialDelayMs, 1);
  positiveInteger(`${path}.retry.maxDelayMs`, retry.maxDelayMs, 1);
  return {
    url: `${url.origin}${url.pathname.replace(/\/+$/, '')}`,
    apiKeyEnv: settings.apiKeyEnv,
    concurrency: positiveInteger(`${path}.concurrency`, settings.concurrency, 64),
    requestTimeoutMs: positiveInteger(`${path}.requestTimeoutMs`, settings.requestTimeoutMs, 60_000),
    pollTimeoutMs: positiveInteger(`${path}.pollTimeoutMs`, settings.pollTimeoutMs, 310_000),
    futureTimeoutMs: positiveInteger(`${path}.futureTimeoutMs`, settings.futureTimeoutMs, 3_600_000, true),
    tryAgainDelayMs: positiveInteger(`${path}.tryAgainDelayMs`, settings.tryAgainDelayMs, 100, true),
    heartbeatIntervalMs: positiveInteger(`${path}.heartbeatIntervalMs`, settings.heartbeatIntervalMs, 10_000),
    retry,
  };
}

/**
 * The origin of a URL, for messages: scheme, host and port only (no credentials, path or query).
 * @example serverLabel('https://user:pw@tinker.example/api?k=1') // 'https://tinker.example'
 */
export function serverLabel(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '<unparsable URL>';
  }
}

/** A URL-ish string with any `user:password@` part removed, for an error about the URL itself. */
function redactUrlText(text: string): string {
  return text.replace(/\/\/[^/@\s]*@/, '//<credentials>@').slice(0, 200);
}
