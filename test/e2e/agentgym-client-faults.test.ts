/**
 * Failures on the wire: `{"error"}` bodies, timeouts, 5xx, dropped connections, malformed JSON,
 * 503 retries, the health report of a server that keeps failing, and no instance leaked.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.js';
import { backoffDelay } from '../../src/envs/agentgym/backoff.js';
import type { AgentGymEnvironment } from '../../src/envs/agentgym/environment.js';
import { AgentGymProtocolError, AgentGymServerError, AgentGymTransportError } from '../../src/envs/agentgym/errors.js';
import { type AgentGymHealthReport, onAgentGymHealthReport } from '../../src/envs/agentgym/health.js';
import { createAgentGymSpec } from '../../src/envs/agentgym/spec.js';
import { type FixtureServer, loadFixture, startFixtureServer } from '../envs/agentgym/fixture-server.js';

const spec = createAgentGymSpec(() => undefined);
const babyai = loadFixture('babyai');
let server: FixtureServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

async function babyaiEnv(extra: Record<string, unknown> = {}): Promise<AgentGymEnvironment> {
  server = await startFixtureServer(babyai.exchanges);
  return spec.create({ settings: { type: 'babyai', url: server.url, timeoutMs: 300, backoffMs: 1, maxBackoffMs: 2, ...extra } }) as AgentGymEnvironment;
}

describe('AgentGym client failures', () => {
  it('turns a {"error"} body into AgentGymServerError naming the path and message', async () => {
    const env = await babyaiEnv();
    server?.setFault((req, res) => {
      if (!req.url?.startsWith('/reset')) return false;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"error":"The id 0 is not valid."}');
      return true;
    });
    const error = await env.reset(1).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentGymServerError);
    expect((error as Error).message).toContain('/reset answered with an error: The id 0 is not valid.');
    await env.close();
  });

  it('times out a silent server and does not repeat a /step', async () => {
    const env = await babyaiEnv();
    await env.reset(1);
    server?.setFault((req) => req.url === '/step'); // never answers
    const error = await env.step('go to red ball 1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentGymTransportError);
    expect((error as AgentGymTransportError).kind).toBe('timeout');
    expect(server?.seen.filter((r) => r.path === '/step').length).toBe(1);
    await env.close();
  });

  it('retries /reset after a 500 and after a dropped connection, then succeeds', async () => {
    const env = await babyaiEnv();
    let resets = 0;
    server?.setFault((req, res) => {
      if (req.url !== '/reset') return false;
      resets++;
      if (resets === 1) res.writeHead(500).end('Internal Server Error');
      else if (resets === 2) res.socket?.destroy();
      else return false;
      return true;
    });
    const first = await env.reset(1);
    expect(first.text).toBe(babyai.first);
    expect(resets).toBe(3);
    await env.close();
  });

  it('does not repeat a /step after a 500 (it may have been applied) but does after a 503', async () => {
    const env = await babyaiEnv();
    await env.reset(1);
    let steps = 0;
    server?.setFault((req, res) => {
      if (req.url !== '/step') return false;
      steps++;
      if (steps === 1) {
        res.writeHead(503).end('{"error":"busy"}');
        return true;
      }
      return false;
    });
    const result = await env.step('go to red ball 1');
    expect(result.success).toBe(true);
    expect(steps).toBe(2);
    const env2 = spec.create({ settings: { type: 'babyai', url: server?.url as string, timeoutMs: 300, backoffMs: 1 } });
    server?.setFault((req, res) => {
      if (req.url === '/create') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"id":1}');
        return true;
      }
      if (req.url === '/reset') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(babyai.exchanges[1]?.response));
        return true;
      }
      if (req.url === '/step') {
        res.writeHead(500).end('boom');
        return true;
      }
      return false;
    });
    await env2.reset(1);
    const before = server?.seen.filter((r) => r.path === '/step').length ?? 0;
    await expect(env2.step('turn left')).rejects.toMatchObject({ status: 500, attempts: 1 });
    expect(server?.seen.filter((r) => r.path === '/step').length).toBe(before + 1);
    await env.close();
    await env2.close();
  });

  it('reports malformed JSON and a wrong shape as AgentGymProtocolError', async () => {
    const env = await babyaiEnv();
    server?.setFault((req, res) => {
      if (req.url !== '/reset') return false;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"observation": "half');
      return true;
    });
    await expect(env.reset(1)).rejects.toBeInstanceOf(AgentGymProtocolError);
    server?.setFault((req, res) => {
      if (req.url === '/create') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"id": 9}');
        return true;
      }
      if (req.url !== '/reset') return false;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"observation": 42}');
      return true;
    });
    await expect(env.reset(1)).rejects.toThrow(/expected a string at "observation"/);
    await env.close();
  });

  it('reports a server that keeps failing, names its URL and count, and recovers', async () => {
    const reports: AgentGymHealthReport[] = [];
    const stop = onAgentGymHealthReport((r) => reports.push(r));
    const env = await babyaiEnv({ retries: 0, reportAfter: 3 });
    server?.setFault((_req, res) => {
      res.writeHead(502).end('bad gateway');
      return true;
    });
    for (let i = 0; i < 3; i++) await expect(env.reset(1)).rejects.toBeInstanceOf(AgentGymTransportError);
    expect(reports).toHaveLength(1);
    expect(reports[0]?.kind).toBe('failing');
    expect(reports[0]?.url).toBe(server?.url);
    expect(reports[0]?.consecutiveFailures).toBe(3);
    expect(reports[0]?.message).toContain(`${server?.url} failed 3 requests in a row`);
    server?.setFault(null);
    await env.reset(1); // health check, then create + reset succeed
    expect(reports.at(-1)?.kind).toBe('recovered');
    expect(server?.seen.some((r) => r.method === 'GET' && r.path === '/')).toBe(true);
    stop();
    await env.close();
  });

  it('reports a failed session and the fresh instance that replaces it', async () => {
    const reports: AgentGymHealthReport[] = [];
    const stop = onAgentGymHealthReport((r) => reports.push(r));
    const env = await babyaiEnv();
    await env.reset(1);
    const failed = env.instanceId;
    server?.setFault((req, res) => {
      if (req.url === '/step') {
        res.socket?.destroy();
        return true;
      }
      if (req.url === '/close') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('true');
        return true;
      }
      if (req.url === '/create') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"id":7}');
        return true;
      }
      if (req.url === '/reset') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(babyai.exchanges[1]?.response));
        return true;
      }
      return false;
    });
    await expect(env.step('turn left')).rejects.toBeInstanceOf(AgentGymTransportError);
    expect(reports.map((r) => [r.kind, r.instanceId])).toEqual([['session-failed', failed]]);
    expect(reports[0]?.message).toMatch(new RegExp(`instance ${failed} on ${server?.url} failed \\(.*\\); its episode ends as error`));
    await env.reset(1); // a health check, then a fresh instance
    expect(reports.map((r) => [r.kind, r.instanceId, r.replaces])).toEqual([
      ['session-failed', failed, undefined],
      ['session-recreated', 7, failed],
    ]);
    stop();
    await env.close();
  });

  it('gives a failed instance back and closes it, so none leaks when an episode dies', async () => {
    const env = await babyaiEnv();
    await env.reset(1);
    const id = env.instanceId;
    server?.setFault((req, res) => {
      if (req.url === '/step') {
        res.socket?.destroy();
        return true;
      }
      if (req.url === '/close') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('true');
        return true;
      }
      return false;
    });
    await expect(env.step('turn left')).rejects.toBeInstanceOf(AgentGymTransportError);
    expect(env.instanceId).toBeNull();
    const closes = server?.seen.filter((r) => r.path === '/close').map((r) => JSON.parse(r.body) as unknown);
    expect(closes).toEqual([{ id }]);
    await env.close();
  });
});

describe('backoffDelay', () => {
  it('doubles a capped base and adds jitter from the Rng in [cap/2, cap)', () => {
    const rng = Rng.fromSeed(3);
    const u = Rng.fromSeed(3);
    for (let attempt = 0; attempt < 6; attempt++) {
      const cap = Math.min(1000, 100 * 2 ** attempt);
      expect(backoffDelay(attempt, { baseMs: 100, maxMs: 1000 }, rng)).toBeCloseTo(cap / 2 + u.next() * (cap / 2), 10);
    }
  });
});
