/**
 * Prompt log-probs as `turnwise serve` scores them (what lm-evaluation-harness sums) against
 * PyTorch's log-softmax over the whole vocabulary (test/models/hf/torch_reference.py --logprobs,
 * Debian's python3-torch), issue #32: on a SmolLM2-135M-shaped folder (30 layers, the full 49,152
 * ids, BF16) and on a tiny folder whose embedding is padded past its tokenizer's ids (576 rows,
 * 539 ids), where normalising over the tokenizer's ids alone gave other numbers than transformers.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selectBackend } from '../../src/backend/select.js';
import { loadServedModel } from '../../src/serve/load-model.js';
import { writePretrainedShape } from '../../scripts/make-pretrained-shape.js';
import { TINY_CHAT_VOCAB, writeTinyChatModel } from '../serve/tiny-chat-model.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-logprobs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeAll(async () => {
  await selectBackend('wasm');
});

/** PyTorch's full-vocabulary prompt log-probs of `ids` on `folder`. */
function torchLogprobs(folder: string, ids: readonly number[]): { vocab: number; logprobs: number[] } {
  const path = join(dir, `ids-${ids.length}.json`);
  writeFileSync(path, JSON.stringify(ids));
  const out = execFileSync('/usr/bin/python3', [join(import.meta.dirname, '..', 'models', 'hf', 'torch_reference.py'), '--logprobs', folder, path], { encoding: 'utf8', maxBuffer: 1 << 26 });
  return JSON.parse(out);
}

async function servedLogprobs(folder: string, text: string): Promise<{ ids: number[]; logprobs: number[]; maxContext: number; notes: readonly string[] }> {
  const served = await loadServedModel(folder, { backend: 'wasm' });
  try {
    const ids = served.tokens.encode(text);
    const { logprobs } = await served.scorer.score(ids, 0);
    return { ids: Array.from(ids), logprobs: Array.from(logprobs), maxContext: served.maxContext, notes: served.notes };
  } finally {
    served.dispose();
  }
}

const TEXT = '<|im_start|>user\nGo to the red ball. In front of you in this room, you can see several objects: There is a red ball 1 right in front of you 2 steps away.<|im_end|>\n<|im_start|>assistant\nThought: the ball is ahead.\nAction: move forward';

describe('prompt log-probs against PyTorch over the full vocabulary', () => {
  it('equal on a SmolLM2-135M-shaped folder (30 layers, 49,152 ids, BF16), served at a default context that fits', async () => {
    const folder = join(dir, 'smollm2-shape');
    await writePretrainedShape({ folder });
    const ours = await servedLogprobs(folder, TEXT);
    // The model's own 8192 tokens fit the wasm heap (the native attention keeps no T x T map): serve starts there, no note.
    expect(ours.maxContext).toBe(8192);
    expect(ours.notes.join('\n')).not.toMatch(/^context:/m);
    expect(ours.ids.length).toBeGreaterThan(30);
    const ref = torchLogprobs(folder, ours.ids);
    expect(ref.vocab).toBe(49152);
    expect(ours.logprobs).toHaveLength(ref.logprobs.length);
    ours.logprobs.forEach((x, i) => {
      expect(x).toBeCloseTo(ref.logprobs[i] as number, 3);
    });
  }, 600_000);

  it('equal where the embedding is padded past the tokenizer (576 rows, 539 ids), not renormalised over the ids', async () => {
    const folder = await writeTinyChatModel(join(dir, 'padded'), 41);
    const ours = await servedLogprobs(folder, TEXT);
    const ref = torchLogprobs(folder, ours.ids);
    expect(ref.vocab).toBeGreaterThan(TINY_CHAT_VOCAB);
    ours.logprobs.forEach((x, i) => {
      expect(x).toBeCloseTo(ref.logprobs[i] as number, 4);
    });
  }, 120_000);
});
