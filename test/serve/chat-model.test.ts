/**
 * `turnwise serve` on a Hugging Face model folder (a tiny random llama with SmolLM2's tokenizer and
 * ChatML template): chat through the model's own template, stop strings, n choices, logprobs; the
 * legacy completions' echo + logprobs scoring against the model's own training forward; the
 * tokenizer endpoints; a base model without a template.
 */
import { mkdtempSync, rmSync, writeFileSync, readFileSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.js';
import { selectBackend } from '../../src/backend/select.js';
import { tf } from '../../src/backend/tf.js';
import { loadChatModelFiles } from '../../src/models/chat/index.js';
import { loadHfModel } from '../../src/models/hf/hf-model.js';
import type { TransformerModel } from '../../src/models/transformer/model.js';
import { createServeApp } from '../../src/serve/app.js';
import { type LoadedModel, loadServedModel } from '../../src/serve/load-model.js';
import { packBatch } from '../models/transformer-fixtures.js';
import { TINY_CHAT_VOCAB, writeTinyChatModel } from './tiny-chat-model.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-serve-chat-'));
let folder: string;
let served: LoadedModel;
let reference: TransformerModel; // the same folder loaded independently, for direct log-probs (sampling: the tokenizer's ids)
let fullVocab: TransformerModel; // and once more, every embedding row scored (prompt scoring, as transformers normalises)
let app: ReturnType<typeof createServeApp>;

beforeAll(async () => {
  await selectBackend('wasm');
  folder = await writeTinyChatModel(join(dir, 'smol'), 11);
  served = await loadServedModel(folder, { backend: 'wasm' });
  reference = await loadHfModel(folder);
  reference.restrictOutputs(TINY_CHAT_VOCAB);
  fullVocab = await loadHfModel(folder);
  app = createServeApp(served, { rng: Rng.fromSeed(1), wallClockMs: () => 1_700_000_000_000 });
}, 60_000);
afterAll(() => {
  served?.dispose();
  reference?.dispose();
  fullVocab?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field, as a client would
type Json = any;
const post = async (path: string, body: unknown) => {
  const res = await app.request(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Json };
};
const chat = (body: Record<string, unknown>) => post('/v1/chat/completions', { model: 'smol', ...body });
const complete = (body: Record<string, unknown>) => post('/v1/completions', { model: 'smol', ...body });

/** log p(ids[t+1] | ids[..t]) for every t over every embedding row, from the training forward (an independent path). */
function directLogprobs(ids: ArrayLike<number>): number[] {
  const seq = Int32Array.from(ids);
  const out = fullVocab.forwardTrain(packBatch([{ ids: seq, positions: Array.from({ length: seq.length - 1 }, (_, t) => t) }]), 1);
  const lp = Array.from(out.logprobs.dataSync());
  tf.dispose([out.logprobs, out.entropy]);
  return lp;
}

/** The full next-token log-softmax (over the tokenizer's ids) after `ids`. */
function nextLogSoftmax(ids: ArrayLike<number>): Float64Array {
  const seq = Int32Array.from(ids);
  const logits = reference.forwardLogits(seq, new Uint8Array(seq.length).fill(1), 1, seq.length);
  const all = logits.dataSync() as Float32Array;
  logits.dispose();
  const v = reference.config.vocabSize;
  const row = Float64Array.from(all.subarray((seq.length - 1) * v, (seq.length - 1) * v + TINY_CHAT_VOCAB));
  const max = Math.max(...row);
  const lse = max + Math.log(row.reduce((s, x) => s + Math.exp(x - max), 0));
  return row.map((x) => x - lse);
}

describe('chat completions on a Hugging Face model folder', () => {
  it("renders the messages with the model's chat template (system message honoured, generation prompt added)", async () => {
    const files = await loadChatModelFiles(folder);
    const expectIds = (text: string) => Array.from(files.tokenizer.encode(text));
    const withSystem = [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi there' }];
    const tokenized = await post('/tokenize', { messages: withSystem });
    expect(tokenized.body.tokens).toEqual(expectIds('<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n'));
    const reply = await chat({ messages: withSystem, max_tokens: 3, temperature: 0 });
    expect(reply.status).toBe(200);
    expect(reply.body.usage.prompt_tokens).toBe(tokenized.body.tokens.length);
    // Without one, the template writes SmolLM2's own default system message; `developer` is read as system.
    const plain = await post('/tokenize', { messages: [{ role: 'user', content: 'Hi there' }] });
    expect(plain.body.tokens).toEqual(expectIds('<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n'));
    const developer = await post('/tokenize', { messages: [{ role: 'developer', content: 'Be brief.' }, { role: 'user', content: 'Hi there' }] });
    expect(developer.body.tokens).toEqual(tokenized.body.tokens);
  });

  it('greedy logprobs equal the model: each token is the first alternative, with the log-softmax of a direct forward', async () => {
    const messages = [{ role: 'user', content: 'Tell me a story' }];
    const prompt = (await post('/tokenize', { messages })).body.tokens as number[];
    const { body } = await chat({ messages, max_tokens: 6, temperature: 0, logprobs: true, top_logprobs: 4 });
    const entries = body.choices[0].logprobs.content as { token: string; logprob: number; bytes: number[]; top_logprobs: { token: string; logprob: number }[] }[];
    expect(entries.length).toBe(body.usage.completion_tokens);
    const generated = ((await post('/tokenize', { prompt: entries.map((e) => e.token).join('') })).body.tokens as number[]).length;
    expect(generated).toBeGreaterThan(0);
    const context = [...prompt];
    for (const e of entries) {
      const row = nextLogSoftmax(context);
      const best = [...row.keys()].sort((a, b) => row[b]! - row[a]! || a - b);
      expect(e.top_logprobs).toHaveLength(4);
      expect(e.top_logprobs[0]!.token).toBe(e.token);
      expect(e.logprob).toBeCloseTo(row[best[0]!]!, 4);
      e.top_logprobs.forEach((alt, m) => {
        expect(alt.logprob).toBeCloseTo(row[best[m]!]!, 4);
      });
      context.push(best[0]!);
    }
  });

  it('stops at a stop string (cut before it, finish_reason stop), also past the first generation chunk', async () => {
    const messages = [{ role: 'user', content: 'Count to ten' }];
    const full = (await chat({ messages, max_tokens: 40, temperature: 0 })).body.choices[0];
    const text = full.message.content as string;
    expect(text.length).toBeGreaterThan(8);
    for (const from of [2, Math.floor(text.length * 0.7)]) {
      const stop = text.slice(from, from + 2);
      const cut = text.indexOf(stop);
      const { body } = await chat({ messages, max_tokens: 40, temperature: 0, stop: [stop, 'never-appears'] });
      expect(body.choices[0].message.content).toBe(text.slice(0, cut));
      expect(body.choices[0].finish_reason).toBe('stop');
      expect(body.usage.completion_tokens).toBeLessThanOrEqual(40);
    }
    const sampled = { messages, max_tokens: 30, temperature: 1, seed: 5, stop: 'e' };
    expect((await chat(sampled)).body.choices).toEqual((await chat(sampled)).body.choices);
  });

  it('gives n seeded choices with their own index; the first equals the n = 1 reply', async () => {
    const messages = [{ role: 'user', content: 'Say something' }];
    const three = (await chat({ messages, n: 3, seed: 21, max_tokens: 8 })).body;
    expect(three.choices.map((c: { index: number }) => c.index)).toEqual([0, 1, 2]);
    expect((await chat({ messages, n: 3, seed: 21, max_tokens: 8 })).body.choices).toEqual(three.choices);
    expect((await chat({ messages, seed: 21, max_tokens: 8 })).body.choices[0].message).toEqual(three.choices[0].message);
    expect(new Set(three.choices.map((c: { message: { content: string } }) => c.message.content)).size).toBeGreaterThan(1);
    const counted = (await chat({ messages, n: 3, seed: 21, max_tokens: 8, logprobs: true })).body;
    expect(counted.usage.completion_tokens).toBe(counted.choices.reduce((n: number, c: { logprobs: { content: unknown[] } }) => n + c.logprobs.content.length, 0));
  });

  it("refuses a prompt over the context with OpenAI's context_length_exceeded", async () => {
    const long = [{ role: 'user', content: 'word '.repeat(400) }];
    const tooLong = await chat({ messages: long });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error).toMatchObject({ type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' });
    expect(tooLong.body.error.message).toMatch(/^This model's maximum context length is 192 tokens\. However, your messages resulted in \d+ tokens\. Please reduce the length of the messages\.$/);
    const tooMuch = await chat({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 190 });
    expect(tooMuch.body.error.message).toMatch(/However, you requested \d+ tokens \(\d+ in the messages, 190 in the completion\)/);
  });

  it('streams chunks per choice whose deltas join to the non-streamed replies', async () => {
    const request = { messages: [{ role: 'user', content: 'Stream please' }], n: 2, seed: 3, max_tokens: 10 };
    const plain = (await chat(request)).body;
    const res = await app.request('/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'smol', ...request, stream: true }) });
    const events = (await res.text()).split('\n\n').filter((e) => e.startsWith('data: ')).map((e) => e.slice(6));
    expect(events.at(-1)).toBe('[DONE]');
    const texts = ['', ''];
    for (const e of events.slice(0, -1)) for (const c of JSON.parse(e).choices) texts[c.index] += c.delta.content ?? '';
    expect(texts).toEqual(plain.choices.map((c: { message: { content: string } }) => c.message.content));
  });
});

describe('legacy completions: echo + logprobs scoring (lm-evaluation-harness)', () => {
  const prompt = 'The quick brown fox jumps over the lazy dog';

  it('scores the prompt with the model’s exact log-probs (first token null), tokens and text offsets into the echo', async () => {
    const ids = (await post('/tokenize', { prompt })).body.tokens as number[];
    const { status, body } = await complete({ prompt, echo: true, max_tokens: 0, logprobs: 2 });
    expect(status).toBe(200);
    const choice = body.choices[0];
    expect(choice.text).toBe(prompt);
    expect(choice.finish_reason).toBe('length');
    const lp = choice.logprobs;
    expect(lp.tokens).toHaveLength(ids.length);
    expect(lp.token_logprobs[0]).toBeNull();
    expect(lp.top_logprobs[0]).toBeNull();
    const direct = directLogprobs(ids);
    direct.forEach((x, i) => {
      expect(lp.token_logprobs[i + 1]).toBeCloseTo(x, 4);
    });
    // Each top_logprobs entry: the 2 best alternatives plus the prompt's own token.
    lp.top_logprobs.slice(1).forEach((top: Record<string, number>, i: number) => {
      expect(Object.keys(top).length).toBeGreaterThanOrEqual(2);
      expect(Object.keys(top).length).toBeLessThanOrEqual(3);
      expect(top[lp.tokens[i + 1]]).toBe(lp.token_logprobs[i + 1]);
    });
    // text_offset indexes into the echoed text: the text up to token i decodes the first i tokens.
    lp.text_offset.forEach((offset: number, i: number) => {
      expect(offset).toBe(lp.tokens.slice(0, i).join('').length);
      expect(choice.text.startsWith(lp.tokens[i], offset)).toBe(true);
    });
  });

  it("accepts lm-evaluation-harness's log-likelihood request (token ids, max_tokens 1) and its parse gives the direct sum and greediness", async () => {
    const context = (await post('/tokenize', { prompt: 'The quick brown' })).body.tokens as number[];
    const continuation = (await post('/tokenize', { prompt: ' fox jumps' })).body.tokens as number[];
    const ids = [...context, ...continuation];
    const { body } = await complete({ prompt: [ids], temperature: 0, max_tokens: 1, logprobs: 1, seed: 1234, echo: true });
    const choice = body.choices[0];
    expect(choice.logprobs.token_logprobs).toHaveLength(ids.length + 1); // the prompt, then one generated token
    const ctxlen = context.length;
    const scored = choice.logprobs.token_logprobs.slice(ctxlen, -1) as number[];
    const direct = directLogprobs(ids).slice(ctxlen - 1);
    expect(scored.reduce((a, b) => a + b, 0)).toBeCloseTo(direct.reduce((a, b) => a + b, 0), 3);
    // The harness's is_greedy: each continuation token's log-prob equals the best of its top_logprobs.
    const greedy = scored.every((x, i) => x === Math.max(...(Object.values(choice.logprobs.top_logprobs.slice(ctxlen, -1)[i]) as number[])));
    const directGreedy = continuation.every((id, i) => {
      const row = nextLogSoftmax(ids.slice(0, ctxlen + i));
      return row.every((x) => x <= (row[id] as number));
    });
    expect(greedy).toBe(directGreedy);
  });

  it('takes lists of prompts (text or ids), n choices prompt-major, stop, and names bad ids', async () => {
    const { body } = await complete({ prompt: ['Once upon', 'A long time'], n: 2, max_tokens: 5, seed: 4 });
    expect(body.choices.map((c: { index: number }) => c.index)).toEqual([0, 1, 2, 3]);
    // Seeds are per choice, not per prompt: batching prompts changes nothing.
    const alone = (await complete({ prompt: 'A long time', n: 2, max_tokens: 5, seed: 4 })).body;
    expect(alone.choices.map((c: { text: string }) => c.text)).toEqual([body.choices[2].text, body.choices[3].text]);
    const ids = (await post('/tokenize', { prompt: 'Once upon' })).body.tokens as number[];
    const byIds = (await complete({ prompt: ids, n: 2, max_tokens: 5, seed: 4 })).body;
    expect(byIds.choices.map((c: { text: string }) => c.text)).toEqual([body.choices[0].text, body.choices[1].text]);
    const bad = await complete({ prompt: [[5, 6, 9999]] });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ param: 'prompt[0][2]', code: 'invalid_value' });
    const noEcho = await complete({ prompt: 'x', max_tokens: 0 });
    expect(noEcho.body.error).toMatchObject({ param: 'max_tokens', code: 'invalid_value' });
    const overflow = await complete({ prompt: 'x', max_tokens: 500 });
    expect(overflow.body.error).toMatchObject({ param: 'prompt', code: 'context_length_exceeded' });
    expect(overflow.body.error.message).toMatch(/maximum context length is 192 tokens, however you requested \d+ tokens \(\d+ in your prompt; 500 for the completion\)/);
  });
});

describe('streamed legacy completions', () => {
  it('stream the echo and per-token pieces whose texts and logprobs join to the non-streamed choice', async () => {
    const request = { model: 'smol', prompt: 'Once upon a time', echo: true, max_tokens: 6, logprobs: 1, seed: 9 };
    const plain = (await complete(request)).body.choices[0];
    const res = await app.request('/v1/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...request, stream: true }) });
    const events = (await res.text()).split('\n\n').filter((e) => e.startsWith('data: ')).map((e) => e.slice(6));
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e).choices[0]);
    expect(chunks.map((c: { text: string }) => c.text).join('')).toBe(plain.text);
    expect(chunks.flatMap((c: { logprobs: { token_logprobs: unknown[] } | null }) => c.logprobs?.token_logprobs ?? [])).toEqual(plain.logprobs.token_logprobs);
    expect(chunks.at(-1).finish_reason).toBe(plain.finish_reason);
  });
});

describe("the tokenizer endpoints and a base model", () => {
  it('tokenizes, detokenizes and describes the tokenizer as vLLM does', async () => {
    const t = await post('/tokenize', { prompt: 'hello world', return_token_strs: true });
    expect(t.body).toMatchObject({ count: t.body.tokens.length, max_model_len: 192 });
    expect(t.body.token_strs.join('')).toBe('hello world');
    expect((await post('/detokenize', { tokens: t.body.tokens })).body).toEqual({ prompt: 'hello world' });
    const info = (await (await app.request('/tokenizer_info')).json()) as Record<string, unknown>;
    expect(info).toMatchObject({ eos_token: '<|im_end|>', bos_token: '<|im_start|>', tokenizer_class: 'GPT2Tokenizer', model_max_length: 192 });
    expect(info.chat_template).toMatch(/im_start/);
    expect((await post('/tokenize', { prompt: 'x', add_special_tokens: true })).body.error.param).toBe('add_special_tokens');
  });

  it('serves a base model (no chat template) for completions and refuses chat with the reason', async () => {
    const base = join(dir, 'base');
    cpSync(folder, base, { recursive: true });
    const config = JSON.parse(readFileSync(join(base, 'tokenizer_config.json'), 'utf8'));
    delete config.chat_template;
    writeFileSync(join(base, 'tokenizer_config.json'), JSON.stringify(config));
    const model = await loadServedModel(base, { backend: 'wasm', maxContext: 64 });
    try {
      const baseApp = createServeApp(model, { rng: Rng.fromSeed(0) });
      const send = async (path: string, body: unknown) => (await baseApp.request(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json() as Promise<Json>;
      const refused = await send('/v1/chat/completions', { model: 'base', messages: [{ role: 'user', content: 'hi' }] });
      expect(refused.error.message).toMatch(/no chat template.*a base model.*Use \/v1\/completions/);
      const scored = await send('/v1/completions', { model: 'base', prompt: 'hello world', echo: true, max_tokens: 0, logprobs: 0 });
      expect(scored.choices[0].logprobs.token_logprobs.slice(1).every((x: number) => x < 0)).toBe(true);
      expect(model.maxContext).toBe(64);
    } finally {
      model.dispose();
    }
  });
});
