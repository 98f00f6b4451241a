/**
 * A remote model whose server refuses a conversation as longer than its context (vLLM's 400
 * "This model's maximum context length is 400 tokens…"): the episode ends by length — as a token
 * policy's does when its context is full — and the report says what to change, instead of every
 * episode in error and "Is it up?" (issue #32).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluatePolicies } from '../../src/eval/harness.js';
import { markdownReport } from '../../src/eval/report.js';
import '../../src/envs/index.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-remote-length-'));
let server: Server;
let baseURL: string;

beforeAll(async () => {
  // A server that answers the first turn and refuses the conversation from the second on.
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const body = JSON.parse(raw) as { messages: unknown[] };
      res.setHeader('content-type', 'application/json');
      if (body.messages.length > 3) {
        res.writeHead(400);
        res.end(JSON.stringify({ object: 'error', message: "This model's maximum context length is 400 tokens. However, you requested 455 tokens (391 in the messages, 64 in the completion). Please reduce the length of the messages or completion.", type: 'BadRequestError', param: null, code: 400 }));
        return;
      }
      res.end(JSON.stringify({ id: 'c', object: 'chat.completion', created: 0, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'Thought:\nlook\n\nAction:\nturn left' }, finish_reason: 'stop' }], usage: { prompt_tokens: 300, completion_tokens: 8, total_tokens: 308 } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

describe("a remote model's context-length refusal", () => {
  it('ends the episode by length with a hint in the report, not as an error', async () => {
    const report = await evaluatePolicies({
      policies: [{ kind: 'remote', name: 'small-context', config: { name: 'small-context', baseURL, model: 'm', retry: { maxRetries: 2 } } }],
      env: 'babyai',
      envSettings: { levels: ['GoToRedBall'] },
      split: 'test',
      tasks: 3,
      samples: 1,
      horizon: 4,
      runDir: join(dir, 'eval'),
      remoteDeps: { sleep: async () => undefined },
    });
    const [result] = report.policies;
    const outcomes = result?.trajectories.map((t) => t.outcome) ?? [];
    // Episodes that did not end at their first turn ended by length at the second.
    expect(outcomes.filter((o) => o === 'error')).toEqual([]);
    expect(outcomes.some((o) => o === 'length')).toBe(true);
    expect(result?.summary.overall.errorRate).toBe(0);
    expect(result?.summary.overall.lengthTruncationRate).toBeGreaterThan(0);
    expect(result?.usage?.contextLengthRefusals).toBe(outcomes.filter((o) => o === 'length').length);
    expect(markdownReport(report)).toMatch(/refused by the server as longer than its model's context: those episodes ended by length .*--max-model-len/);
  });
});
