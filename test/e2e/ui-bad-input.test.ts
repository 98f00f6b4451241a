/**
 * The bad-input suite of `turnwise ui`, over a real socket: each bad request gets its status and a
 * JSON error whose message names the parameter at fault and what it should be, the process's
 * memory grows by a bounded amount, and the server still answers afterwards. An error answered
 * without reading a request's body (the API takes none) closes the connection, so a kept-alive
 * client's next request goes out on a fresh one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunStore } from '../../src/store/run-store.js';
import { type RunningUi, startUiServer } from '../../src/ui/server/server.js';

const root = mkdtempSync(join(tmpdir(), 'turnwise-ui-bad-'));
let ui: RunningUi;
let agent: http.Agent;

beforeAll(async () => {
  const store = RunStore.open(join(root, 'alpha'));
  store.createRun({ id: 'alpha', name: 'alpha', createdAt: 1_000, config: { env: { name: 'babyai' }, algorithm: { name: 'grpo' }, train: { steps: 2 } }, backend: 'cpu', seed: 1 });
  store.logMetrics(1, { 'rollout/successRate': 0.25 });
  store.setRunStatus('completed');
  store.close();
  ui = await startUiServer({ runsDir: root, port: 0 });
  agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
});
afterAll(async () => {
  agent?.destroy();
  await ui?.close();
  rmSync(root, { recursive: true, force: true });
});

interface Reply {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: { error?: { type: string; message: string } } & Record<string, unknown>;
}

function send(method: string, path: string, body?: Buffer | string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const headers = body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
    const req = http.request({ agent, host: '127.0.0.1', port: ui.port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text.startsWith('{') ? JSON.parse(text) : { text } });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

const resident = () => process.memoryUsage().rss;
const MAX_GROWTH = 64 * 2 ** 20;

async function expectStillAnswers(): Promise<void> {
  const runs = await send('GET', '/api/runs');
  expect(runs.status).toBe(200);
  expect((runs.body.runs as { id: string }[]).map((r) => r.id)).toEqual(['alpha']);
  const metrics = await send('GET', '/api/runs/alpha/metrics?names=rollout/successRate');
  expect(metrics.body.series).toEqual({ 'rollout/successRate': [[1, 0.25]] });
}

interface Case {
  readonly name: string;
  readonly path: string;
  readonly status: number;
  readonly type: string;
  readonly message: RegExp;
}

const manyNames = Array.from({ length: 2000 }, (_, i) => `m${i}`).join(',');
const CASES: Case[] = [
  { name: 'an encoded .. in a run id', path: '/api/runs/..%2F..%2Fetc', status: 400, type: 'path_traversal', message: /escapes its folder; '\.\.' segments are refused/ },
  { name: 'a malformed escape', path: '/api/runs/%ZZ', status: 400, type: 'path_traversal', message: /is not a valid URL path/ },
  { name: 'an unknown run', path: '/api/runs/nope', status: 404, type: 'not_found', message: /nope/ },
  { name: 'a step that is not a number', path: '/api/runs/alpha/episodes?step=abc', status: 400, type: 'invalid_request', message: /invalid 'step': expected an integer in \[0, \d+\], got "abc"/ },
  { name: 'a hexadecimal step', path: '/api/runs/alpha/episodes?step=0x10', status: 400, type: 'invalid_request', message: /invalid 'step': expected an integer .* got "0x10"/ },
  { name: 'an exponent limit', path: '/api/runs/alpha/episodes?limit=1e3', status: 400, type: 'invalid_request', message: /invalid 'limit': expected an integer in \[1, 5000\], got "1e3"/ },
  { name: 'a limit over the cap', path: '/api/runs/alpha/episodes?limit=1000000000', status: 400, type: 'invalid_request', message: /invalid 'limit': expected an integer in \[1, 5000\]/ },
  { name: 'a negative offset', path: '/api/runs/alpha/episodes?offset=-1', status: 400, type: 'invalid_request', message: /invalid 'offset'/ },
  { name: 'an unknown split', path: '/api/runs/alpha/episodes?split=bogus', status: 400, type: 'invalid_request', message: /invalid 'split': expected one of train, test, eval, got "bogus"/ },
  { name: 'an unknown outcome', path: '/api/runs/alpha/episodes?outcome=win', status: 400, type: 'invalid_request', message: /invalid 'outcome': expected one of success/ },
  { name: 'turns without a run', path: '/api/episodes/x/turns', status: 400, type: 'invalid_request', message: /invalid 'run': give the run id/ },
  { name: 'an unknown episode', path: '/api/episodes/x/turns?run=alpha', status: 404, type: 'not_found', message: /no episode 'x' in run 'alpha'/ },
  { name: 'too many metric names', path: `/api/runs/alpha/metrics?names=${manyNames}`, status: 400, type: 'invalid_request', message: /invalid 'names': expected at most 256 metric names, got 2000/ },
  { name: 'an unknown API route', path: '/api/nothing', status: 404, type: 'not_found', message: /no API route GET \/api\/nothing/ },
];

describe('turnwise ui: bad input', () => {
  for (const c of CASES) {
    it(`refuses ${c.name}, naming the parameter, with bounded memory, and still answers`, async () => {
      const before = resident();
      const reply = await send('GET', c.path);
      expect(reply.status).toBe(c.status);
      expect(reply.body.error?.type).toBe(c.type);
      expect(reply.body.error?.message).toMatch(c.message);
      expect(resident() - before).toBeLessThan(MAX_GROWTH);
      await expectStillAnswers();
    });
  }

  it('answers a URL over the header limit with 431 and still answers', async () => {
    const reply = await send('GET', `/api/runs/alpha/metrics?names=${'x'.repeat(100_000)}`);
    expect(reply.status).toBe(431);
    await expectStillAnswers();
  });

  it('closes the connection after refusing a POST whose 8 MiB body it never reads, and the next kept-alive request succeeds', async () => {
    const before = resident();
    const reply = await send('POST', '/api/runs', Buffer.alloc(8 * 2 ** 20, 0x61));
    expect(reply.status).toBe(404);
    expect(reply.body.error?.message).toMatch(/no API route POST \/api\/runs/);
    expect(reply.headers.connection).toBe('close');
    expect(resident() - before).toBeLessThan(MAX_GROWTH);
    await expectStillAnswers();
  });

  it('keeps the connection alive after an error for a request without a body', async () => {
    const reply = await send('GET', '/api/runs/nope');
    expect(reply.status).toBe(404);
    expect(reply.headers.connection).not.toBe('close');
  });
});
