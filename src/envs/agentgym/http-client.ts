/**
 * A keep-alive JSON client for one AgentGym server.
 *
 * Why undici: it is Node's own HTTP/1.1 engine (the one behind `fetch`), and its `Pool` keeps a
 * bounded set of keep-alive sockets per origin with no per-request allocation of an agent — the
 * cheapest way to send thousands of small JSON requests a second to one server. Requests go
 * through its low-level `dispatch` with a handler of ours (no response stream, no AbortSignal per
 * request), which also tells us each time undici (re)writes a request onto a socket.
 *
 * Every request has a deadline (a timer on the injected clock). Retries use exponential back-off
 * with jitter from the injected Rng, and depend on whether repeating the request is safe:
 * `/reset`, GETs and `/close` are repeated after any connection failure, timeout or 5xx;
 * `/create` after a refused connection or a 5xx; `/step` — which changes the environment and must
 * not be applied twice — only when the connection was refused (nothing was sent) or the server
 * answered 503 (not processed; WebShop's own client retries exactly that).
 *
 * Pipelining (`pipelining` > 1) puts several requests on one socket before the first answer
 * comes back: fewer sockets and system calls per request on both sides. Undici re-sends the
 * requests behind a failed head of the pipeline by itself; for `/step` and `/create` such a
 * re-send could apply an action twice, so this client refuses it (the request fails as a dropped
 * connection, which its policy never repeats). The cost: when one pipelined request times out or
 * its socket drops, the `/step`s behind it on that socket fail too. Against AgentGym's own
 * (Python, one request at a time per connection) servers keep it at 1.
 */
import { type Dispatcher, Pool } from 'undici';
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
  /** Requests in flight on one socket (HTTP/1.1 pipelining); 1 = none. Default 1. */
  readonly pipelining?: number;
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

/** Raised (inside undici) to stop it re-sending a non-repeatable request that was already written to a socket that then failed. */
class PipelineResendRefused extends Error {
  constructor() {
    super('the socket failed after the request was sent; not re-sent, since the server may have applied it');
  }
}

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
  private readonly headers: Readonly<Record<string, string>>;
  private closed = false;

  constructor(private readonly options: HttpClientOptions) {
    const parsed = new URL(options.url);
    this.url = options.url.replace(/\/+$/, '');
    this.prefix = parsed.pathname.replace(/\/+$/, '');
    this.clock = options.clock ?? systemClock;
    this.pool = new Pool(parsed.origin, { connections: options.connections, pipelining: options.pipelining ?? 1, keepAliveTimeout: 30_000 });
    this.headers = { 'content-type': 'application/json', accept: 'application/json', ...options.headers };
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

  private attempt(spec: RequestSpec): Promise<{ status: number; text: string } | AttemptFailure> {
    const { signal } = spec;
    if (signal?.aborted) return Promise.resolve(new AttemptFailure('aborted', 'aborted by the caller', false, undefined, undefined));
    return new Promise((resolve) => {
      let settled = false;
      let controller: Dispatcher.DispatchController | null = null;
      let stopWith: Error | null = null;
      let writes = 0;
      let status = 0;
      const chunks: Buffer[] = [];
      const finish = (outcome: { status: number; text: string } | AttemptFailure): void => {
        if (settled) return;
        settled = true;
        this.clock.clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        resolve(outcome);
      };
      // Stops the request now if undici has started it, or as soon as it does.
      const stop = (reason: Error): void => {
        stopWith = reason;
        controller?.abort(reason);
      };
      const timer = this.clock.setTimeout(() => {
        // Settled first: the abort makes undici report an error synchronously, which must not win.
        finish(new AttemptFailure('timeout', `timed out after ${this.options.timeoutMs} ms`, false, undefined, undefined));
        stop(new Error('deadline passed'));
      }, this.options.timeoutMs);
      const onAbort = (): void => {
        finish(new AttemptFailure('aborted', 'aborted by the caller', false, undefined, undefined));
        stop(new Error('aborted by the caller'));
      };
      signal?.addEventListener('abort', onAbort);
      const query = spec.query ? `?${new URLSearchParams(Object.entries(spec.query).map(([k, v]): [string, string] => [k, String(v)])).toString()}` : '';
      // Only requests that may be repeated travel in a pipeline behind others; `/step` may too, guarded below.
      const pipelined = spec.retry !== 'create';
      const handler: Dispatcher.DispatchHandler = {
        // Throwing here makes undici drop the request before writing it, without touching the socket
        // (`writeH1` catches it); `controller.abort` would also destroy the socket and everything on it.
        onRequestStart: (c) => {
          if (stopWith) throw stopWith;
          // Undici re-sends what was behind a failed head of the pipeline; a /step or /create may already have been applied.
          if (++writes > 1 && spec.retry !== 'idempotent') throw new PipelineResendRefused();
          controller = c;
        },
        onResponseStart: (_c, statusCode) => {
          status = statusCode;
          chunks.length = 0; // a 1xx answer comes before the real one
        },
        onResponseData: (_c, chunk) => {
          chunks.push(chunk);
        },
        onResponseEnd: () => {
          const text = (chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)).toString('utf8');
          finish({ status, text: text.charCodeAt(0) === 0xfeff ? text.slice(1) : text });
        },
        onResponseError: (_c, error) => {
          const code = (error as { code?: string }).code ?? '';
          const message = error instanceof PipelineResendRefused ? error.message : `${code || 'error'}: ${error.message}`;
          finish(new AttemptFailure('connection', `connection failed (${message})`, code === 'ECONNREFUSED', undefined, error));
        },
      };
      try {
        this.pool.dispatch(
          {
            method: spec.method,
            path: `${spec.root ? '' : this.prefix}${spec.path}${query}`,
            headers: this.headers,
            body: spec.body !== undefined ? JSON.stringify(spec.body) : null,
            idempotent: pipelined,
            blocking: !pipelined,
          },
          handler,
        );
      } catch (error) {
        finish(new AttemptFailure('connection', `connection failed (${(error as Error).message})`, false, undefined, error));
      }
    });
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
