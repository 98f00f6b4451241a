/**
 * The lean `node:http` path of `turnwise env serve` answers byte for byte what the Hono app
 * answers: the same raw requests, over real sockets, to a server on each path (same session
 * history), give the same status line, headers (but `Date`) and body — valid calls, FastAPI 422s,
 * 200 `{"error"}`s, 413s by content-length and by chunked length, odd encodings, CORS on and off.
 * And the fast path really takes the hot routes (it does not just hand everything to Hono).
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { afterEach, describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../src/core/clock.js';
import { babyaiSpec } from '../../src/envs/babyai/index.js';
import { createAgentGymApp } from '../../src/envs/agentgym/server/app.js';
import { createFastListener } from '../../src/envs/agentgym/server/fast-listener.js';

interface Side {
  readonly port: number;
  readonly server: Server;
  readonly fallbacks: string[];
  close(): Promise<void>;
}

const MAX_BODY = 1024;
const open: Side[] = [];
afterEach(async () => {
  for (const side of open.splice(0)) await side.close();
});

async function start(fast: boolean, cors: boolean): Promise<Side> {
  const built = createAgentGymApp({ spec: babyaiSpec, maxSessions: 8, idleMs: 0, maxBodyBytes: MAX_BODY, cors, clock: new SimulatedClock() });
  const viaHono = getRequestListener(built.app.fetch, { hostname: '127.0.0.1' });
  const fallbacks: string[] = [];
  const counted: RequestListener = (req, res) => {
    fallbacks.push(`${req.method} ${req.url}`);
    viaHono(req, res);
  };
  const server = createServer(fast ? createFastListener({ protocol: built.protocol, maxBodyBytes: MAX_BODY, cors, fallback: counted }) : viaHono);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const side: Side = {
    port: (server.address() as AddressInfo).port,
    server,
    fallbacks,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await built.close();
    },
  };
  open.push(side);
  return side;
}

/** Sends raw bytes on a fresh socket; resolves to the whole response (headers and body) with `Date` removed. */
function exchange(port: number, request: Buffer | string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    let received = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = received.subarray(0, end).toString('latin1');
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? 0);
      if (received.length < end + 4 + length) return;
      socket.destroy();
      resolve(received.subarray(0, end + 4 + length).toString('utf8').replace(/\r\nDate: [^\r]*/, ''));
    });
    socket.on('error', reject);
  });
}

const post = (path: string, body: Buffer | string, headers: Record<string, string> = { 'content-type': 'application/json' }) => {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  return Buffer.concat([Buffer.from(`POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\n${lines}content-length: ${bytes.length}\r\n\r\n`), bytes]);
};
const chunked = (path: string, body: string) =>
  `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n` +
  `${(body.length >> 1).toString(16)}\r\n${body.slice(0, body.length >> 1)}\r\n${(body.length - (body.length >> 1)).toString(16)}\r\n${body.slice(body.length >> 1)}\r\n0\r\n\r\n`;
const get = (path: string, headers = '') => `GET ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\n${headers}\r\n`;
const ext = { 'content-type': 'application/json', 'x-turnwise-ext': '1', origin: 'http://ui.local' };

/** A session history that touches every answer the protocol routes give. */
const SCRIPT: readonly (Buffer | string)[] = [
  post('/create', ''),
  post('/create', ''),
  post('/step', '{"id": 0, "action": "turn left"}'), // before reset
  post('/reset', '{"id": 0, "data_idx": 1}', ext),
  post('/reset', '{"id": 1, "data_idx": "2"}'),
  post('/step', '{"id": 0, "action": "turn left"}'),
  post('/step', '{"id": 0, "action": "Thought: hm\\nAction: move forward"}', ext),
  post('/step', '{"id": 1, "action": "dance"}', ext),
  post('/step', '\ufeff{"id": 0, "action": "turn right"}'), // a BOM, stripped as Request.text() does
  post('/step', Buffer.from([0x7b, 0x22, 0x69, 0x64, 0x22, 0x3a, 0x30, 0x2c, 0x22, 0x61, 0x63, 0x74, 0x69, 0x6f, 0x6e, 0x22, 0x3a, 0x22, 0xff, 0xc3, 0x22, 0x7d])), // bad UTF-8
  post('/step', '{"id": true, "action": "turn left"}', { 'content-type': 'application/json; charset=utf-8' }),
  post('/step', '{"id": 0, "action": "turn left"}', { 'content-type': 'application/vnd.api+json' }),
  post('/step', '{"id": 0, "action": "turn left"}', {}), // no content-type: parsed as JSON
  post('/step', '{"id": 0, "action": "turn left"}', { 'content-type': 'text/plain' }),
  post('/step', '{"id": "x"}'),
  post('/step', '{"id": 1.5, "action": 5}'),
  post('/step', '{"id": 7, "action": "turn left"}'),
  post('/reset', '{"id": 0,'),
  post('/reset', '[1, 2]'),
  post('/reset', '{"id": 0, "data_idx": -1}'),
  post('/reset', '{"id": 0}'),
  post('/close', ''),
  post('/step', JSON.stringify({ id: 0, action: 'x'.repeat(5000) })), // 413 by content-length
  chunked('/step', JSON.stringify({ id: 0, action: 'x'.repeat(5000) })), // 413 by counting
  chunked('/step', '{"id": 1, "action": "turn left"}'),
  get('/observation?id=0'),
  get('/observation?id=1', 'origin: http://ui.local\r\nx-turnwise-ext: 1\r\n'),
  get('/observation?id=abc'),
  get('/observation'),
  get('/observation?id=0&id=1'),
  get('/observation?id=%31'),
  get('/observation?id=0#frag'),
  get('/step'),
  get('/'),
  get('/nope'),
  `OPTIONS /step HTTP/1.1\r\nhost: 127.0.0.1\r\norigin: http://ui.local\r\naccess-control-request-method: POST\r\n\r\n`,
  post('/close', '{"id": 0}'),
  post('/close', '{"id": 0}'),
  post('/step', '{"id": 0, "action": "turn left"}'), // after close
];

describe('turnwise env serve: the node:http fast path', () => {
  for (const cors of [false, true]) {
    it(`answers every request byte for byte as the Hono app does (CORS ${cors ? 'on' : 'off'})`, async () => {
      const hono = await start(false, cors);
      const fast = await start(true, cors);
      for (const request of SCRIPT) {
        const expected = await exchange(hono.port, request);
        const actual = await exchange(fast.port, request);
        expect(actual, String(request).slice(0, 80)).toBe(expected);
      }
      // The hot routes never reached Hono; only `/`, preflight, unknown paths and odd URLs did.
      expect(fast.fallbacks).toEqual(['GET /observation?id=0#frag', 'GET /step', 'GET /', 'GET /nope', 'OPTIONS /step']);
    });
  }

  it('closes the connection after refusing a huge body (the rest is not read as a request), without a reset', async () => {
    const fast = await start(true, false);
    const big = post('/step', JSON.stringify({ id: 0, action: 'x'.repeat(5000) }));
    const answers = await new Promise<string>((resolve, reject) => {
      const socket = connect(fast.port, '127.0.0.1', () => socket.write(Buffer.concat([big, post('/create', '')])));
      let text = '';
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString();
      });
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(answers).toMatch(/^HTTP\/1\.1 413 Payload Too Large\r\nconnection: close\r\n/);
    expect(answers).toContain('{"detail":"request body larger than 1024 bytes"}');
    expect(answers).not.toContain('200 OK'); // the pipelined request after the refused body was not taken
    const created = await exchange(fast.port, post('/create', ''));
    expect(created).toMatch(/^HTTP\/1\.1 200 OK[\s\S]*\{"id":0\}$/); // id 0: the pipelined /create never ran
  });
});
