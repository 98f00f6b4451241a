import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { OpenAIChatPolicy } from '../../src/policies/openai-chat.js';
import { backoffDelay, retryAfterMs } from '../../src/policies/retry.js';
import { Semaphore } from '../../src/policies/semaphore.js';
import { AGENTGYM_ACKNOWLEDGEMENT, type TextActRequest } from '../../src/policies/text-policy.js';

// A chat-completions server that misbehaves on purpose: it answers each request with the next
// scripted status (429 with retry-after, 500, 400, …) and 200 once the script runs out.
type Scripted = { status: number; headers?: Record<string, string> };
let script: Scripted[] = [];
const bodies: Record<string, unknown>[] = [];
const authHeaders: (string | undefined)[] = [];
let server: Server;
let baseURL: string;

function reply(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.on('data', (c) => {
      raw += c;
    });
    req.on('end', () => {
      bodies.push(JSON.parse(raw));
      authHeaders.push(req.headers.authorization);
      const next = script.shift();
      if (next && next.status !== 200) {
        reply(res, next.status, { error: { message: `scripted ${next.status}`, type: 'test', param: null, code: null } }, next.headers);
        return;
      }
      reply(res, 200, {
        id: 'c1',
        object: 'chat.completion',
        created: 0,
        model: 'm',
        choices: [{ index: 0, message: { role: 'assistant', content: 'Thought:\nclose\n\nAction:\nmove forward' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 40, completion_tokens: 6, total_tokens: 46 },
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  script = [];
  bodies.length = 0;
  authHeaders.length = 0;
});

const request = (episodeId: string, seed = 11): TextActRequest => ({
  episodeId,
  instruction: 'You are an exploration master.',
  turns: [{ observationText: 'A wall.', actionText: 'turn left' }],
  observation: { text: 'A red ball 1 step ahead.' },
  seed,
});

function policy(extra: { maxRetries?: number } = {}) {
  const sleeps: number[] = [];
  const p = new OpenAIChatPolicy(
    { name: 'local', baseURL, model: 'm', temperature: 0.5, topP: 0.9, maxTokens: 32, retry: { maxRetries: extra.maxRetries ?? 5, initialDelayMs: 100, maxDelayMs: 5_000 } },
    // Injected sleep: records the back-off and returns at once (no real waiting).
    { sleep: async (ms) => void sleeps.push(ms), nowMs: () => Date.parse('2030-01-01T00:00:00Z') },
  );
  return { p, sleeps };
}

describe('OpenAIChatPolicy', () => {
  it("sends AgentGym's conversation (instruction, acknowledgement, observations as user turns) with the sampling settings and seed", async () => {
    const { p } = policy();
    const result = await p.act(request('e1'));
    expect(result).toEqual({ text: 'Thought:\nclose\n\nAction:\nmove forward', usage: { promptTokens: 40, completionTokens: 6 } });
    expect(bodies[0]).toEqual({
      model: 'm',
      messages: [
        { role: 'user', content: 'You are an exploration master.' },
        { role: 'assistant', content: AGENTGYM_ACKNOWLEDGEMENT },
        { role: 'user', content: 'A wall.' },
        { role: 'assistant', content: 'turn left' },
        { role: 'user', content: 'A red ball 1 step ahead.' },
      ],
      temperature: 0.5,
      top_p: 0.9,
      max_tokens: 32,
      seed: 11,
    });
  });

  it('retries 429 and 500 with exponential back-off, honouring retry-after, on an injected sleep', async () => {
    script = [{ status: 429, headers: { 'retry-after': '2' } }, { status: 500 }, { status: 503 }, { status: 429, headers: { 'retry-after-ms': '50' } }];
    const { p, sleeps } = policy();
    const result = await p.act(request('e1'));
    expect(result.text).toContain('move forward');
    expect(bodies).toHaveLength(5); // 4 failures + the success
    // retry 0: max(retry-after 2000, 100) · retry 1: 200 · retry 2: 400 · retry 3: max(50, 800)
    expect(sleeps).toEqual([2000, 200, 400, 800]);
    expect(p.usage()).toMatchObject({ requests: 1, retries: 4, promptTokens: 40, completionTokens: 6 });
  });

  it('gives up after maxRetries and throws the last error', async () => {
    script = [{ status: 500 }, { status: 500 }, { status: 500 }];
    const { p, sleeps } = policy({ maxRetries: 2 });
    await expect(p.act(request('e1'))).rejects.toThrow(/500/);
    expect(bodies).toHaveLength(3);
    expect(sleeps).toEqual([100, 200]);
  });

  it('does not retry a 400 (the request itself is wrong)', async () => {
    script = [{ status: 400 }];
    const { p, sleeps } = policy();
    await expect(p.act(request('e1'))).rejects.toThrow(/400/);
    expect(bodies).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('counts token usage per episode and in total', async () => {
    const { p } = policy();
    await p.act(request('e1'));
    await p.act(request('e1'));
    await p.act(request('e2'));
    const usage = p.usage();
    expect(usage).toMatchObject({ requests: 3, retries: 0, promptTokens: 120, completionTokens: 18 });
    expect(usage.perEpisode).toEqual({ e1: { promptTokens: 80, completionTokens: 12, requests: 2 }, e2: { promptTokens: 40, completionTokens: 6, requests: 1 } });
  });

  it('reads the key from the named environment variable and fails clearly when it is unset', async () => {
    const p = new OpenAIChatPolicy({ name: 'keyed', baseURL, model: 'm', keyEnv: 'TEST_KEY' }, { env: { TEST_KEY: 'sk-test-123' } });
    await p.act(request('e1'));
    expect(authHeaders[0]).toBe('Bearer sk-test-123');
    expect(() => new OpenAIChatPolicy({ name: 'keyed', baseURL, model: 'm', keyEnv: 'TEST_KEY' }, { env: {} })).toThrow(/policies\.keyed\.keyEnv.*TEST_KEY is not set/);
  });
});

describe('back-off helpers', () => {
  it('doubles from the initial delay, caps at the maximum, and lets a longer retry-after win (capped)', () => {
    const policy = { maxRetries: 9, initialDelayMs: 100, maxDelayMs: 1000 };
    expect([0, 1, 2, 3, 4].map((r) => backoffDelay(policy, r))).toEqual([100, 200, 400, 800, 1000]);
    expect(backoffDelay(policy, 0, undefined, 700)).toBe(700);
    expect(backoffDelay(policy, 0, undefined, 60_000)).toBe(1000);
    // Jitter scales into [0.5, 1): random 0 halves the delay.
    expect(backoffDelay(policy, 1, () => 0)).toBe(100);
  });

  it('reads retry-after-ms, retry-after seconds and retry-after HTTP dates', () => {
    const now = Date.parse('2030-01-01T00:00:00Z');
    expect(retryAfterMs(new Headers({ 'retry-after-ms': '250' }), now)).toBe(250);
    expect(retryAfterMs(new Headers({ 'retry-after': '3' }), now)).toBe(3000);
    expect(retryAfterMs(new Headers({ 'retry-after': 'Tue, 01 Jan 2030 00:00:05 GMT' }), now)).toBe(5000);
    expect(retryAfterMs(new Headers({ 'retry-after': 'soon' }), now)).toBeUndefined();
    expect(retryAfterMs(new Headers(), now)).toBeUndefined();
  });

  it('a semaphore never lets more than its limit run at once', async () => {
    const gate = new Semaphore(2);
    let peak = 0;
    const releases: (() => void)[] = [];
    const jobs = Array.from({ length: 5 }, () =>
      gate.run(async () => {
        peak = Math.max(peak, gate.inUse);
        await new Promise<void>((resolve) => releases.push(resolve));
      }),
    );
    for (let done = 0; done < 5; done++) {
      while (releases.length === 0) await Promise.resolve();
      expect(gate.inUse).toBeLessThanOrEqual(2);
      releases.shift()?.();
    }
    await Promise.all(jobs);
    expect(peak).toBe(2);
    expect(gate.inUse).toBe(0);
  });
});
