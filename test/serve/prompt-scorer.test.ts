/**
 * The prompt scorer (src/serve/prompt-scorer.ts) runs the LM head a chunk of positions at a time so
 * that a prompt's `[T, vocab]` logits never exist whole; here it is held to the one-pass path it
 * replaced (`forwardLogits` over every position, then one log-softmax) on a tiny model whose
 * vocabulary is padded past its tokenizer's ids, in chunks that do not divide the prompt.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.js';
import { selectBackend } from '../../src/backend/select.js';
import { tf } from '../../src/backend/tf.js';
import { TransformerModel } from '../../src/models/transformer/model.js';
import { modelScorer } from '../../src/serve/prompt-scorer.js';
import { TINY_CHAT_SHAPE } from './tiny-chat-model.js';

const NAMED = 539; // the tokenizer's ids; rows past them are padding

beforeAll(async () => {
  await selectBackend('wasm');
});

/** The one-pass path: every position's logits at once, one log-softmax over every row, top-k among the named ids. */
function wholeScores(model: TransformerModel, ids: Int32Array, topK: number): { logprobs: Float32Array; topIds: Int32Array; topLogprobs: Float32Array } {
  const t = ids.length - 1;
  const v = model.config.vocabSize;
  return tf.tidy(() => {
    const logp = tf.logSoftmax(tf.reshape(model.forwardLogits(ids.subarray(0, t), new Uint8Array(t).fill(1), 1, t), [t, v]) as tf.Tensor2D);
    const all = logp.arraySync() as number[][];
    const best = tf.topk(tf.slice(logp, [0, 0], [t, NAMED]), topK);
    return {
      logprobs: Float32Array.from(all.map((row, i) => row[ids[i + 1] as number] as number)),
      topIds: best.indices.dataSync() as Int32Array,
      topLogprobs: best.values.dataSync() as Float32Array,
    };
  });
}

describe('modelScorer in chunks of positions', () => {
  it.each([1, 3, 7, 64])('gives the one-pass log-probs and top-k in chunks of %i', async (chunkRows) => {
    const model = new TransformerModel(TINY_CHAT_SHAPE, Rng.fromSeed(3));
    model.restrictOutputs(NAMED);
    const rng = Rng.fromSeed(4);
    const ids = Int32Array.from({ length: 23 }, () => rng.int(NAMED));
    const whole = wholeScores(model, ids, 5);
    const chunked = await modelScorer(model, { chunkRows }).score(ids, 5);
    const before = tf.memory().numTensors;
    await modelScorer(model, { chunkRows }).score(ids, 0);
    expect(tf.memory().numTensors).toBe(before); // every chunk's tensors freed
    model.dispose();
    expect(chunked.logprobs).toHaveLength(22);
    for (let i = 0; i < 22; i++) expect(chunked.logprobs[i]).toBeCloseTo(whole.logprobs[i] as number, 5);
    expect(chunked.top?.k).toBe(5);
    expect(Array.from(chunked.top?.ids ?? [])).toEqual(Array.from(whole.topIds));
    const topLogprobs = chunked.top?.logprobs ?? new Float32Array(0);
    expect(topLogprobs).toHaveLength(whole.topLogprobs.length);
    for (let i = 0; i < topLogprobs.length; i++) expect(topLogprobs[i]).toBeCloseTo(whole.topLogprobs[i] as number, 5);
  });

  it('refuses a chunk size that is not a positive integer, naming it', () => {
    const model = new TransformerModel(TINY_CHAT_SHAPE, Rng.fromSeed(3));
    expect(() => model.forwardLogitChunks(Int32Array.from([1, 2, 3]), new Uint8Array(3).fill(1), 1, 3, 0, (z) => z)).toThrow(/chunkRows/);
    model.dispose();
  });
});
