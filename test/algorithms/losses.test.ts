import { beforeAll, describe, expect, it } from 'vitest';
import { type PolicyLossArrays, ppoClipLossReference } from '../../src/algorithms/losses-reference.js';
import { type PolicyLossOptions, type PolicyLossTerms, ppoClipLoss } from '../../src/algorithms/losses.js';
import { klTensor } from '../../src/algorithms/kl.js';
import { InvalidArgumentError } from '../../src/core/errors.js';
import { Rng } from '../../src/core/rng.js';
import { tf } from '../../src/backend/tf.js';

beforeAll(async () => {
  await tf.setBackend('cpu');
});

const TERMS = ['total', 'policy', 'klRef', 'entropy', 'clipFrac', 'approxKl'] as const;

/** Runs the tfjs loss on arrays and reads the terms back, checking nothing leaks. */
function tfLoss(input: PolicyLossArrays, options: PolicyLossOptions): PolicyLossTerms<number> {
  const before = tf.memory().numTensors;
  const tensors = {
    logprobs: tf.tensor1d(input.logprobs),
    oldLogprobs: tf.tensor1d(input.oldLogprobs),
    advantages: tf.tensor1d(input.advantages),
    lossMask: tf.tensor1d(input.lossMask),
    entropy: tf.tensor1d(input.entropy),
    refLogprobs: input.refLogprobs === null ? null : tf.tensor1d(input.refLogprobs),
  };
  const terms = ppoClipLoss(tensors, options);
  const out = Object.fromEntries(TERMS.map((k) => [k, terms[k].dataSync()[0]])) as unknown as PolicyLossTerms<number>;
  tf.dispose([...Object.values(terms), ...Object.values(tensors).filter((t) => t !== null)]);
  expect(tf.memory().numTensors).toBe(before);
  return out;
}

/**
 * Two trajectories, three turns, five action tokens (clip ε = 0.2). Every token has old logprob −1
 * and new logprob −1 + d, so the ratio is ρ = exp(d):
 *
 *   n  trajectory/turn  A    d        ρ     −A·ρ   −A·clip(ρ)   max    clipped?  entropy  ref−logp  k3
 *   0  A / turn 0       +1   0        1.0   −1.0   −1.0         −1.0   no        0.5      0         0
 *   1  A / turn 0       +1   ln 1.5   1.5   −1.5   −1.2         −1.2   yes       1.0      ln 2      2 − ln2 − 1 = 0.306853
 *   2  A / turn 1       +1   ln 1.1   1.1   −1.1   −1.1         −1.1   no        0.2      −ln 2     0.5 + ln2 − 1 = 0.193147
 *   3  B / turn 0       −1   ln 0.5   0.5   +0.5   +0.8         +0.8   yes       0.3      0         0
 *   4  B / turn 0       −1   ln 3     (forced token: loss mask 0, ignored everywhere)
 *
 * Trained tokens: 4.
 *   policy   = (−1 − 1.2 − 1.1 + 0.8) / 4 = −2.5 / 4 = −0.625
 *   clipFrac = 2 / 4 = 0.5
 *   approxKl = mean(−d) = −ln(1.5 · 1.1 · 0.5) / 4 = −ln(0.825) / 4 = 0.192372 / 4 = 0.048093
 *   entropy  = (0.5 + 1 + 0.2 + 0.3) / 4 = 0.5
 *   klRef    = (0.306853 + 0.193147) / 4 = 0.5 / 4 = 0.125
 *   total    = policy + 0.1·klRef − 0.01·entropy = −0.625 + 0.0125 − 0.005 = −0.6175
 */
function handWorked(): PolicyLossArrays {
  const d = [0, Math.log(1.5), Math.log(1.1), Math.log(0.5), Math.log(3)];
  const logprobs = Float32Array.from(d, (x) => -1 + x);
  const refDiff = [0, Math.LN2, -Math.LN2, 0, 25];
  return {
    logprobs,
    oldLogprobs: Float32Array.of(-1, -1, -1, -1, -1),
    advantages: Float32Array.of(1, 1, 1, -1, -1),
    lossMask: Float32Array.of(1, 1, 1, 1, 0),
    entropy: Float32Array.of(0.5, 1, 0.2, 0.3, 9),
    refLogprobs: Float32Array.from(refDiff, (x, i) => logprobs[i] + x),
  };
}
const handOptions: PolicyLossOptions = { clipRatio: 0.2, klCoef: 0.1, entropyCoef: 0.01 };
const handExpected: PolicyLossTerms<number> = {
  policy: -0.625,
  clipFrac: 0.5,
  dualClipFrac: 0,
  approxKl: -Math.log(0.825) / 4,
  entropy: 0.5,
  klRef: 0.125,
  total: -0.6175,
};

describe('ppoClipLoss', () => {
  it('matches the hand-worked two-trajectory multi-turn example', () => {
    const got = tfLoss(handWorked(), handOptions);
    for (const k of TERMS) expect(got[k], k).toBeCloseTo(handExpected[k], 5);
  });

  it('the reference matches the hand-worked example too', () => {
    const got = ppoClipLossReference(handWorked(), handOptions);
    for (const k of TERMS) expect(got[k], k).toBeCloseTo(handExpected[k], 5);
  });

  it('divides by tokenCount when given (micro-batch share of a larger token mean)', () => {
    // Same sums over 8 tokens instead of 4: every term halves.
    const got = tfLoss(handWorked(), { ...handOptions, tokenCount: 8 });
    for (const k of TERMS) expect(got[k], k).toBeCloseTo(handExpected[k] / 2, 5);
  });

  it('drops the KL term without a reference', () => {
    const got = tfLoss({ ...handWorked(), refLogprobs: null }, handOptions);
    expect(got.klRef).toBe(0);
    expect(got.total).toBeCloseTo(-0.625 - 0.005, 5);
  });

  it('returns zeros when every token is masked', () => {
    const input = { ...handWorked(), lossMask: new Float32Array(5) };
    const got = tfLoss(input, handOptions);
    for (const k of TERMS) expect(got[k], k).toBe(0);
  });

  it('equals the plain-JS reference on seeded random inputs (several shapes, masked rows) within 1e-5', () => {
    const rng = Rng.fromSeed(2024);
    let cases = 0;
    for (const n of [1, 5, 64, 257]) {
      for (let trial = 0; trial < 6; trial++) {
        const logprobs = Float32Array.from({ length: n }, () => -5 * rng.next());
        const segment = 1 + rng.int(8); // "rows" of targets; some rows fully masked
        const lossMask = new Float32Array(n);
        for (let i = 0; i < n; i++) {
          const rowMasked = trial === 5 || (Math.floor(i / segment) % 3 === 1 && trial % 2 === 0);
          lossMask[i] = rowMasked ? 0 : rng.next() < 0.8 ? 1 : 0;
        }
        const input: PolicyLossArrays = {
          logprobs,
          oldLogprobs: logprobs.map((x) => x + 0.4 * rng.normal()),
          advantages: Float32Array.from({ length: n }, () => rng.normal()),
          lossMask,
          entropy: Float32Array.from({ length: n }, () => 3 * rng.next()),
          refLogprobs: trial % 3 === 2 ? null : logprobs.map((x) => x + (trial === 4 ? 15 : 0.7) * rng.normal()),
        };
        const options: PolicyLossOptions = {
          clipRatio: [0.1, 0.2, 0.28][trial % 3],
          klCoef: 0.05 * trial,
          entropyCoef: 0.001 * trial,
          ...(trial === 3 ? { tokenCount: 3 * n } : {}),
        };
        const fast = tfLoss(input, options);
        const reference = ppoClipLossReference(input, options);
        for (const k of TERMS) expect(Math.abs(fast[k] - reference[k]), `${k} n=${n} trial=${trial}`).toBeLessThan(1e-5);
        cases++;
      }
    }
    expect(cases).toBe(24);
  });

  it('sends gradient only through unclipped trained tokens', () => {
    // d/dlogp of max(−A·ρ, −A·clip(ρ)) is −A·ρ where the unclipped branch wins, 0 where the clip is active.
    // Tokens 0 and 2 (A=+1, ρ=1 and 1.1) are unclipped: grad = −ρ / 4 = −0.25 and −0.275. Tokens 1, 3 clipped, 4 masked.
    const input = handWorked();
    const old = tf.tensor1d(input.oldLogprobs);
    const adv = tf.tensor1d(input.advantages);
    const mask = tf.tensor1d(input.lossMask);
    const ent = tf.tensor1d(input.entropy);
    const grad = tf.grad((lp: tf.Tensor) =>
      ppoClipLoss(
        { logprobs: lp as tf.Tensor1D, oldLogprobs: old, advantages: adv, lossMask: mask, entropy: ent, refLogprobs: null },
        { clipRatio: 0.2, klCoef: 0, entropyCoef: 0 },
      ).policy,
    )(tf.tensor1d(input.logprobs));
    const g = Array.from(grad.dataSync());
    expect(g[0]).toBeCloseTo(-0.25, 6);
    expect(g[1]).toBeCloseTo(0, 6);
    expect(g[2]).toBeCloseTo(-0.275, 6);
    expect(g[3]).toBeCloseTo(0, 6);
    expect(g[4]).toBeCloseTo(0, 6);
    tf.dispose([old, adv, mask, ent, grad]);
  });

  it('rejects bad coefficients and mismatched shapes, naming the field', () => {
    const input = handWorked();
    expect(() => tfLoss(input, { ...handOptions, clipRatio: 0 })).toThrow(InvalidArgumentError);
    expect(() => ppoClipLossReference(input, { ...handOptions, klCoef: -1 })).toThrow(/'klCoef'/);
    expect(() => ppoClipLossReference({ ...input, advantages: Float32Array.of(1) }, handOptions)).toThrow(/'advantages'/);
    const lp = tf.tensor1d([0, 0]);
    const short = tf.tensor1d([0]);
    expect(() =>
      ppoClipLoss({ logprobs: lp, oldLogprobs: lp, advantages: lp, lossMask: short, entropy: lp, refLogprobs: null }, handOptions),
    ).toThrow(/'lossMask'/);
    tf.dispose([lp, short]);
  });
});

describe("klTensor('k3')", () => {
  it('is exp(ref − logp) − (ref − logp) − 1, clamped to [−10, 10]', () => {
    // diff −0.5: e^−0.5 + 0.5 − 1 = 0.106531; diff 1: e − 2 = 0.718282; diff 20: e^20 − 21 → clamped to 10.
    const logp = tf.tensor1d([-1, -2, -30]);
    const ref = tf.tensor1d([-1.5, -1, -10]);
    const kl = klTensor('k3', logp, ref);
    const v = Array.from(kl.dataSync());
    expect(v[0]).toBeCloseTo(Math.exp(-0.5) - 0.5, 5);
    expect(v[1]).toBeCloseTo(Math.E - 2, 5);
    expect(v[2]).toBe(10);
    tf.dispose([logp, ref, kl]);
  });
});
