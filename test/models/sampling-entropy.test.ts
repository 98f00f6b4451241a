/**
 * True policy entropy at sampling time: each generated token carries the entropy of the
 * distribution it was drawn from (the allowed set under constrained decoding, the full vocabulary
 * otherwise, temperature-scaled), which the training forward pass reproduces on the same tokens;
 * forced tokens carry 0.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActRequest, ActResult } from '../../src/core/policy.js';
import { Rng } from '../../src/core/rng.js';
import { tf } from '../../src/backend/tf.js';
import { entropyOf, greedyToken, maskedLogProbs, sampleToken } from '../../src/models/transformer/sampling.js';
import type { TransformerModel } from '../../src/models/transformer/model.js';
import { TransformerPolicy } from '../../src/models/transformer-policy.js';
import { packBatch, randomSeq, type SeqTargets, tinyModel } from './transformer-fixtures.js';

const END = 5;
let model: TransformerModel;
beforeAll(async () => {
  await tf.setBackend('cpu');
  model = tinyModel(23);
});
afterAll(() => model.dispose());

describe('entropy of the sampling distribution', () => {
  it('is -Σ p log p over the candidates at the temperature in force (hand-worked)', () => {
    const logits = Float32Array.of(1, 2, 3);
    // Candidates {0, 2} at T = 1: p = softmax(1, 3) = (0.11920, 0.88080); H = 0.36352.
    const h = -(0.1192029 * Math.log(0.1192029) + 0.8807971 * Math.log(0.8807971));
    expect(sampleToken(logits, Int32Array.of(0, 2), 1, 1, 0.5).entropy).toBeCloseTo(h, 5);
    expect(greedyToken(logits, Int32Array.of(0, 2)).entropy).toBeCloseTo(h, 5);
    // T = 2 flattens: logits / 2 = (0.5, 1.5) → p = (0.26894, 0.73106).
    const h2 = -(0.2689414 * Math.log(0.2689414) + 0.7310586 * Math.log(0.7310586));
    expect(sampleToken(logits, Int32Array.of(0, 2), 2, 1, 0.1).entropy).toBeCloseTo(h2, 5);
    // Uniform over 4 ids: ln 4; a single candidate: 0.
    expect(entropyOf(maskedLogProbs(new Float32Array(4), Int32Array.of(0, 1, 2, 3), 1))).toBeCloseTo(Math.log(4), 10);
    expect(sampleToken(logits, Int32Array.of(1), 1, 1, 0.3).entropy).toBe(0);
    // Top-p truncates the draw, not the reported distribution (the one the log-prob is under).
    expect(sampleToken(logits, Int32Array.of(0, 1, 2), 1, 0.5, 0.3).entropy).toBeCloseTo(entropyOf(maskedLogProbs(logits, Int32Array.of(0, 1, 2), 1)), 10);
  });

  it('matches the entropy forwardTrain computes at the same tokens and allowed sets, 0 on forced tokens', async () => {
    const policy = new TransformerPolicy(model, { endTokenId: END, minBucketRows: 1 });
    const rng = Rng.fromSeed(7);
    const requests: ActRequest[] = Array.from({ length: 8 }, (_, i) => ({
      contextTokens: randomSeq(rng, 4 + rng.int(10)),
      // Every third request decodes freely (full vocabulary); the others choose among actions sharing a first token.
      actionChoices: i % 3 === 0 ? null : [Int32Array.of(7, 8, END), Int32Array.of(7, 9, END), Int32Array.of(10, END), Int32Array.of(11, 12, 13, END)],
    }));
    const temperature = 1.3;
    const results = await policy.sampleActions(requests, { temperature, topP: 1, maxNewTokens: 6 }, Rng.fromSeed(3));
    const seqs: SeqTargets[] = requests.map((r, i) => {
      const res = results[i] as ActResult;
      const c = res.constraint;
      return {
        ids: Int32Array.from([...r.contextTokens, ...res.tokens]),
        positions: Array.from(res.tokens, (_, j) => r.contextTokens.length - 1 + j),
        allowed: Array.from(res.tokens, (_, j) => (c === null ? [] : Array.from(c.allowedIds.subarray(c.allowedOffsets[j], c.allowedOffsets[j + 1])))),
      };
    });
    const out = model.forwardTrain(packBatch(seqs), temperature);
    const expected = out.entropy.dataSync().slice() as Float32Array;
    tf.dispose([out.logprobs, out.entropy]);
    let k = 0;
    let forced = 0;
    for (const res of results) {
      expect(res.entropies).toBeInstanceOf(Float32Array);
      expect(res.entropies?.length).toBe(res.tokens.length);
      res.tokens.forEach((_, j) => {
        const got = res.entropies?.[j] as number;
        if (res.lossMask[j] === 0) {
          forced++;
          expect(got).toBe(0); // a single allowed id: no uncertainty
        } else {
          expect(got).toBeGreaterThan(0);
          expect(got).toBeCloseTo(expected[k] as number, 4);
        }
        k++;
      });
    }
    expect(forced).toBeGreaterThan(0);
  });
});
