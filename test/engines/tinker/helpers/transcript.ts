/**
 * SkyRL tx's recorded exchanges (test/fixtures/tinker-skyrl/transcript.jsonl) as a fake server:
 * it answers the listed lines in order, and checks that each request is the recorded one (same
 * method and path; every recorded body field present with an equal value, numbers within 1e-6
 * relative, since turnwise sends float32 values where the recorder sent float64 ones).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type FakeHandler, json, type SeenRequest } from './fake-fetch.js';

export const FIXTURES = join(import.meta.dirname, '../../../fixtures/tinker-skyrl');

/** One recorded exchange. */
export interface Exchange {
  readonly method: string;
  readonly path: string;
  readonly request_body: unknown;
  readonly status: number;
  readonly response_body: unknown;
  readonly note: string;
}

/** Every line of the transcript; `line(n)` is 1-based like the fixture's README. */
export const transcript: readonly Exchange[] = readFileSync(join(FIXTURES, 'transcript.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as Exchange);

export function line(n: number): Exchange {
  const exchange = transcript[n - 1];
  if (!exchange) throw new Error(`no transcript line ${n}`);
  return exchange;
}

/** The server root the recording was made against (from the 302's Location). */
export const RECORDED_SERVER = 'http://127.0.0.1:18766';

/** Differences between what was recorded and what was sent (recorded ⊆ sent), as readable paths. */
export function bodyDifferences(recorded: unknown, sent: unknown, path = 'body', ignore: ReadonlySet<string> = new Set()): string[] {
  if (ignore.has(path)) return [];
  if (typeof recorded === 'number' && typeof sent === 'number') {
    return Math.abs(recorded - sent) <= 1e-6 * Math.max(1, Math.abs(recorded)) ? [] : [`${path}: recorded ${recorded}, sent ${sent}`];
  }
  if (Array.isArray(recorded)) {
    if (!Array.isArray(sent) || sent.length !== recorded.length) return [`${path}: recorded ${recorded.length} items, sent ${JSON.stringify(sent)?.slice(0, 80)}`];
    return recorded.flatMap((r, i) => bodyDifferences(r, sent[i], `${path}[${i}]`, ignore));
  }
  if (recorded !== null && typeof recorded === 'object') {
    if (sent === null || typeof sent !== 'object') return [`${path}: recorded an object, sent ${JSON.stringify(sent)}`];
    return Object.entries(recorded).flatMap(([k, v]) => bodyDifferences(v, (sent as Record<string, unknown>)[k], `${path}.${k}`, ignore));
  }
  return recorded === sent ? [] : [`${path}: recorded ${JSON.stringify(recorded)}, sent ${JSON.stringify(sent)}`];
}

/** A replacement answer for a line whose recorded body is not stored (the binary downloads). */
export type Override = (request: SeenRequest) => Response;

/**
 * A handler that plays `lines` in order. A request that does not match its line gets a 418
 * naming the differences (final for the client, so the test fails with them in its message).
 */
export function replay(lines: readonly number[], options: { ignore?: Readonly<Record<number, readonly string[]>>; overrides?: Readonly<Record<number, Override>> } = {}): { handler: FakeHandler; played: () => number } {
  let next = 0;
  const handler: FakeHandler = (request) => {
    const n = lines[next];
    if (n === undefined) return json(418, { detail: `unexpected extra request ${request.method} ${request.path}` });
    next++;
    const exchange = line(n);
    const problems: string[] = [];
    if (request.method !== exchange.method || request.path !== exchange.path) problems.push(`line ${n}: expected ${exchange.method} ${exchange.path}, got ${request.method} ${request.path}`);
    if (exchange.request_body !== null) problems.push(...bodyDifferences(exchange.request_body, request.body, 'body', new Set(options.ignore?.[n] ?? [])).map((p) => `line ${n}: ${p}`));
    if (problems.length > 0) return json(418, { detail: problems.slice(0, 5).join(' | ') });
    const override = options.overrides?.[n];
    if (override) return override(request);
    if (exchange.status === 302) {
      const location = /Location: (\S+?);/.exec(exchange.note)?.[1] ?? '';
      return new Response(null, { status: 302, headers: { location } });
    }
    if (typeof exchange.response_body === 'string') return new Response(exchange.response_body, { status: exchange.status, headers: { 'content-type': 'text/plain' } });
    return json(exchange.status, exchange.response_body);
  };
  return { handler, played: () => next };
}
