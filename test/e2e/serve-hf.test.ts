/**
 * `turnwise serve` on a Hugging Face model folder, as a user runs it: the real command in its own
 * process, the official `openai` client. Chat with `stop`, `n` and `logprobs`; the legacy
 * completions' echo + logprobs scoring (what lm-evaluation-harness sends) equals the model's own
 * log-probs computed directly in this process from the same folder; SIGTERM exits 143.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selectBackend } from '../../src/backend/select.js';
import { tf } from '../../src/backend/tf.js';
import { HfTokenizer } from '../../src/models/chat/index.js';
import { loadHfModel } from '../../src/models/hf/hf-model.js';
import type { TransformerModel } from '../../src/models/transformer/model.js';
import { packBatch } from '../models/transformer-fixtures.js';
import { writeTinyChatModel } from '../serve/tiny-chat-model.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-serve-hf-'));
let child: ChildProcess;
let exit: Promise<number | null>;
let baseURL: string;
let client: OpenAI;
let model: TransformerModel;
let tokenizer: HfTokenizer;

beforeAll(async () => {
  await selectBackend('wasm');
  const folder = await writeTinyChatModel(join(dir, 'SmolTiny-Instruct'), 29);
  model = await loadHfModel(folder); // every embedding row scored, as transformers and vLLM normalise
  tokenizer = HfTokenizer.fromJSON(JSON.parse(readFileSync(join(folder, 'tokenizer.json'), 'utf8')));
  child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve', folder, '--port', '0', '--backend', 'wasm'], { stdio: ['ignore', 'pipe', 'pipe'] });
  exit = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  baseURL = await new Promise<string>((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /model 'SmolTiny-Instruct' at (http:\/\/\S+\/v1) /.exec(out);
      if (match) resolve(match[1] as string);
    });
    void exit.then((code) => reject(new Error(`turnwise serve exited ${code}: ${out}${err}`)));
  });
  client = new OpenAI({ baseURL, apiKey: 'unused', maxRetries: 0 });
}, 120_000);

afterAll(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  model?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

/** log p(ids[t+1] | ids[..t]) from the training forward of the same folder. */
function directLogprobs(ids: Int32Array): number[] {
  const out = model.forwardTrain(packBatch([{ ids, positions: Array.from({ length: ids.length - 1 }, (_, t) => t) }]), 1);
  const lp = Array.from(out.logprobs.dataSync());
  tf.dispose([out.logprobs, out.entropy]);
  return lp;
}

describe('turnwise serve <Hugging Face folder> with the openai client', () => {
  const messages = [
    { role: 'system' as const, content: 'You are terse.' },
    { role: 'user' as const, content: 'Write a line.' },
  ];

  it('chat: n seeded choices, logprobs with top alternatives, and stop strings', async () => {
    const three = await client.chat.completions.create({ model: 'SmolTiny-Instruct', messages, n: 3, seed: 8, max_tokens: 12, logprobs: true, top_logprobs: 3 });
    expect(three.choices.map((c) => c.index)).toEqual([0, 1, 2]);
    for (const choice of three.choices) {
      const content = choice.logprobs?.content ?? [];
      expect(content.length).toBeGreaterThan(0);
      for (const entry of content) {
        expect(entry.logprob).toBeLessThanOrEqual(0);
        expect(entry.top_logprobs).toHaveLength(3);
        expect(entry.bytes?.length).toBeGreaterThan(0);
      }
    }
    expect(three.usage?.completion_tokens).toBe(three.choices.reduce((n, c) => n + (c.logprobs?.content?.length ?? 0), 0));
    const again = await client.chat.completions.create({ model: 'SmolTiny-Instruct', messages, n: 3, seed: 8, max_tokens: 12, logprobs: true, top_logprobs: 3 });
    expect(again.choices).toEqual(three.choices);

    const greedy = await client.chat.completions.create({ model: 'SmolTiny-Instruct', messages, temperature: 0, max_tokens: 24 });
    const text = greedy.choices[0]?.message.content ?? '';
    expect(text.length).toBeGreaterThan(4);
    const stop = text.slice(3, 5);
    const stopped = await client.chat.completions.create({ model: 'SmolTiny-Instruct', messages, temperature: 0, max_tokens: 24, stop: [stop] });
    expect(stopped.choices[0]?.message.content).toBe(text.slice(0, text.indexOf(stop)));
    expect(stopped.choices[0]?.finish_reason).toBe('stop');
  });

  it("completions: echo + logprobs scoring equals the model's own log-probs, as lm-evaluation-harness reads them", async () => {
    const prompt = 'The cat sat on the mat because it was warm';
    const ids = tokenizer.encode(prompt);
    const direct = directLogprobs(ids);
    const scored = await client.completions.create({ model: 'SmolTiny-Instruct', prompt, echo: true, max_tokens: 0, logprobs: 1 });
    const lp = scored.choices[0]?.logprobs;
    expect(scored.choices[0]?.text).toBe(prompt);
    expect(lp?.token_logprobs?.[0]).toBeNull();
    expect(lp?.token_logprobs?.slice(1)).toHaveLength(direct.length);
    direct.forEach((x, i) => {
      expect(lp?.token_logprobs?.[i + 1]).toBeCloseTo(x, 4);
    });
    expect(lp?.text_offset?.every((offset, i) => prompt.startsWith(lp.tokens?.[i] ?? '', offset))).toBe(true);

    // The harness's log-likelihood request: token ids, max_tokens 1, temperature 0; it sums token_logprobs[ctxlen:-1].
    const ctxlen = tokenizer.encode('The cat sat on').length;
    const harness = await client.completions.create({ model: 'SmolTiny-Instruct', prompt: [Array.from(ids)], echo: true, max_tokens: 1, logprobs: 1, temperature: 0, seed: 1234 });
    const tokenLogprobs = harness.choices[0]?.logprobs?.token_logprobs ?? [];
    expect(tokenLogprobs).toHaveLength(ids.length + 1);
    const sum = (tokenLogprobs.slice(ctxlen, -1) as number[]).reduce((a, b) => a + b, 0);
    expect(sum).toBeCloseTo(direct.slice(ctxlen - 1).reduce((a, b) => a + b, 0), 3);
  });

  it("answers vLLM's tokenizer endpoints at the root, and exits 143 on SIGTERM", async () => {
    const root = baseURL.slice(0, -'/v1'.length);
    const info = (await (await fetch(`${root}/tokenizer_info`)).json()) as Record<string, unknown>;
    expect(info.eos_token).toBe('<|im_end|>');
    const res = await fetch(`${root}/tokenize`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'hello', add_special_tokens: false }) });
    expect(((await res.json()) as { tokens: number[] }).tokens).toEqual(Array.from(tokenizer.encode('hello')));
    await expect(client.chat.completions.create({ model: 'other', messages })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    child.kill('SIGTERM');
    expect(await exit).toBe(143);
  });
});
