/**
 * The bad-input suite of `turnwise env serve`, over a real socket (the `node:http` fast path and the
 * Hono app alike): each bad request gets its status and a FastAPI detail whose `loc` names the field
 * and whose `type` names what was wrong with it, the process's memory grows by a bounded amount,
 * and the server still answers afterwards. An error answered before the body was read closes the
 * connection, so a kept-alive client's next request goes out on a fresh one instead of failing.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { babyaiSpec } from '../../src/envs/babyai/index.js';
import { type RunningServer, startAgentGymServer } from '../../src/envs/agentgym/server/serve.js';

interface Reply {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: unknown;
}

const resident = () => process.memoryUsage().rss;
const MAX_GROWTH = 64 * 2 ** 20;

interface Case {
  readonly name: string;
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly body?: string;
  readonly contentType?: string;
  readonly status: number;
  /** The detail's first entry (422), or the `{"error"}` text (200). */
  readonly expected: { readonly type: string; readonly loc: readonly unknown[]; readonly msg: RegExp } | RegExp;
}

const CASES: Case[] = [
  { name: 'an id of true', method: 'POST', path: '/step', body: '{"id": true, "action": "turn left"}', status: 422, expected: { type: 'int_type', loc: ['body', 'id'], msg: /valid integer, got a boolean/ } },
  { name: 'a data_idx of 1e308', method: 'POST', path: '/reset', body: '{"id": 0, "data_idx": 1e308}', status: 422, expected: { type: 'less_than_equal', loc: ['body', 'data_idx'], msg: /less than or equal to 9007199254740991/ } },
  { name: 'a data_idx of -1e308', method: 'POST', path: '/reset', body: '{"id": 0, "data_idx": -1e308}', status: 422, expected: { type: 'greater_than_equal', loc: ['body', 'data_idx'], msg: /greater than or equal to -9007199254740991/ } },
  { name: 'a 20-digit data_idx string', method: 'POST', path: '/reset', body: '{"id": 0, "data_idx": "99999999999999999999"}', status: 422, expected: { type: 'less_than_equal', loc: ['body', 'data_idx'], msg: /less than or equal/ } },
  { name: 'a decimal id', method: 'POST', path: '/step', body: '{"id": 1.5, "action": "turn left"}', status: 422, expected: { type: 'int_from_float', loc: ['body', 'id'], msg: /fractional part/ } },
  { name: 'a number as the action', method: 'POST', path: '/step', body: '{"id": 0, "action": 5}', status: 422, expected: { type: 'string_type', loc: ['body', 'action'], msg: /valid string/ } },
  { name: 'no action', method: 'POST', path: '/step', body: '{"id": 0}', status: 422, expected: { type: 'missing', loc: ['body', 'action'], msg: /Field required/ } },
  { name: 'no body', method: 'POST', path: '/reset', body: '', status: 422, expected: { type: 'missing', loc: ['body'], msg: /Field required/ } },
  { name: 'a body that is not JSON', method: 'POST', path: '/step', body: '{"id": ', status: 422, expected: { type: 'json_invalid', loc: ['body', expect.any(Number)], msg: /JSON decode error/ } },
  { name: 'a JSON array body', method: 'POST', path: '/step', body: '[1, 2]', status: 422, expected: { type: 'model_attributes_type', loc: ['body'], msg: /valid dictionary/ } },
  { name: 'a text/plain body', method: 'POST', path: '/close', body: '{"id": 0}', contentType: 'text/plain', status: 422, expected: { type: 'model_attributes_type', loc: ['body'], msg: /valid dictionary/ } },
  { name: 'a query id that is not a number', method: 'GET', path: '/observation?id=abc', status: 422, expected: { type: 'int_parsing', loc: ['query', 'id'], msg: /unable to parse string/ } },
  { name: 'an unknown id', method: 'POST', path: '/step', body: '{"id": 4096, "action": "turn left"}', status: 200, expected: /unknown instance id 4096/ },
];

for (const fastPath of [true, false]) {
  describe(`turnwise env serve: bad input (${fastPath ? 'node:http fast path' : 'Hono app'})`, () => {
    let server: RunningServer;
    let agent: http.Agent;
    beforeAll(async () => {
      server = await startAgentGymServer({ spec: babyaiSpec, port: 0, fastPath });
      agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      // Session 0 exists and has an episode, so the cases reach validation rather than 'unknown id'.
      await send('POST', '/create', '');
      await send('POST', '/reset', '{"id": 0, "data_idx": 0}');
    });
    afterAll(async () => {
      agent?.destroy();
      await server?.stop();
    });

    /** One request on the shared keep-alive agent (one socket, reused while the server allows). */
    function send(method: string, path: string, body?: string | Buffer, contentType = 'application/json'): Promise<Reply> {
      return new Promise((resolve, reject) => {
        const headers = body === undefined ? {} : { 'content-type': contentType, 'content-length': Buffer.byteLength(body) };
        const req = http.request({ agent, host: '127.0.0.1', port: server.port, method, path, headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text === '' ? null : JSON.parse(text) });
          });
        });
        req.on('error', reject);
        req.end(body);
      });
    }

    /** A whole episode start: create, reset, step. */
    async function expectStillAnswers(): Promise<void> {
      const created = await send('POST', '/create', '');
      expect(created.status).toBe(200);
      const id = (created.body as { id: number }).id;
      expect((await send('POST', '/reset', JSON.stringify({ id, data_idx: 1 }))).status).toBe(200);
      const step = await send('POST', '/step', JSON.stringify({ id, action: 'turn left' }));
      expect(step.status).toBe(200);
      expect(step.body).toHaveProperty('observation');
      expect((await send('POST', '/close', JSON.stringify({ id }))).body).toBe(true);
    }

    for (const c of CASES) {
      it(`refuses ${c.name}, naming the field, with bounded memory, and still answers`, async () => {
        const before = resident();
        const reply = await send(c.method, c.path, c.method === 'POST' ? (c.body ?? '') : undefined, c.contentType);
        expect(reply.status).toBe(c.status);
        if (c.expected instanceof RegExp) {
          expect((reply.body as { error: string }).error).toMatch(c.expected);
        } else {
          const [first] = (reply.body as { detail: { type: string; loc: unknown[]; msg: string }[] }).detail;
          expect(first).toMatchObject({ type: c.expected.type, loc: c.expected.loc });
          expect(first?.msg).toMatch(c.expected.msg);
        }
        // The body was read: the connection stays usable.
        expect(reply.headers.connection).not.toBe('close');
        expect(resident() - before).toBeLessThan(MAX_GROWTH);
        await expectStillAnswers();
      });
    }

    it('answers a 900 KB invalid action with a short observation, not an echo of it', async () => {
      const before = resident();
      const reply = await send('POST', '/step', JSON.stringify({ id: 0, action: `go to ${'x'.repeat(900_000)}` }));
      expect(reply.status).toBe(200);
      const observation = (reply.body as { observation: string }).observation;
      expect(observation.length).toBeLessThan(4000);
      expect(observation).toMatch(/characters long; the limit is 1000/);
      expect(resident() - before).toBeLessThan(MAX_GROWTH);
      await expectStillAnswers();
    });

    it('refuses a body over the limit with 413 and Connection: close, and the next kept-alive request succeeds', async () => {
      const before = resident();
      const reply = await send('POST', '/step', Buffer.alloc(8 * 2 ** 20, 0x61)); // 8 MiB against the 1 MiB limit
      expect(reply.status).toBe(413);
      expect(reply.body).toEqual({ detail: 'request body larger than 1048576 bytes' });
      expect(reply.headers.connection).toBe('close');
      expect(resident() - before).toBeLessThan(MAX_GROWTH);
      await expectStillAnswers();
    });

    it('closes the connection after a 404 for a POST whose body was never read', async () => {
      const reply = await send('POST', '/nope', JSON.stringify({ id: 0, pad: 'x'.repeat(100_000) }));
      expect(reply.status).toBe(404);
      expect(reply.body).toEqual({ detail: 'Not Found' });
      expect(reply.headers.connection).toBe('close');
      await expectStillAnswers();
    });
  });
}
