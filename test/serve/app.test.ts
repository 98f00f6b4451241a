import { afterAll, describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.js';
import { createServeApp } from '../../src/serve/app.js';
import { parseAvailableActions, toEpisodeView } from '../../src/serve/chat-request.js';
import { textPieces } from '../../src/serve/token-text.js';
import { tinyOwnServedModel } from './tiny-own-model.js';

// An untrained model is enough to test the HTTP surface: what matters is validation and the shape
// of the replies, not the quality of the actions.
const { served, tokenizer } = await tinyOwnServedModel();
afterAll(() => served.dispose());
const maxBodyBytes = 4096;
const app = createServeApp(served, { rng: Rng.fromSeed(0), maxBodyBytes, maxMessages: 9, wallClockMs: () => 1_700_000_000_000 });

const OBS = 'There is a red ball 1 2 steps in front of you.\nAvailable actions: ["turn left", "turn right", "go to red ball 1"]';
const chat = (body: unknown) => app.request('/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const ok = (extra: Record<string, unknown> = {}) => ({ model: 'tiny', messages: [{ role: 'user', content: 'Reach the goal.' }, { role: 'assistant', content: 'OK.' }, { role: 'user', content: OBS }], seed: 5, ...extra });

async function expectError(res: Response, status: number, param: string | null, code: string | null, message: RegExp) {
  expect(res.status).toBe(status);
  const body = (await res.json()) as { error: { message: string; type: string; param: string | null; code: string | null } };
  expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
  expect(body.error.type).toBe('invalid_request_error');
  expect(body.error.param).toBe(param);
  expect(body.error.code).toBe(code);
  expect(body.error.message).toMatch(message);
}

describe('turnwise serve: OpenAI-compatible chat completions', () => {
  it('answers with one of the listed actions, usage counts and the OpenAI response shape', async () => {
    const res = await chat(ok());
    expect(res.status).toBe(200);
    const body = (await res.json()) as { choices: { message: { content: string } }[]; usage: Record<string, number> };
    expect(body).toMatchObject({ object: 'chat.completion', model: 'tiny', created: 1_700_000_000, choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant' }, logprobs: null }] });
    expect(body.choices).toHaveLength(1);
    expect(['turn left', 'turn right', 'go to red ball 1']).toContain(body.choices[0].message.content);
    expect(body.usage.total_tokens).toBe(body.usage.prompt_tokens! + body.usage.completion_tokens!);
    expect(body.usage.completion_tokens).toBeGreaterThan(0);
  });

  it('is reproducible with a seed, honours guided_choice, and argmax-decodes at temperature 0', async () => {
    const text = async (extra: Record<string, unknown>) => ((await (await chat(ok(extra))).json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content;
    expect(await text({ seed: 9 })).toBe(await text({ seed: 9 }));
    expect(await text({ guided_choice: ['drop'] })).toBe('drop');
    expect(await text({ temperature: 0, seed: 1 })).toBe(await text({ temperature: 0, seed: 2 }));
  });

  it('streams SSE chunks whose deltas join to the non-streamed reply, then usage and [DONE]', async () => {
    const plain = (await (await chat(ok({ seed: 21 }))).json()) as { choices: { message: { content: string } }[] };
    const res = await chat(ok({ seed: 21, stream: true, stream_options: { include_usage: true } }));
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    const events = (await res.text()).split('\n\n').filter((e) => e.startsWith('data: ')).map((e) => e.slice(6));
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
    expect(chunks.every((c) => c.object === 'chat.completion.chunk')).toBe(true);
    expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: '' });
    const content = chunks.flatMap((c) => c.choices.map((ch: { delta: { content?: string } }) => ch.delta.content ?? '')).join('');
    expect(content).toBe(plain.choices[0]!.message.content);
    expect(chunks.at(-2).choices[0].finish_reason).toBe('stop');
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { completion_tokens: expect.any(Number) } });
  });

  it('lists its model', async () => {
    const res = await app.request('/v1/models');
    expect(await res.json()).toEqual({ object: 'list', data: [{ id: 'tiny', object: 'model', created: 1_700_000_000, owned_by: 'turnwise', max_model_len: 128 }] });
    await expectError(await app.request('/v1/models/other'), 404, 'model', 'model_not_found', /'other' does not exist/);
  });

  it('rejects an unknown model with 404 model_not_found', async () => {
    await expectError(await chat(ok({ model: 'gpt-4o' })), 404, 'model', 'model_not_found', /'gpt-4o' does not exist.*'tiny'/);
  });

  it('rejects bad parameters naming the parameter', async () => {
    await expectError(await chat(ok({ temperature: 3 })), 400, 'temperature', 'invalid_value', /temperature/);
    await expectError(await chat(ok({ top_p: 0 })), 400, 'top_p', 'invalid_value', /top_p/);
    await expectError(await chat(ok({ max_tokens: -1 })), 400, 'max_tokens', 'invalid_value', /max_tokens/);
    await expectError(await chat(ok({ max_tokens: 1.5 })), 400, 'max_tokens', 'invalid_type', /Invalid type for 'max_tokens': expected an integer, but got a decimal number instead/);
    await expectError(await chat(ok({ temperature: '1' })), 400, 'temperature', 'invalid_type', /expected a number, but got a string/);
    await expectError(await chat(ok({ presence_penalty: 0.5 })), 400, 'presence_penalty', 'invalid_value', /applies no penalties/);
    await expectError(await chat(ok({ top_logprobs: 2 })), 400, 'top_logprobs', 'invalid_value', /logprobs must be true/);
    await expectError(await chat(ok({ functions: [] })), 400, 'functions', null, /Unrecognized request argument supplied: functions/);
    await expectError(await chat({ model: 'tiny' }), 400, 'messages', 'missing_required_parameter', /Missing required parameter: 'messages'/);
    await expectError(await chat(ok({ messages: [{ role: 'function', content: 'x' }] })), 400, 'messages[0].role', 'invalid_value', /messages\[0\]\.role/);
    await expectError(await chat(ok({ messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }] })), 400, 'messages', null, /last message must be a user message/);
    await expectError(await chat(ok({ messages: [{ role: 'user', content: 'a' }, { role: 'user', content: 'b' }] })), 400, 'messages[1].role', null, /Expected a 'assistant'/);
    const bad = await app.request('/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{not json' });
    await expectError(bad, 400, null, null, /could not parse the JSON body/);
  });

  it('rejects oversized input: body over the limit (413), too many messages, a context that cannot fit', async () => {
    await expectError(await chat(ok({ messages: [{ role: 'user', content: 'x'.repeat(maxBodyBytes) }] })), 413, null, 'request_too_large', /larger than 4096 bytes/);
    const many = Array.from({ length: 11 }, (_, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: 'turn left' }));
    await expectError(await chat(ok({ messages: many })), 400, 'messages', 'request_too_large', /expected at most 9 messages, but got 11/);
    const longInstruction = [{ role: 'system', content: 'go to the red ball '.repeat(120) }, { role: 'user', content: OBS }];
    await expectError(await chat(ok({ messages: longInstruction })), 400, 'messages', 'context_length_exceeded', /maximum context length is 128/);
    await expectError(await chat(ok({ max_tokens: 500 })), 400, 'messages', 'context_length_exceeded', /maximum context length is 128 tokens\. However, you requested \d+ tokens \(\d+ in the messages, 500 in the completion\)/);
  });

  it('gives n choices, each with its own index, reproducible with a seed (the first equals n = 1)', async () => {
    const contents = async (extra: Record<string, unknown>) =>
      ((await (await chat(ok({ temperature: 1.5, ...extra }))).json()) as { choices: { index: number; message: { content: string } }[] }).choices;
    const four = await contents({ n: 4, seed: 13 });
    expect(four.map((c) => c.index)).toEqual([0, 1, 2, 3]);
    expect(await contents({ n: 4, seed: 13 })).toEqual(four);
    expect((await contents({ seed: 13 }))[0]!.message.content).toBe(four[0]!.message.content);
  });

  it('returns logprobs of the chosen action tokens in OpenAI format, under the constrained distribution', async () => {
    const res = await chat(ok({ logprobs: true, top_logprobs: 3, seed: 2 }));
    const body = (await res.json()) as { choices: { message: { content: string }; logprobs: { content: { token: string; logprob: number; bytes: number[]; top_logprobs: { token: string; logprob: number }[] }[] } }[] };
    const entries = body.choices[0]!.logprobs.content;
    expect(entries.length).toBeGreaterThan(0);
    // The tokens spell the action (its closing <|end|> included as the last entry).
    expect(entries.map((e) => e.token).join('')).toBe(`${body.choices[0]!.message.content}<|end|>`);
    for (const e of entries) {
      expect(e.logprob).toBeLessThanOrEqual(0);
      expect(Buffer.from(e.bytes).toString('utf8')).toBe(e.token);
      expect(e.top_logprobs.length).toBeLessThanOrEqual(3);
      // Constrained: the alternatives are allowed ids only, and their mass is at most 1.
      expect(e.top_logprobs.reduce((m, t) => m + Math.exp(t.logprob), 0)).toBeLessThanOrEqual(1 + 1e-6);
    }
  });

  it('answers unknown URLs with an OpenAI-style 404', async () => {
    await expectError(await app.request('/v1/embeddings', { method: 'POST' }), 404, null, 'unknown_url', /Unknown request URL: POST \/v1\/embeddings/);
  });
});

describe('mapping chat messages to an episode', () => {
  it("reads AgentGym's opening exchange as the instruction, pairs as past turns, the last user message as the observation", () => {
    const m = (role: 'user' | 'assistant' | 'system', content: string) => ({ role, content });
    expect(toEpisodeView([m('user', 'Rules.'), m('assistant', 'OK.'), m('user', 'o1'), m('assistant', 'a1'), m('user', 'o2')])).toEqual({
      instruction: 'Rules.',
      pastTurns: [{ observationText: 'o1', actionText: 'a1' }],
      observationText: 'o2',
    });
    expect(toEpisodeView([m('system', 'Rules.'), m('user', 'o1'), m('assistant', 'a1'), m('user', 'o2')]).pastTurns).toHaveLength(1);
    expect(toEpisodeView([m('user', 'o1')])).toEqual({ instruction: null, pastTurns: [], observationText: 'o1' });
    expect(toEpisodeView([{ role: 'user', content: [{ type: 'text' as const, text: 'o' }, { type: 'text' as const, text: '1' }] }]).observationText).toBe('o1');
  });

  it('reads the action list from the last `Available actions: [...]` line, or none', () => {
    expect(parseAvailableActions(OBS)).toEqual(['turn left', 'turn right', 'go to red ball 1']);
    expect(parseAvailableActions('Available actions: ["a"]\nmore\nAvailable actions: ["b", "c"]')).toEqual(['b', 'c']);
    expect(parseAvailableActions('Available actions: ["say "hi"", "wave"]')).toEqual(['say "hi"', 'wave']);
    expect(parseAvailableActions('You see nothing.')).toBeNull();
  });

  it('streams text pieces that join to the decoded action', () => {
    const ids = tokenizer.encode('go to red ball 1');
    const pieces = textPieces(served.tokens, ids, false);
    expect(pieces).toHaveLength(ids.length);
    expect(pieces.join('')).toBe('go to red ball 1');
  });
});
