/**
 * HTTP/1.1 pipelining in the AgentGym client: several requests travel on one socket at once, and
 * when that socket drops, a `/step` that was already sent is never sent again (undici would re-send
 * it by itself; the server may have applied it), while `/reset`s are re-sent and succeed.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.js';
import { AgentGymTransportError } from '../../src/envs/agentgym/errors.js';
import { AgentGymHttpClient } from '../../src/envs/agentgym/http-client.js';

interface Held {
  readonly body: string;
  readonly res: ServerResponse;
}

let server: Server | null = null;
afterEach(async () => {
  const s = server;
  server = null;
  if (s) await new Promise<void>((resolve) => {
    s.closeAllConnections();
    s.close(() => resolve());
  });
});

/** A server that holds the first `hold` requests, then drops their socket; later requests are answered `{"ok": <body>}`. */
async function dropAfter(hold: number): Promise<{ url: string; bodies: string[]; sockets: Set<unknown> }> {
  const bodies: string[] = [];
  const sockets = new Set<unknown>();
  const held: Held[] = [];
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    sockets.add(req.socket);
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on('end', () => {
      bodies.push(body);
      if (bodies.length <= hold) {
        held.push({ body, res });
        if (held.length === hold) held[0]?.res.socket?.destroy();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: JSON.parse(body) as unknown }));
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies, sockets };
}

function client(url: string): AgentGymHttpClient {
  return new AgentGymHttpClient({ url, envName: 'babyai', timeoutMs: 5000, retries: 3, backoffBaseMs: 1, backoffMaxMs: 2, connections: 1, pipelining: 8, rng: Rng.fromSeed(1) });
}

describe('AgentGym client pipelining', () => {
  it('keeps several requests in flight on one socket, and never re-sends a /step after the socket drops', async () => {
    const { url, bodies, sockets } = await dropAfter(5);
    const http = client(url);
    const send = (path: '/step' | '/reset', id: number) =>
      http.request({ method: 'POST', path, body: { id, ...(path === '/step' ? { action: 'turn left' } : { data_idx: 1 }) }, retry: path === '/step' ? 'step' : 'idempotent' });
    const calls = [send('/step', 1), send('/reset', 2), send('/step', 3), send('/reset', 4), send('/step', 5)];
    const settled = await Promise.allSettled(calls);

    // All five were on the server at once, on one socket: pipelined.
    expect(bodies.slice(0, 5).map((b) => (JSON.parse(b) as { id: number }).id)).toEqual([1, 2, 3, 4, 5]);
    // Every /step was sent exactly once; each /reset twice (re-sent on a new socket), and answered.
    const sent = (id: number) => bodies.filter((b) => (JSON.parse(b) as { id: number }).id === id).length;
    expect([1, 3, 5].map(sent)).toEqual([1, 1, 1]);
    expect([2, 4].map(sent)).toEqual([2, 2]);
    for (const i of [0, 2, 4]) {
      const outcome = settled[i];
      expect(outcome?.status).toBe('rejected');
      const error = (outcome as PromiseRejectedResult).reason as AgentGymTransportError;
      expect(error).toBeInstanceOf(AgentGymTransportError);
      expect(error.kind).toBe('connection');
    }
    expect(settled[1]).toEqual({ status: 'fulfilled', value: { ok: { id: 2, data_idx: 1 } } });
    expect(settled[3]).toEqual({ status: 'fulfilled', value: { ok: { id: 4, data_idx: 1 } } });
    expect(sockets.size).toBe(2);
    await http.close();
  });
});
