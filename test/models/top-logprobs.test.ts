/**
 * Top-k alternatives per generated token (`ActRequest.topLogprobs`): the selection against a
 * plain sort, and the policy's alternatives against the model's own full-vocabulary log-softmax
 * (forwardLogits on context + generated tokens), for sampling at a temperature, greedy decoding
 * and constrained decoding with forced tokens.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.js';
import type { ActRequest, ActResult } from '../../src/core/policy.js';
import { tf } from '../../src/backend/tf.js';
import type { TransformerModel } from '../../src/models/transformer/model.js';
import { TransformerPolicy } from '../../src/models/transformer-policy.js';
import { topCandidates } from '../../src/models/transformer/sampling.js';
import { randomSeq, TINY, tinyModel } from './transformer-fixtures.js';

const END = 5;
let model: TransformerModel;

beforeAll(async () => {
  await tf.setBackend('cpu');
  model = tinyModel(23);
});
afterAll(() => model.dispose());

/** log_softmax(logits / T) of the next token after each prefix of `ids` (positions from..ids.length-1), [V] each. */
function fullLogSoftmax(ids: Int32Array, from: number, temperature: number): Float64Array[] {
  const logits = model.forwardLogits(ids, new Uint8Array(ids.length).fill(1), 1, ids.length);
  const data = logits.dataSync() as Float32Array;
  logits.dispose();
  const v = TINY.vocabSize;
  const rows: Float64Array[] = [];
  for (let t = from; t < ids.length; t++) {
    const row = Float64Array.from(data.subarray(t * v, (t + 1) * v), (x) => x / temperature);
    const max = Math.max(...row);
    const lse = max + Math.log(row.reduce((s, x) => s + Math.exp(x - max), 0));
    rows.push(row.map((x) => x - lse));
  }
  return rows;
}

/** The k best (id, logprob) of a row by a full sort (ties: lower id). */
function sortedTop(row: Float64Array, k: number): { ids: number[]; logprobs: number[] } {
  const order = [...row.keys()].sort((a, b) => row[b]! - row[a]! || a - b).slice(0, k);
  return { ids: order, logprobs: order.map((j) => row[j]!) };
}

function expectTopMatchesModel(request: ActRequest, result: ActResult, k: number, temperature: number): void {
  const top = result.topLogprobs!;
  expect(top.k).toBe(k);
  expect(top.ids).toHaveLength(result.tokens.length * k);
  const ids = Int32Array.from([...request.contextTokens, ...result.tokens]);
  const rows = fullLogSoftmax(ids.subarray(0, ids.length - 1), request.contextTokens.length - 1, temperature);
  rows.forEach((row, j) => {
    const expected = sortedTop(row, k);
    expect(Array.from(top.ids.subarray(j * k, (j + 1) * k))).toEqual(expected.ids);
    Array.from(top.logprobs.subarray(j * k, (j + 1) * k)).forEach((lp, m) => {
      expect(lp).toBeCloseTo(expected.logprobs[m]!, 4);
    });
    // The chosen token's log-prob comes from the same distribution.
    expect(result.logprobs[j]).toBeCloseTo(row[result.tokens[j]!]!, 4);
  });
}

describe('topCandidates', () => {
  it('equals a full sort on random rows with ties, for every k', () => {
    const rng = Rng.fromSeed(3);
    for (let trial = 0; trial < 50; trial++) {
      const n = 1 + rng.int(30);
      const candidates = Int32Array.from(rng.shuffle([...Array(60).keys()]).slice(0, n));
      const logp = Float64Array.from({ length: n }, () => -Math.round(rng.next() * 6) / 2); // coarse values: many ties
      for (const k of [1, 2, 5, 40]) {
        const got = topCandidates(logp, candidates, k);
        const order = [...candidates.keys()].sort((a, b) => logp[b]! - logp[a]! || candidates[a]! - candidates[b]!).slice(0, k);
        expect(Array.from(got.ids)).toEqual(order.map((j) => candidates[j]));
        expect(Array.from(got.logprobs)).toEqual(order.map((j) => logp[j]));
      }
    }
  });
});

describe('TransformerPolicy with topLogprobs', () => {
  const rng = Rng.fromSeed(5);
  const free = (extra: Partial<ActRequest> = {}): ActRequest => ({ contextTokens: randomSeq(rng, 4 + rng.int(6)), actionChoices: null, ...extra });

  it("returns the k most likely ids of each sampled token's distribution (temperature-scaled), and none when not asked", async () => {
    const policy = new TransformerPolicy(model, { endTokenId: END });
    const requests = [free({ topLogprobs: 3 }), free({ topLogprobs: 1, seed: 4 }), free()];
    const results = await policy.sampleActions(requests, { temperature: 0.7, topP: 1, maxNewTokens: 6 }, Rng.fromSeed(9));
    expectTopMatchesModel(requests[0]!, results[0]!, 3, 0.7);
    expectTopMatchesModel(requests[1]!, results[1]!, 1, 0.7);
    expect(results[2]!.topLogprobs).toBeUndefined();
  });

  it('greedy decoding picks the first alternative at every position', async () => {
    const policy = new TransformerPolicy(model, { endTokenId: END });
    const request = free({ topLogprobs: 4 });
    const [result] = await policy.greedyActions([request], 6);
    expectTopMatchesModel(request, result!, 4, 1);
    result!.tokens.forEach((id, j) => {
      expect(result!.topLogprobs!.ids[j * 4]).toBe(id);
    });
  });

  it('constrained decoding: alternatives come from the allowed ids, a forced token is its own only one (padded)', async () => {
    const policy = new TransformerPolicy(model, { endTokenId: END });
    // Two actions sharing a first token: the second token is a real choice, the end forced.
    const request: ActRequest = { contextTokens: randomSeq(rng, 5), actionChoices: [Int32Array.of(7, 8, END), Int32Array.of(7, 9, END)], topLogprobs: 3 };
    const [result] = await policy.greedyActions([request], 6);
    const top = result!.topLogprobs!;
    expect(Array.from(top.ids)).toEqual([7, -1, -1, ...Array.from(top.ids.subarray(3, 5)), -1, END, -1, -1]);
    expect([...top.ids.subarray(3, 5)].sort()).toEqual([8, 9]);
    expect(Array.from(top.logprobs.subarray(0, 3))).toEqual([0, Number.NEGATIVE_INFINITY, Number.NEGATIVE_INFINITY]);
    // The real choice: a distribution over {8, 9} only.
    expect(Math.exp(top.logprobs[3]!) + Math.exp(top.logprobs[4]!)).toBeCloseTo(1, 5);
  });
});
