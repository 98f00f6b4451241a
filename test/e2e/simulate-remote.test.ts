/**
 * `turnwise simulate --policy remote:…`: a model behind an OpenAI-compatible endpoint plays the
 * episodes (as in `eval`), through the environment's tools where it declares them.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSimulateFlags } from '../../src/cli/simulate-command.js';
import { systemClock } from '../../src/core/clock.js';
import { parseConfig, resolveConfig } from '../../src/core/config.js';
import { parseRemoteFlag } from '../../src/runtime/policy-spec.js';
import { simulate } from '../../src/runtime/simulate/simulate.js';
import { vaultSpec } from '../helpers/vault-env.js';

// The endpoint guesses 0, 1, 2, … : the number of tool results it has seen so far.
const requests: { tools?: unknown; messages: { role: string }[] }[] = [];
let server: Server;
let baseURL: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => {
      raw += c;
    });
    req.on('end', () => {
      const body = JSON.parse(raw);
      requests.push(body);
      const seen = body.messages.filter((m: { role: string }) => m.role === 'tool').length;
      const message = { role: 'assistant', content: null, tool_calls: [{ id: `c${seen}`, type: 'function', function: { name: 'guess', arguments: JSON.stringify({ number: seen }) } }] };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'x', object: 'chat.completion', created: 0, model: 'm', choices: [{ index: 0, message, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('turnwise simulate with a remote policy', () => {
  it('plays the episodes through the endpoint, calling the tools the environment declares', async () => {
    const config = resolveConfig(parseConfig({ seed: 5, horizon: { schedule: 'fixed', horizon: 6 } }));
    const policy = parseSimulateFlags({ agents: '4', policy: `remote:local=${baseURL},model=m,concurrency=4` }).policy;
    const report = await simulate({ config, spec: vaultSpec(), agents: 4, policy, budget: { turns: 30 }, clock: systemClock });
    expect(report.policy).toBe(`${baseURL} model m (actions: tools)`);
    expect(report.outcomes.error).toBe(0);
    // Vault i holds i mod 10: guessing 0, 1, 2, … opens it at turn i + 1, within the horizon when i ≤ 5.
    expect(report.outcomes.success).toBeGreaterThan(0);
    expect(report.outcomes.truncated).toBeGreaterThan(0);
    expect(report.outcomes.success + report.outcomes.truncated).toBe(report.episodes);
    expect(report.turns).toBe(requests.length);
    expect(requests.every((r) => Array.isArray(r.tools) && (r.tools as { function: { name: string } }[]).map((t) => t.function.name).join() === 'guess,hint')).toBe(true);
  });

  it('parses --policy remote:<spec> as eval parses --remote, naming the flag at fault', () => {
    expect(parseSimulateFlags({ agents: '2', policy: 'remote:q=http://h:1/v1,model=qwen,key-env=KEY' }).policy).toEqual({ kind: 'remote', spec: parseRemoteFlag('q=http://h:1/v1,model=qwen,key-env=KEY') });
    expect(() => parseSimulateFlags({ agents: '2', policy: 'remote:q' })).toThrow("invalid '--remote'");
  });
});
