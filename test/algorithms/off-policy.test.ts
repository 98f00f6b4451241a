import { beforeAll, describe, expect, it } from 'vitest';
import { type PolicyLossArrays, ppoClipLossReference } from '../../src/algorithms/losses-reference.js';
import type { PolicyLossOptions } from '../../src/algorithms/losses.js';
import { type OffPolicyCorrection, type OffPolicyTerms, offPolicyLoss } from '../../src/algorithms/off-policy.js';
import { offPolicyLossReference, truncatedImportanceWeights } from '../../src/algorithms/off-policy-reference.js';
import { InvalidArgumentError } from '../../src/core/errors.js';
import { Rng } from '../../src/core/rng.js';
import { tf } from '../../src/backend/tf.js';

beforeAll(async () => {
  await tf.setBackend('cpu');
});

type Arrays = PolicyLossArrays & { readonly proxLogprobs: Float32Array | null };
const TERMS = ['total', 'policy', 'klRef', 'entropy', 'clipFrac', 'dualClipFrac', 'approxKl', 'isWeight', 'truncFrac'] as const;
const OPTIONS: PolicyLossOptions = { clipRatio: 0.2, klCoef: 0, entropyCoef: 0 };

/** Runs the tfjs loss, reads the terms and d(total)/d(logprobs), and checks nothing leaks. */
function tfLoss(input: Arrays, options: PolicyLossOptions, correction: OffPolicyCorrection): { terms: OffPolicyTerms<number>; grad: number[] } {
  const before = tf.memory().numTensors;
  const rest = {
    oldLogprobs: tf.tensor1d(input.oldLogprobs),
    proxLogprobs: input.proxLogprobs === null ? null : tf.tensor1d(input.proxLogprobs),
    advantages: tf.tensor1d(input.advantages),
    lossMask: tf.tensor1d(input.lossMask),
    entropy: tf.tensor1d(input.entropy),
    refLogprobs: input.refLogprobs === null ? null : tf.tensor1d(input.refLogprobs),
  };
  const logprobs = tf.tensor1d(input.logprobs);
  let terms: OffPolicyTerms<number> | undefined;
  const grad = tf.grad((lp: tf.Tensor) => {
    const t = offPolicyLoss({ ...rest, logprobs: lp as tf.Tensor1D }, options, correction);
    terms = Object.fromEntries(TERMS.map((k) => [k, t[k].dataSync()[0]])) as unknown as OffPolicyTerms<number>;
    return t.total;
  })(logprobs);
  const out = { terms: terms as OffPolicyTerms<number>, grad: Array.from(grad.dataSync()) };
  tf.dispose([grad, logprobs, ...Object.values(rest).filter((t) => t !== null)]);
  expect(tf.memory().numTensors).toBe(before);
  return out;
}

const f32 = (...xs: number[]) => Float32Array.from(xs);

/**
 * TIS, cap C = 2, three trained tokens (token-mean over 3). ρ = π/μ:
 *
 *   n  log π   log μ        ρ     min(ρ,C)  A    loss −A·min(ρ,C)   d loss/d log π = −A·min(ρ,C)/3
 *   0  −1      −1           1     1         +1   −1                 −1/3
 *   1  −1      −1 − ln 4    4     2 (cut)   +1   −2                 −2/3
 *   2  −1      −1 − ln 0.5  0.5   0.5       −2   +1                 +1/3
 *
 * policy = (−1 − 2 + 1)/3 = −2/3; mean weight (1 + 2 + 0.5)/3 = 7/6; truncated share 1/3.
 */
const TIS_FIXTURE: Arrays = {
  logprobs: f32(-1, -1, -1),
  oldLogprobs: f32(-1, -1 - Math.log(4), -1 - Math.log(0.5)),
  proxLogprobs: null,
  advantages: f32(1, 1, -2),
  lossMask: f32(1, 1, 1),
  entropy: f32(0, 0, 0),
  refLogprobs: null,
};

/**
 * Decoupled PPO, cap C = 2, ε = 0.2. w = min(π_prox/μ, C), r = π/π_prox:
 *
 *   n  μ    π_prox        π                w          r     A    −A·r   −A·clip(r)  max           loss = w·max
 *   0  −1   −1            −1 + ln 1.5      1          1.5   +1   −1.5   −1.2        −1.2 (clip)   −1.2
 *   1  −2   −1            −1               2 (e, cut) 1     +1   −1     −1          −1            −2
 *   2  −1   −1 + ln 0.5   −1 + 2 ln 0.5    0.5        0.5   −1   +0.5   +0.8        +0.8 (clip)   +0.4
 *
 * policy = (−1.2 − 2 + 0.4)/3 = −2.8/3; clipped share 2/3; gradient only through token 1:
 * −A·w·r/3 = −2/3 (the clipped tokens have none).
 */
const DECOUPLED_FIXTURE: Arrays = {
  logprobs: f32(-1 + Math.log(1.5), -1, -1 + 2 * Math.log(0.5)),
  oldLogprobs: f32(-1, -2, -1),
  proxLogprobs: f32(-1, -1, -1 + Math.log(0.5)),
  advantages: f32(1, 1, -1),
  lossMask: f32(1, 1, 1),
  entropy: f32(0, 0, 0),
  refLogprobs: null,
};

describe('truncated importance sampling', () => {
  it('caps the importance weights at C', () => {
    const w = truncatedImportanceWeights(TIS_FIXTURE.logprobs, TIS_FIXTURE.oldLogprobs, 2);
    expect(Array.from(w)).toEqual([1, 2, expect.closeTo(0.5, 6)]);
  });

  it('matches the hand-worked loss, weights and gradient', () => {
    const correction = { kind: 'tis', cap: 2 } as const;
    const ref = offPolicyLossReference(TIS_FIXTURE, OPTIONS, correction);
    expect(ref.policy).toBeCloseTo(-2 / 3, 6);
    expect(ref.isWeight).toBeCloseTo(7 / 6, 6);
    expect(ref.truncFrac).toBeCloseTo(1 / 3, 6);
    const { terms, grad } = tfLoss(TIS_FIXTURE, OPTIONS, correction);
    expect(terms.policy).toBeCloseTo(-2 / 3, 5);
    expect(terms.isWeight).toBeCloseTo(7 / 6, 5);
    expect(terms.truncFrac).toBeCloseTo(1 / 3, 5);
    expect(grad[0]).toBeCloseTo(-1 / 3, 5);
    expect(grad[1]).toBeCloseTo(-2 / 3, 5);
    expect(grad[2]).toBeCloseTo(1 / 3, 5);
  });
});

describe('decoupled PPO objective', () => {
  it('matches the hand-worked loss, clip share and gradient', () => {
    const correction = { kind: 'decoupled', cap: 2 } as const;
    const ref = offPolicyLossReference(DECOUPLED_FIXTURE, OPTIONS, correction);
    expect(ref.policy).toBeCloseTo(-2.8 / 3, 6);
    expect(ref.clipFrac).toBeCloseTo(2 / 3, 6);
    expect(ref.isWeight).toBeCloseTo(3.5 / 3, 6);
    const { terms, grad } = tfLoss(DECOUPLED_FIXTURE, OPTIONS, correction);
    expect(terms.policy).toBeCloseTo(-2.8 / 3, 5);
    expect(terms.clipFrac).toBeCloseTo(2 / 3, 5);
    expect(terms.truncFrac).toBeCloseTo(1 / 3, 5);
    expect(grad[0]).toBeCloseTo(0, 6);
    expect(grad[1]).toBeCloseTo(-2 / 3, 5);
    expect(grad[2]).toBeCloseTo(0, 6);
  });

  it('is plain PPO-clip when the proximal policy is the behaviour policy', () => {
    const input: Arrays = { ...DECOUPLED_FIXTURE, proxLogprobs: DECOUPLED_FIXTURE.oldLogprobs };
    const ppo = ppoClipLossReference(input, OPTIONS);
    const decoupled = offPolicyLossReference(input, OPTIONS, { kind: 'decoupled', cap: 5 });
    expect(decoupled.policy).toBeCloseTo(ppo.policy, 10);
    expect(decoupled.clipFrac).toBeCloseTo(ppo.clipFrac, 10);
  });

  it('rejects a missing proximal policy and a bad cap, naming the field', () => {
    expect(() => offPolicyLossReference({ ...DECOUPLED_FIXTURE, proxLogprobs: null }, OPTIONS, { kind: 'decoupled', cap: 2 })).toThrow(/proxLogprobs/);
    expect(() => offPolicyLossReference(TIS_FIXTURE, OPTIONS, { kind: 'tis', cap: 0 })).toThrow(InvalidArgumentError);
    expect(() => offPolicyLossReference(TIS_FIXTURE, OPTIONS, { kind: 'tis', cap: 0 })).toThrow(/offPolicy\.cap/);
  });
});

describe('tfjs kernels vs plain-JS references', () => {
  it('agree on seeded random batches (masking, weights, KL, entropy, dual clip)', () => {
    const rng = Rng.fromSeed(9);
    const draw = (n: number, lo: number, hi: number) => Float32Array.from({ length: n }, () => lo + (hi - lo) * rng.next());
    for (let trial = 0; trial < 6; trial++) {
      const n = 5 + rng.int(20);
      const lossMask = Float32Array.from({ length: n }, () => (rng.next() < 0.8 ? 1 : 0));
      const input: Arrays = {
        logprobs: draw(n, -3, -0.1),
        oldLogprobs: draw(n, -3, -0.1),
        proxLogprobs: draw(n, -3, -0.1),
        advantages: draw(n, -2, 2),
        lossMask,
        entropy: draw(n, 0, 2),
        refLogprobs: draw(n, -3, -0.1),
      };
      const options: PolicyLossOptions = { clipRatio: 0.2, klCoef: 0.1, entropyCoef: 0.01, dualClip: trial % 2 === 0 ? 3 : null };
      for (const correction of [{ kind: 'tis', cap: 1.5 }, { kind: 'decoupled', cap: 2 }] as const) {
        const ref = offPolicyLossReference(input, options, correction);
        const { terms } = tfLoss(input, options, correction);
        for (const k of TERMS) expect(terms[k], `${correction.kind} ${k}`).toBeCloseTo(ref[k], 4);
      }
    }
  });
});
