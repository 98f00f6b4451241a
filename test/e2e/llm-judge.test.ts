import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/core/config.js';
import { LlmJudge, llmJudgeSettingsSchema, parseJudgeScore } from '../../src/policies/llm-judge.js';
import '../../src/runtime/reward-shaping.js';

/** A real OpenAI-compatible chat endpoint: scores "good" steps 8 and others 2, after `failFirst` 503s. */
let server: Server;
let endpoint = '';
let failFirst = 0;
let inFlight = 0;
let maxInFlight = 0;
const prompts: string[] = [];
beforeAll(async () => {
  server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    if (failFirst > 0) {
      failFirst--;
      res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":{"message":"busy"}}');
      return;
    }
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    await new Promise((r) => setTimeout(r, 20));
    inFlight--;
    const request = JSON.parse(body) as { messages: { role: string; content: string }[] };
    const user = request.messages.find((m) => m.role === 'user')?.content ?? '';
    prompts.push(user);
    const content = /Step to grade: .*good/.test(user) ? 'A useful step.\nScore: 8' : 'Not helpful. Score: 2';
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: 'x', object: 'chat.completion', created: 0, model: 'judge', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const input = (action: string) => ({ taskId: 'wordle_3', history: [{ observation: 'Guess.', action: 'crane' }], observation: 'crane -> b b y b b', action });

describe('LLM-as-judge reward', () => {
  it('scores turns through a real endpoint, scaled to [0, weight], asking each prompt once', async () => {
    const judge = new LlmJudge(llmJudgeSettingsSchema.parse({ endpoint, weight: 0.5 }));
    const before = prompts.length;
    expect(await judge.score(input('a good guess'))).toBeCloseTo(0.4, 12);
    expect(await judge.score(input('a bad guess'))).toBeCloseTo(0.1, 12);
    expect(await judge.score(input('a good guess'))).toBeCloseTo(0.4, 12);
    expect(prompts.length - before).toBe(2);
    expect(prompts.at(-1)).toContain('Turn 1\nObservation: Guess.\nAction: crane');
  });

  it('retries a busy endpoint and keeps at most `concurrency` requests in flight', async () => {
    failFirst = 2;
    const judge = new LlmJudge(llmJudgeSettingsSchema.parse({ endpoint, concurrency: 2, retries: 3 }));
    maxInFlight = 0;
    const scores = await Promise.all(Array.from({ length: 6 }, (_, i) => judge.score(input(`good move ${i}`))));
    expect(scores.every((s) => Math.abs(s - 0.8) < 1e-12)).toBe(true);
    expect(maxInFlight).toBeLessThanOrEqual(2);
    expect(judge.requests).toBe(8); // 6 prompts + 2 retried 503s
  });

  it('fails with the endpoint named when the reply has no score in range', async () => {
    const judge = new LlmJudge(llmJudgeSettingsSchema.parse({ endpoint, min: 0, max: 1 }));
    await expect(judge.score(input('a good guess'))).rejects.toThrow(/llm-judge at http.*expected a score in \[0, 1\]/);
  });

  it('parses the last "Score:" and falls back to the last number', () => {
    expect(parseJudgeScore('Score: 3 ... final Score = 9.5')).toBe(9.5);
    expect(parseJudgeScore('I give it 4')).toBe(4);
    expect(parseJudgeScore('no idea')).toBeNull();
  });

  it('is refused at config parse time without an endpoint, naming the field', () => {
    const config = (settings: Record<string, unknown>) => () => parseConfig({ env: { name: 'wordle' }, reward: { mode: 'outcome+shaped', shaper: 'llm-judge', settings } });
    expect(config({})).toThrow(/reward\.settings\.endpoint/);
    expect(config({ endpoint: 'not a url' })).toThrow(/reward\.settings\.endpoint/);
    expect(config({ endpoint })).not.toThrow();
  });
});
