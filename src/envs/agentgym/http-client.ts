/**
 * A keep-alive JSON client for one AgentGym server.
 *
 * Why undici: it is Node's own HTTP/1.1 engine (the one behind `fetch`), and its `Pool` keeps a
 * bounded set of keep-alive sockets per origin with no per-request allocation of an agent — the
 * cheapest way to send thousands of small JSON requests a second to one server.
 *
 * Every request has a deadline (an AbortController armed on the injected clock). Retries use
 * exponential back-off with jitter from the injected Rng, and depend on whether repeating the
 * request is safe: `/reset`, GETs and `/close` are repeated after any connection failure, timeout
 * or 5xx; `/create` after a refused connection or a 5xx; `/step` — which changes the environment
 * and must not be applied twice — only when the connection was refused (nothing was sent) or the
 * server answered 503 (not processed; WebShop's own client retries exactly that).
 */
import { Pool } from 'undici';
import { type Clock, systemClock } from '../../core/clock.js';
import type { Rng } from '../../core/rng.js';
import { backoffDelay } from './backoff.js';
import { AgentGymProtocolError, AgentGymServerError, AgentGymTransportError, type TransportFailureKind } from './errors.js';
import type { ServerMonitor } from './health.js';

/** Which failures a request may be repeated after. */
export type RetryPolicy = 'idempotent' | 'create' | 'step';

/** Options of {@link AgentGymHttpClient}. */
export interface HttpClientOptions {
  /** Server base URL; may carry a path prefix (`http://host:36001/maze`). */
  readonly url: string;
  /** Environment name for error messages (the AgentGym type, e.g. `sciworld`). */
  readonly envName: string;
  /** Deadline of one attempt, in milliseconds. */
  readonly timeoutMs: number;
  /** Retries after the first attempt (when the policy allows). */
  readonly retries: number;
  readonly backoffBaseMs: number;
  readonly backoffMaxMs: number;
  /** Keep-alive sockets to the server. */
  readonly connections: number;
  readonly rng: Rng;
  readonly clock?: Clock;
  readonly monitor?: ServerMonitor;
  /** Extra headers on every request (e.g. the turnwise extension header). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** One request. */
export interface RequestSpec {
  readonly method: 'GET' | 'POST';
  /** Path under the base URL, e.g. `/step`. */
  readonly path: string;
  /** True: `path` is from the server's origin, not under the base URL's prefix (health checks). */
  readonly root?: boolean;
  /** Query parameters (GET). */
  readonly query?: Readonly<Record<string, string | number>>;
  /** JSON body (POST). `undefined` sends no body. */
  readonly body?: unknown;
  readonly retry: RetryPolicy;
  /** `throw` (default): a `{"error": ...}` answer becomes an `AgentGymServerError`. */
  readonly errorBody?: 'throw' | 'return';
  /** Aborts the request (e.g. the session was closed). */
  readonly signal?: AbortSignal;
}

const RETRY_STATUS: Readonly<Record<RetryPolicy, (status: number) => boolean>> = {
  idempotent: (s) => s >= 500,
  create: (s) => s >= 500,
  step: (s) => s === 503,
};

const RETRY_KIND: Readonly<Record<RetryPolicy, (kind: TransportFailureKind, refused: boolean) => boolean>> = {
  idempotent: (kind) => kind === 'connection' || kind === 'timeout',
  create: (kind, refused) => kind === 'connection' && refused,
  step: (kind, refused) => kind === 'connection' && refused,
};

class AttemptFailure {
  constructor(
    readonly kind: TransportFailureKind,
    readonly detail: string,
    readonly refused: boolean,
    readonly status: number | undefined,
    readonly cause: unknown,
  ) {}
}

/** True for a plain object (not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * JSON over keep-alive HTTP to one AgentGym server.
 * @example
 * const client = new AgentGymHttpClient({ url: 'http://127.0.0.1:36002', envName: 'babyai', timeoutMs: 20_000, retries: 3, backoffBaseMs: 100, backoffMaxMs: 2000, connections: 64, rng });
 * const { id } = (await client.request({ method: 'POST', path: '/create', retry: 'create' })) as { id: number };
 */
export class AgentGymHttpClient {
  readonly url: string;
  private readonly pool: Pool;
  private readonly prefix: string;
  private readonly clock: Clock;
  private closed = false;

  constructor(private readonly options: HttpClientOptions) {
    const parsed = new URL(options.url);
    this.url = options.url.replace(/\/+$/, '');
    this.prefix = parsed.pathname.replace(/\/+$/, '');
    this.clock = options.clock ?? systemClock;
    this.pool = new Pool(parsed.origin, { connections: options.connections, pipelining: 1, keepAliveTimeout: 30_000 });
  }

  /** Sends `spec`, retrying as its policy allows; resolves to the parsed JSON answer. */
  async request(spec: RequestSpec): Promise<unknown> {
    const site = { url: this.url, path: spec.path };
    const { retries, backoffBaseMs, backoffMaxMs, rng, monitor, envName } = this.options;
    let attempt = 0;
    for (;;) {
      attempt++;
      let outcome: { status: number; text: string } | AttemptFailure;
      try {
        outcome = await this.attempt(spec);
      } catch (error) {
        if (spec.signal?.aborted) throw new AgentGymTransportError(envName, site, 'aborted by the caller', { kind: 'aborted', attempts: attempt, cause: error });
        throw error;
      }
      if (outcome instanceof AttemptFailure || outcome.status !== 200) {
        const failure =
          outcome instanceof AttemptFailure ? outcome : new AttemptFailure('status', `HTTP ${outcome.status}: ${snippet(outcome.text)}`, false, outcome.status, undefined);
        if (failure.kind === 'aborted') throw new AgentGymTransportError(envName, site, failure.detail, { kind: 'aborted', attempts: attempt });
        const retryable =
          failure.kind === 'status' ? RETRY_STATUS[spec.retry](failure.status ?? 0) : RETRY_KIND[spec.retry](failure.kind, failure.refused);
        if (retryable && attempt <= retries && !this.closed) {
          await this.sleep(backoffDelay(attempt - 1, { baseMs: backoffBaseMs, maxMs: backoffMaxMs }, rng), spec.signal);
          continue;
        }
        const error =
          failure.status === 422
            ? new AgentGymProtocolError(envName, site, `the server rejected the request body (HTTP 422): ${snippet(outcome instanceof AttemptFailure ? '' : outcome.text)}`)
            : new AgentGymTransportError(envName, site, failure.detail, { kind: failure.kind, ...(failure.status !== undefined ? { status: failure.status } : {}), attempts: attempt, cause: failure.cause });
        monitor?.failure(error);
        throw error;
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(outcome.text);
      } catch {
        const error = new AgentGymProtocolError(envName, site, `malformed JSON in the answer: ${snippet(outcome.text)}`);
        monitor?.failure(error);
        throw error;
      }
      monitor?.success();
      if ((spec.errorBody ?? 'throw') === 'throw' && isRecord(parsed) && 'error' in parsed) {
        throw new AgentGymServerError(envName, site, typeof parsed.error === 'string' ? parsed.error : JSON.stringify(parsed.error));
      }
      return parsed;
    }
  }

  /** Closes the keep-alive sockets (requests in flight finish first). Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.close();
  }

  private async attempt(spec: RequestSpec): Promise<{ status: number; text: string } | AttemptFailure> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = this.clock.setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.options.timeoutMs);
    const onAbort = () => controller.abort();
    spec.signal?.addEventListener('abort', onAbort);
    try {
      if (spec.signal?.aborted) return new AttemptFailure('aborted', 'aborted by the caller', false, undefined, undefined);
      const query = spec.query ? `?${new URLSearchParams(Object.entries(spec.query).map(([k, v]): [string, string] => [k, String(v)])).toString()}` : '';
      const response = await this.pool.request({
        method: spec.method,
        path: `${spec.root ? '' : this.prefix}${spec.path}${query}`,
        headers: { 'content-type': 'application/json', accept: 'application/json', ...this.options.headers },
        ...(spec.body !== undefined ? { body: JSON.stringify(spec.body) } : {}),
        signal: controller.signal,
      });
      const text = await response.body.text();
      return { status: response.statusCode, text };
    } catch (error) {
      if (timedOut) return new AttemptFailure('timeout', `timed out after ${this.options.timeoutMs} ms`, false, undefined, error);
      if (spec.signal?.aborted) return new AttemptFailure('aborted', 'aborted by the caller', false, undefined, error);
      const code = (error as { code?: string }).code ?? '';
      const message = error instanceof Error ? error.message : String(error);
      return new AttemptFailure('connection', `connection failed (${code || 'error'}: ${message})`, code === 'ECONNREFUSED', undefined, error);
    } finally {
      this.clock.clearTimeout(timer);
      spec.signal?.removeEventListener('abort', onAbort);
    }
  }

  private sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const timer = this.clock.setTimeout(resolve, ms);
      signal?.addEventListener(
        'abort',
        () => {
          this.clock.clearTimeout(timer);
          resolve();
        },
        { once: true },
      );
    });
  }
}

function snippet(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 200 ? `${flat.slice(0, 200)}…` : flat || '(empty body)';
}
