/**
 * One HTTP exchange with a Tinker server: JSON in, JSON (or bytes) out, a per-request timeout on
 * the injected clock, the API key in `X-API-Key` (the header the official SDK sends) and only to
 * the server's own origin, and a count of requests and bytes per route. Nothing here retries;
 * {@link ./call.ts} decides that from what this returns.
 *
 * The key lives in a private field and is stripped from any server text kept for messages
 * ({@link TinkerHttp.redact}), so it cannot leak through an error, a log event or a run folder.
 */
import type { Clock } from '../../core/clock.js';

/** An answer with a status line (any status: the caller classifies it). */
export interface HttpAnswer {
  readonly status: number;
  readonly headers: Headers;
  /** Parsed JSON body, or `undefined` when the body is empty or not JSON. */
  readonly json: unknown;
  /** The body as text (empty for byte answers), with the key redacted (as in `json`) and cut to 2,000 characters: for messages only. */
  readonly text: string;
  /** The raw body when asked for bytes. */
  readonly bytes?: Uint8Array;
}

/** No answer: the connection failed, or the request ran out of time. */
export class TransportFailure extends Error {
  constructor(
    readonly kind: 'timeout' | 'connection',
    message: string,
  ) {
    super(message);
    this.name = 'TransportFailure';
  }
}

/** Requests and bytes spent on one route. */
export interface RouteTraffic {
  requests: number;
  /** Request bodies, bytes. */
  bytesSent: number;
  /** Response bodies, bytes. */
  bytesReceived: number;
}

/** One request to send. */
export interface HttpRequest {
  /** Route name for the traffic count (`retrieve_future`, `forward_backward`, …). */
  readonly route: string;
  readonly method: 'GET' | 'POST';
  /** A path under the server root (`/api/v1/…`) or an absolute URL (a redirect's target). */
  readonly path: string;
  readonly body?: unknown;
  readonly timeoutMs: number;
  readonly headers?: Readonly<Record<string, string>>;
  /** Answer with the raw bytes instead of parsing JSON. */
  readonly bytes?: boolean;
  /** Return 3xx answers instead of following them. */
  readonly manualRedirect?: boolean;
  readonly signal?: AbortSignal;
}

/** What the transport needs from the outside world. */
export interface HttpDeps {
  readonly fetch: typeof fetch;
  readonly clock: Clock;
}

const TEXT_LIMIT = 2_000;

/**
 * @example
 * const http = new TinkerHttp('http://localhost:8000', key, { fetch, clock: systemClock });
 * const answer = await http.send({ route: 'healthz', method: 'GET', path: '/api/v1/healthz', timeoutMs: 5000 });
 */
export class TinkerHttp {
  readonly #apiKey: string | undefined;
  private readonly origin: string;
  private readonly counts = new Map<string, RouteTraffic>();

  constructor(
    /** Server root without a trailing slash. */
    readonly root: string,
    apiKey: string | undefined,
    private readonly deps: HttpDeps,
  ) {
    this.#apiKey = apiKey === '' ? undefined : apiKey;
    this.origin = new URL(root).origin;
  }

  /** Requests and bytes per route since the client was made (a copy). */
  traffic(): Record<string, RouteTraffic> {
    return Object.fromEntries([...this.counts].map(([route, t]) => [route, { ...t }]));
  }

  /**
   * Removes the API key from text that came from outside (a server's error message may echo it).
   * @example http.redact(`bad key ${key}`) // 'bad key <redacted>'
   */
  redact(text: string): string {
    const key = this.#apiKey;
    return key === undefined ? text : text.split(key).join('<redacted>');
  }

  /** Sends one request; resolves with any answer that has a status, rejects with {@link TransportFailure} otherwise. */
  async send(request: HttpRequest): Promise<HttpAnswer> {
    const url = /^https?:\/\//.test(request.path) ? new URL(request.path) : new URL(`${this.root}${request.path}`);
    const headers: Record<string, string> = { accept: request.bytes ? 'application/octet-stream, application/json' : 'application/json', ...request.headers };
    // A redirect may point at another host (a signed storage URL): the key goes to the server only.
    if (this.#apiKey !== undefined && url.origin === this.origin) headers['X-API-Key'] = this.#apiKey;
    const payload = request.body === undefined ? undefined : JSON.stringify(request.body);
    if (payload !== undefined) headers['content-type'] = 'application/json';
    const traffic = this.count(request.route);
    traffic.requests++;
    traffic.bytesSent += payload === undefined ? 0 : Buffer.byteLength(payload);

    const controller = new AbortController();
    let timedOut = false;
    const timer = this.deps.clock.setTimeout(() => {
      timedOut = true;
      controller.abort(new Error(`timed out after ${request.timeoutMs} ms`));
    }, request.timeoutMs);
    const onCallerAbort = () => controller.abort(request.signal?.reason);
    request.signal?.addEventListener('abort', onCallerAbort, { once: true });
    try {
      if (request.signal?.aborted) throw request.signal.reason;
      const response = await this.deps.fetch(url, {
        method: request.method,
        headers,
        body: payload,
        signal: controller.signal,
        redirect: request.manualRedirect ? 'manual' : 'follow',
      });
      const raw = new Uint8Array(await response.arrayBuffer());
      traffic.bytesReceived += raw.byteLength;
      if (request.bytes && response.status >= 200 && response.status < 300) return { status: response.status, headers: response.headers, json: undefined, text: '', bytes: raw };
      // Redacted before parsing: an error body that echoes the key must not carry it into a message.
      const text = this.redact(new TextDecoder().decode(raw));
      return { status: response.status, headers: response.headers, json: parseJson(text), text: text.slice(0, TEXT_LIMIT) };
    } catch (error) {
      if (request.signal?.aborted) throw request.signal.reason;
      if (timedOut) throw new TransportFailure('timeout', `no answer within ${request.timeoutMs} ms`);
      // No `cause`: a custom fetch's error could carry the request (and its headers).
      throw new TransportFailure('connection', this.redact(describeConnectionError(error)));
    } finally {
      this.deps.clock.clearTimeout(timer);
      request.signal?.removeEventListener('abort', onCallerAbort);
    }
  }

  private count(route: string): RouteTraffic {
    let traffic = this.counts.get(route);
    if (!traffic) {
      traffic = { requests: 0, bytesSent: 0, bytesReceived: 0 };
      this.counts.set(route, traffic);
    }
    return traffic;
  }
}

function parseJson(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** fetch's `TypeError: fetch failed` hides the reason in `cause` (ECONNREFUSED, socket closed, …). */
function describeConnectionError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause;
  const inner = cause instanceof Error ? `${(cause as NodeJS.ErrnoException).code ?? cause.name}: ${cause.message}` : '';
  return inner ? `${error.message} (${inner})` : error.message;
}
