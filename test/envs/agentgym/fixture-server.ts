/**
 * A tiny HTTP server that replays recorded AgentGym exchanges (`fixtures/*.json`) and checks that
 * each request is the recorded one (method, path, query, JSON body, content-type). A handler can
 * be put in front of it to inject faults (5xx, dropped connections, malformed JSON, silence).
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isDeepStrictEqual } from 'node:util';

export interface Exchange {
  readonly method: string;
  readonly path: string;
  readonly query?: Record<string, string>;
  readonly request?: unknown;
  readonly response: unknown;
}

export interface Fixture {
  readonly settings: { readonly type: string };
  readonly index: number;
  readonly action: string;
  readonly sent: string;
  readonly first?: string;
  readonly firstEndsWith?: string;
  readonly firstContains?: string;
  readonly prefix?: string;
  readonly exchanges: readonly Exchange[];
  readonly expect: { readonly reward: number; readonly done: boolean; readonly success: boolean; readonly availableActions?: readonly string[] };
}

export function loadFixture(name: string): Fixture {
  return JSON.parse(readFileSync(new URL(`./fixtures/${name}.json`, import.meta.url), 'utf8')) as Fixture;
}

/** Returns true when it answered the request itself. */
export type Fault = (req: IncomingMessage, res: ServerResponse, body: string, count: number) => boolean;

export interface FixtureServer {
  readonly url: string;
  /** Requests seen, in order. */
  readonly seen: { method: string; path: string; body: string; contentType: string | undefined }[];
  /** Recorded exchanges not replayed yet. */
  remaining(): number;
  mismatches: string[];
  setFault(fault: Fault | null): void;
  close(): Promise<void>;
}

export async function startFixtureServer(exchanges: readonly Exchange[]): Promise<FixtureServer> {
  const queue = [...exchanges];
  const seen: FixtureServer['seen'] = [];
  const mismatches: string[] = [];
  let fault: Fault | null = null;
  let count = 0;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString('utf8');
    });
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      seen.push({ method: req.method ?? '', path: url.pathname, body, contentType: req.headers['content-type'] });
      if (fault?.(req, res, body, count++)) return;
      if (url.pathname === '/' && req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('"ok"');
        return;
      }
      const next = queue.shift();
      const query = Object.fromEntries(url.searchParams);
      const parsed = body.length > 0 ? (JSON.parse(body) as unknown) : undefined;
      if (!next || next.method !== req.method || next.path !== url.pathname || !isDeepStrictEqual(next.query ?? {}, query) || !isDeepStrictEqual(next.request, parsed)) {
        mismatches.push(`${req.method} ${url.pathname}${url.search} ${body} (expected ${next ? `${next.method} ${next.path} ${JSON.stringify(next.request)}` : 'nothing'})`);
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"detail":"Not Found"}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(next.response));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    mismatches,
    remaining: () => queue.length,
    setFault: (f) => {
      fault = f;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
