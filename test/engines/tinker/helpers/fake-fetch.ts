/**
 * A `fetch` that answers from a handler instead of the network, recording every request, plus a
 * driver that moves a {@link SimulatedClock} until a promise settles (no real sleeping).
 */
import type { SimulatedClock } from '../../../../src/core/clock.js';

/** One request as the fake server saw it. */
export interface SeenRequest {
  readonly method: string;
  readonly url: string;
  /** Path and query, e.g. `/api/v1/forward`. */
  readonly path: string;
  readonly origin: string;
  readonly headers: Record<string, string>;
  readonly body: unknown;
  readonly rawBody: string | undefined;
}

/** What a handler may do with a request: answer, drop the connection, or never answer. */
export type FakeReply = Response | 'drop' | 'hang';

export type FakeHandler = (request: SeenRequest) => FakeReply | Promise<FakeReply>;

/** A JSON answer. */
export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
}

/** A fetch over `handler`, and the list of requests it saw (in order). */
export function fakeFetch(handler: FakeHandler): { fetch: typeof fetch; seen: SeenRequest[] } {
  const seen: SeenRequest[] = [];
  const fetchImpl = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(input instanceof Request ? input.url : input.toString());
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, key) => {
      headers[key] = value;
    });
    const rawBody = typeof init?.body === 'string' ? init.body : undefined;
    const request: SeenRequest = {
      method: init?.method ?? 'GET',
      url: url.toString(),
      path: `${url.pathname}${url.search}`,
      origin: url.origin,
      headers,
      body: rawBody === undefined ? undefined : JSON.parse(rawBody),
      rawBody,
    };
    seen.push(request);
    const reply = await handler(request);
    if (reply === 'drop') throw new TypeError('fetch failed', { cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }) });
    if (reply === 'hang') {
      return new Promise<Response>((_, reject) => {
        const signal = init?.signal;
        if (signal?.aborted) reject(signal.reason);
        signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
      });
    }
    return reply;
  };
  return { fetch: fetchImpl as typeof fetch, seen };
}

/** Lets pending promise callbacks and I/O run (a macrotask turn). */
export function tick(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Awaits `promise` while moving `clock` forward `stepMs` at a time between macrotask turns, so
 * timers (back-off sleeps, request timeouts, heartbeats) fire without real waiting.
 */
export async function drive<T>(clock: SimulatedClock, promise: Promise<T>, stepMs = 10, maxSteps = 200_000): Promise<T> {
  let settled = false;
  const watched = promise.finally(() => {
    settled = true;
  });
  watched.catch(() => {});
  for (let i = 0; i < maxSteps && !settled; i++) {
    await tick();
    if (!settled) clock.advance(stepMs);
  }
  return watched;
}
