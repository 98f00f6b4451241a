import { beforeAll, describe, expect, it } from 'vitest';
import { aggregationWeights } from '../../src/algorithms/aggregation.js';
import { KlController, klPenalizedRewards, klTensor, klValue } from '../../src/algorithms/kl.js';
import { type PolicyLossOptions, ppoClipLoss, valueLoss } from '../../src/algorithms/losses.js';
import { type PolicyLossArrays, ppoClipLossReference, valueLossReference } from '../../src/algorithms/losses-reference.js';
import { explainedVariance } from '../../src/algorithms/stats.js';
import { Rng } from '../../src/core/rng.js';
import { tf } from '../../src/backend/tf.js';

beforeAll(async () => {
  await tf.setBackend('cpu');
});

const t1 = (a: Float32Array | null): tf.Tensor1D | null => (a === null ? null : tf.tensor1d(a));

function tfLoss(input: PolicyLossArrays, options: PolicyLossOptions): Record<string, number> {
  return tf.tidy(() => {
    const terms = ppoClipLoss(
      {
        logprobs: tf.tensor1d(input.logprobs),
        oldLogprobs: tf.tensor1d(input.oldLogprobs),
        advantages: tf.tensor1d(input.advantages),
        lossMask: tf.tensor1d(input.lossMask),
        entropy: tf.tensor1d(input.entropy),
        refLogprobs: t1(input.refLogprobs),
        ...(input.weights ? { weights: tf.tensor1d(input.weights) } : {}),
      },
      options,
    );
    return Object.fromEntries(Object.entries(terms).map(([k, v]) => [k, v.dataSync()[0]]));
  });
}

describe('dual-clip PPO', () => {
  // ρ = 5, 2, 5 with A = −1, −1, +1; ε = 0.2, c = 3. Token 0: max(5, 1.2) = 5, bounded to 3 (dual clip);
  // token 1: max(2, 1.2) = 2 (< 3, unbounded); token 2: max(−5, −1.2) = −1.2 (clipped). Token-mean = 3.8 / 3.
  const input: PolicyLossArrays = {
    logprobs: Float32Array.of(Math.log(5), Math.log(2), Math.log(5)),
    oldLogprobs: new Float32Array(3),
    advantages: Float32Array.of(-1, -1, 1),
    lossMask: Float32Array.of(1, 1, 1),
    entropy: new Float32Array(3),
    refLogprobs: null,
  };
  const options = { clipRatio: 0.2, klCoef: 0, entropyCoef: 0, dualClip: 3 };

  it('bounds the loss of negative-advantage tokens at −A·c (hand-worked)', () => {
    for (const got of [tfLoss(input, options), ppoClipLossReference(input, options)]) {
      expect(got.policy).toBeCloseTo(3.8 / 3, 5);
      expect(got.dualClipFrac).toBeCloseTo(1 / 3, 6);
      expect(got.clipFrac).toBeCloseTo(1 / 3, 6);
    }
    expect(tfLoss(input, { ...options, dualClip: null }).policy).toBeCloseTo(5.8 / 3, 5);
  });

  it('rejects a dual-clip constant ≤ 1', () => {
    expect(() => ppoClipLossReference(input, { ...options, dualClip: 1 })).toThrow(/'dualClip'/);
  });
});

describe('loss aggregation', () => {
  it('weights tokens as token-mean, seq-mean-token-sum and seq-mean-token-mean (hand-worked)', () => {
    const mask = Float32Array.of(1, 1, 1, 0, 1);
    const seq = Int32Array.of(0, 0, 1, 1, 2);
    expect(Array.from(aggregationWeights(mask, seq, 'token-mean'))).toEqual([0.25, 0.25, 0.25, 0, 0.25]);
    const third = Math.fround(1 / 3);
    expect(Array.from(aggregationWeights(mask, seq, 'seq-mean-token-sum'))).toEqual([third, third, third, 0, third]);
    expect(Array.from(aggregationWeights(mask, seq, 'seq-mean-token-mean'))).toEqual([Math.fround(1 / 6), Math.fround(1 / 6), third, 0, third]);
    expect(() => aggregationWeights(mask, seq, 'sum' as never)).toThrow(/unknown loss aggregation 'sum'/);
  });

  it('a seq-mean-token-mean policy loss is the mean over sequences of each sequence’s token mean', () => {
    // Ratio 1 everywhere, so the per-token loss is −A: sequence 0 tokens (−1, −3), sequence 1 token (−5).
    const input: PolicyLossArrays = {
      logprobs: new Float32Array(3),
      oldLogprobs: new Float32Array(3),
      advantages: Float32Array.of(1, 3, 5),
      lossMask: Float32Array.of(1, 1, 1),
      entropy: new Float32Array(3),
      refLogprobs: null,
      weights: aggregationWeights(Float32Array.of(1, 1, 1), Int32Array.of(0, 0, 1), 'seq-mean-token-mean'),
    };
    expect(tfLoss(input, { clipRatio: 0.2, klCoef: 0, entropyCoef: 0 }).policy).toBeCloseTo((-2 + -5) / 2, 5);
  });
});

describe('KL estimators', () => {
  it('k1 = d, k2 = d²/2, k3 = e^−d + d − 1 with d = logp − ref (hand-worked)', () => {
    expect(klValue('k1', -1, -1.5)).toBeCloseTo(0.5, 10);
    expect(klValue('k2', -1, -1.5)).toBeCloseTo(0.125, 10);
    expect(klValue('k3', -1, -1.5)).toBeCloseTo(Math.exp(-0.5) - 0.5, 10);
    const v = tf.tidy(() => Array.from(klTensor('k2', tf.tensor1d([-1, -3]), tf.tensor1d([-2, -1])).dataSync()));
    expect(v[0]).toBeCloseTo(0.5, 6);
    expect(v[1]).toBeCloseTo(2, 6);
  });

  it('in the reward: subtracts β·kl on agent tokens only, leaving masked tokens at 0', () => {
    const out = klPenalizedRewards({
      rewards: Float32Array.of(0, 0, 1),
      logprobs: Float32Array.of(-1, -1, -1),
      refLogprobs: Float32Array.of(-2, -9, -1.5),
      mask: Float32Array.of(1, 0, 1),
      coef: 0.1,
      estimator: 'k1',
    });
    expect(out.rewards[0]).toBeCloseTo(-0.1, 6);
    expect(out.rewards[1]).toBe(0);
    expect(out.rewards[2]).toBeCloseTo(1 - 0.05, 6);
    expect(out.meanKl).toBeCloseTo(0.75, 6);
  });

  it('adaptive coefficient moves towards the target, by at most 20% × n/horizon per step; fixed stays', () => {
    const adaptive = new KlController({ coef: 0.1, target: 0.01, horizon: 100 });
    adaptive.update(0.1, 10); // far above target: error clipped to +0.2
    expect(adaptive.coef).toBeCloseTo(0.1 * 1.02, 10);
    adaptive.update(0.005, 10); // half the target: error −0.5 → −0.2
    expect(adaptive.coef).toBeCloseTo(0.1 * 1.02 * 0.98, 10);
    const fixed = new KlController({ coef: 0.1, target: null, horizon: 100 });
    fixed.update(5, 10);
    expect(fixed.coef).toBe(0.1);
    expect(() => new KlController({ coef: 0.1, target: 0, horizon: 1 })).toThrow(/'target'/);
  });
});

describe('extended policy loss equals its reference on seeded random inputs', () => {
  it('with dual clip, aggregation weights and every KL estimator, within 1e-5', () => {
    const rng = Rng.fromSeed(77);
    for (let trial = 0; trial < 18; trial++) {
      const n = 1 + rng.int(80);
      const logprobs = Float32Array.from({ length: n }, () => -4 * rng.next());
      const lossMask = Float32Array.from({ length: n }, () => (rng.next() < 0.8 ? 1 : 0));
      const seq = Int32Array.from({ length: n }, (_, i) => Math.floor(i / (1 + rng.int(6))));
      const mode = (['token-mean', 'seq-mean-token-sum', 'seq-mean-token-mean'] as const)[trial % 3];
      const input: PolicyLossArrays = {
        logprobs,
        oldLogprobs: logprobs.map((x) => x + 0.6 * rng.normal()),
        advantages: Float32Array.from({ length: n }, () => 2 * rng.normal()),
        lossMask,
        entropy: Float32Array.from({ length: n }, () => 2 * rng.next()),
        refLogprobs: logprobs.map((x) => x + 0.5 * rng.normal()),
        weights: aggregationWeights(lossMask, seq, mode),
      };
      const options: PolicyLossOptions = {
        clipRatio: 0.2,
        klCoef: 0.1,
        entropyCoef: 0.01,
        dualClip: trial % 2 === 0 ? 3 : null,
        klEstimator: (['k1', 'k2', 'k3'] as const)[Math.floor(trial / 6)],
      };
      const fast = tfLoss(input, options);
      const reference = ppoClipLossReference(input, options) as unknown as Record<string, number>;
      for (const k of Object.keys(reference)) expect(Math.abs(fast[k] - reference[k]), `${k} trial ${trial}`).toBeLessThan(1e-5);
    }
  });
});

describe('value loss', () => {
  const hand = {
    values: Float32Array.of(2, 0.2, -1),
    oldValues: new Float32Array(3),
    returns: Float32Array.of(0, 1, -2),
    weights: Float32Array.of(1 / 3, 1 / 3, 1 / 3),
    tokenWeights: Float32Array.of(1 / 3, 1 / 3, 1 / 3),
  };
  const tfValue = (input: typeof hand, valueClip: number | null): { loss: number; clipFrac: number } =>
    tf.tidy(() => {
      const t = valueLoss(
        { values: tf.tensor1d(input.values), oldValues: tf.tensor1d(input.oldValues), returns: tf.tensor1d(input.returns), weights: tf.tensor1d(input.weights), tokenWeights: tf.tensor1d(input.tokenWeights) },
        { valueClip },
      );
      return { loss: t.loss.dataSync()[0], clipFrac: t.clipFrac.dataSync()[0] };
    });

  it('is 0.5·mean(max((V − R)², (V_clip − R)²)) with V_clip within ±0.5 of the old value (hand-worked)', () => {
    // Token 0: max(4, 0.25) = 4; token 1: 0.64 both; token 2: max(1, (−0.5 + 2)² = 2.25) = 2.25 (clipped wins).
    for (const got of [tfValue(hand, 0.5), valueLossReference(hand, { valueClip: 0.5 })]) {
      expect(got.loss).toBeCloseTo((0.5 * (4 + 0.64 + 2.25)) / 3, 5);
      expect(got.clipFrac).toBeCloseTo(1 / 3, 6);
    }
    expect(tfValue(hand, null).loss).toBeCloseTo((0.5 * (4 + 0.64 + 1)) / 3, 5);
  });

  it('equals its reference on seeded random inputs', () => {
    const rng = Rng.fromSeed(5);
    for (let trial = 0; trial < 10; trial++) {
      const n = 1 + rng.int(50);
      const input = {
        values: Float32Array.from({ length: n }, () => rng.normal()),
        oldValues: Float32Array.from({ length: n }, () => rng.normal()),
        returns: Float32Array.from({ length: n }, () => rng.normal()),
        weights: Float32Array.from({ length: n }, () => rng.next() / n),
        tokenWeights: Float32Array.from({ length: n }, () => 1 / n),
      };
      const clip = trial % 2 === 0 ? 0.2 : null;
      const fast = tfValue(input, clip);
      const slow = valueLossReference(input, { valueClip: clip });
      expect(Math.abs(fast.loss - slow.loss)).toBeLessThan(1e-5);
      expect(Math.abs(fast.clipFrac - slow.clipFrac)).toBeLessThan(1e-5);
    }
  });

  it('explained variance: 1 − Var(R − V)/Var(R), NaN without variance', () => {
    expect(explainedVariance(Float32Array.of(0, 1, 9), Float32Array.of(0, 0.5, 0), Float32Array.of(1, 1, 0))).toBeCloseTo(0.75, 6);
    expect(explainedVariance(Float32Array.of(1, 1), Float32Array.of(0, 0), Float32Array.of(1, 1))).toBeNaN();
  });
});
