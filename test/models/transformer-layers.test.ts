import { beforeAll, describe, expect, it } from 'vitest';
import { tf } from '../../src/backend/tf.js';
import {
  applyRope,
  attentionMask,
  embedRows,
  MASK_VALUE,
  mlpResidual,
  positionsFromMask,
  rmsNorm,
  scaleColumns,
  ropeFactors,
  ropeTable,
  rotateHalfMatrix,
  swiGlu,
  targetLogProbsAndEntropy,
} from '../../src/models/transformer/layers.js';
import { greedyToken, maskedLogProbs, sampleToken } from '../../src/models/transformer/sampling.js';

beforeAll(async () => {
  await tf.setBackend('cpu');
});

function expectClose(actual: ArrayLike<number>, expected: ArrayLike<number>, tol = 1e-6): void {
  expect(actual.length).toBe(expected.length);
  for (let i = 0; i < expected.length; i++) expect(Math.abs(actual[i] - expected[i])).toBeLessThan(tol);
}

describe('RMSNorm', () => {
  it('divides by the root mean square and scales by the gain', () => {
    const x = tf.tensor2d([[1, 2, 3, 4]]);
    const w = tf.tensor1d([1, 1, 2, 0.5]);
    const out = rmsNorm(x, w, 0).dataSync();
    const rms = Math.sqrt((1 + 4 + 9 + 16) / 4);
    expectClose(out, [1 / rms, 2 / rms, 6 / rms, 2 / rms]);
  });
});

describe('RoPE', () => {
  it('matches HF rotate_half for a hand-computed position', () => {
    const table = ropeTable(4, 4, 10000);
    const rot = tf.tensor2d(rotateHalfMatrix(4), [4, 4]);
    const factors = ropeFactors(table, new Int32Array([1]), 1, 1, 4, rot);
    const out = applyRope(tf.tensor4d([1, 2, 3, 4], [1, 1, 1, 4]), factors).dataSync();
    const c1 = Math.cos(1);
    const s1 = Math.sin(1);
    const c2 = Math.cos(0.01);
    const s2 = Math.sin(0.01);
    expectClose(out, [c1 - 3 * s1, 2 * c2 - 4 * s2, 3 * c1 + s1, 4 * c2 + 2 * s2], 1e-6);
  });

  it('leaves position 0 unchanged and preserves the norm', () => {
    const table = ropeTable(8, 4, 10000);
    const rot = tf.tensor2d(rotateHalfMatrix(4), [4, 4]);
    const x = tf.tensor4d([1, -2, 0.5, 3, 1, -2, 0.5, 3], [1, 1, 2, 4]);
    const out = applyRope(x, ropeFactors(table, new Int32Array([0, 7]), 1, 2, 4, rot)).dataSync();
    expectClose(out.slice(0, 4), [1, -2, 0.5, 3]);
    const norm = (v: ArrayLike<number>) => Math.hypot(...Array.from(v));
    expect(norm(out.slice(4))).toBeCloseTo(norm([1, -2, 0.5, 3]), 5);
  });
});

describe('SwiGLU', () => {
  it('computes down(silu(x·gate) * (x·up))', () => {
    const x = tf.tensor2d([[1, 2]]);
    const gate = tf.tensor2d([[1], [0]]);
    const up = tf.tensor2d([[0], [1]]);
    const down = tf.tensor2d([[1, -1]]);
    const silu1 = 1 / (1 + Math.exp(-1));
    expectClose(swiGlu(x, gate, up, down).dataSync(), [silu1 * 2, -silu1 * 2]);
  });
});

describe('mlpResidual', () => {
  it('adds the o-projection to the residual, then SwiGLU of its RMSNorm', () => {
    const unused = tf.zeros([2, 2]) as tf.Tensor2D; // q/k/v/inputNorm: read before attention, not here
    const block = {
      inputNorm: tf.ones([2]) as tf.Tensor1D,
      q: { weight: unused },
      k: { weight: unused },
      v: { weight: unused },
      o: { weight: tf.tensor2d([[1, 1], [0, 0]]) },
      postNorm: tf.tensor1d([1, 1]),
      gate: { weight: tf.tensor2d([[1], [0]]) },
      up: { weight: tf.tensor2d([[0], [1]]) },
      down: { weight: tf.tensor2d([[1, -1]]) },
    };
    const out = mlpResidual(tf.tensor2d([[1, 2]]), tf.tensor2d([[1, 0]]), block, 0).dataSync();
    // attended = [1, 2] + [1, 0]·o = [2, 3]; normed = [2, 3] / sqrt(6.5); g = normed[0], u = normed[1].
    const r = Math.sqrt(6.5);
    const g = 2 / r;
    const mlp = (g / (1 + Math.exp(-g))) * (3 / r);
    expectClose(out, [2 + mlp, 3 - mlp]);
  });
});

describe('masks and positions', () => {
  it('builds a causal + key-padding mask, with cached keys before the new ones', () => {
    // one row, one cached key (real), two new tokens: [pad, real]
    const m = attentionMask(new Uint8Array([1]), 1, new Uint8Array([0, 1]), 1, 2);
    expect(Array.from(m)).toEqual([0, MASK_VALUE, MASK_VALUE, 0, MASK_VALUE, 0]);
  });

  it('numbers left-padded tokens from the first real one', () => {
    expect(Array.from(positionsFromMask(new Uint8Array([0, 0, 1, 1, 1, 1, 1, 0]), 2, 4, new Int32Array([0, 5])))).toEqual([0, 0, 0, 1, 5, 6, 7, 7]);
  });
});

describe('CPU sampling', () => {
  const logits = new Float32Array([1, 2, 3, 0.5]);
  it('normalises over the allowed ids only, at the given temperature', () => {
    const lp = maskedLogProbs(logits, new Int32Array([0, 2]), 2);
    const z = Math.log(Math.exp(0.5) + Math.exp(1.5));
    expectClose(lp, [0.5 - z, 1.5 - z]);
  });
  it('inverts the CDF with the uniform and reports the masked log-prob', () => {
    const all = new Int32Array([0, 1, 2, 3]);
    const lp = maskedLogProbs(logits, all, 1);
    expect(sampleToken(logits, all, 1, 1, 0).tokenId).toBe(0);
    expect(sampleToken(logits, all, 1, 1, 0.999).tokenId).toBe(3);
    const pick = sampleToken(logits, all, 1, 1, Math.exp(lp[0]) + 0.01);
    expect(pick.tokenId).toBe(1);
    expect(pick.logprob).toBeCloseTo(lp[1], 12);
  });
  it('keeps only the nucleus under top-p but records the untruncated log-prob', () => {
    const all = new Int32Array([0, 1, 2, 3]);
    const lp = maskedLogProbs(logits, all, 1);
    for (const u of [0, 0.3, 0.6, 0.99]) {
      const pick = sampleToken(logits, all, 1, 0.5, u);
      expect(pick.tokenId).toBe(2); // p(2) ≈ 0.61 ≥ 0.5 alone
      expect(pick.logprob).toBeCloseTo(lp[2], 12);
    }
  });
  it('takes the argmax, lower id on ties', () => {
    expect(greedyToken(new Float32Array([1, 3, 3]), new Int32Array([0, 1, 2])).tokenId).toBe(1);
    expect(greedyToken(new Float32Array([1, 3, 3]), new Int32Array([0, 2])).tokenId).toBe(2);
  });
});

describe('embedRows', () => {
  it('matches tf.gather in value and gradient', () => {
    const table = tf.variable(tf.tensor2d(Float32Array.from({ length: 6 * 3 }, (_, i) => Math.sin(i)), [6, 3]));
    const ids = new Int32Array([4, 1, 4, 0]);
    const weights = tf.tensor2d(Float32Array.from({ length: 4 * 3 }, (_, i) => i - 5), [4, 3]);
    const viaCpu = tf.variableGrads(() => tf.sum(tf.mul(embedRows(table, ids, table.dataSync() as Float32Array), weights)) as tf.Scalar, [table]);
    const viaGather = tf.variableGrads(() => tf.sum(tf.mul(tf.gather(table, tf.tensor1d(ids, 'int32')), weights)) as tf.Scalar, [table]);
    expect(viaCpu.value.dataSync()[0]).toBeCloseTo(viaGather.value.dataSync()[0], 5);
    expectClose(viaCpu.grads[table.name].dataSync(), viaGather.grads[table.name].dataSync());
    expectClose(embedRows(table, ids, table.dataSync() as Float32Array).dataSync(), tf.gather(table, tf.tensor1d(ids, 'int32')).dataSync());
    table.dispose();
  });
});

describe('attentionMask over a cache with capacity', () => {
  it('masks unused slots after the new keys', () => {
    // one row, cache stride 4 with 1 used slot, one new token -> slots [cached, new, unused, unused]
    const m = attentionMask(new Uint8Array([1, 0, 0, 0]), 1, new Uint8Array([1]), 1, 1, 4, 4);
    expect(Array.from(m)).toEqual([0, 0, MASK_VALUE, MASK_VALUE]);
  });
});

describe('targetLogProbsAndEntropy', () => {
  it('matches autodiff of logSoftmax + entropy in value and gradient, masked logits included', () => {
    const n = 3;
    const v = 5;
    const raw = Float32Array.from({ length: n * v }, (_, i) => Math.sin(3 * i) * 2);
    raw[1] += MASK_VALUE; // masked entries, as the constraint adds them
    raw[7] += MASK_VALUE;
    const targetIds = new Int32Array([0, 2, 4]);
    const oneHot = tf.oneHot(tf.tensor1d(targetIds, 'int32'), v).toFloat() as tf.Tensor2D;
    const weights = tf.tensor2d([0.5, -1, 2, 0.3, 0.7, -0.2], [2, n]); // mixes both outputs
    const z = tf.variable(tf.tensor2d(raw, [n, v]));
    const custom = tf.variableGrads(() => tf.sum(tf.mul(targetLogProbsAndEntropy(z, targetIds), weights)) as tf.Scalar, [z]);
    const reference = tf.variableGrads(() => {
      const logp = tf.logSoftmax(z);
      const lp = tf.sum(tf.mul(logp, oneHot), 1);
      const ent = tf.neg(tf.sum(tf.mul(tf.exp(logp), logp), 1));
      return tf.sum(tf.mul(tf.stack([lp, ent]), weights)) as tf.Scalar;
    }, [z]);
    expect(custom.value.dataSync()[0]).toBeCloseTo(reference.value.dataSync()[0], 5);
    expectClose(custom.grads[z.name].dataSync(), reference.grads[z.name].dataSync(), 1e-5);
    z.dispose();
  });
});


describe('scaleColumns', () => {
  it('equals x * weight in value and in both gradients (weight gradient as a column-sum product)', () => {
    const x = tf.variable(tf.tensor3d(Float32Array.from({ length: 2 * 3 * 4 }, (_, i) => Math.cos(i) * 3), [2, 3, 4]));
    const w = tf.variable(tf.tensor1d([0.5, -2, 1.5, 3]));
    const upstream = tf.tensor3d(Float32Array.from({ length: 24 }, (_, i) => Math.sin(i * 0.7)), [2, 3, 4]);
    const custom = tf.variableGrads(() => tf.sum(tf.mul(scaleColumns(x, w as tf.Variable<typeof tf.Rank.R1>), upstream)) as tf.Scalar, [x, w]);
    const reference = tf.variableGrads(() => tf.sum(tf.mul(tf.mul(x, w), upstream)) as tf.Scalar, [x, w]);
    expect(custom.value.dataSync()[0]).toBeCloseTo(reference.value.dataSync()[0] as number, 5);
    expectClose(custom.grads[x.name]!.dataSync(), reference.grads[x.name]!.dataSync(), 1e-5);
    expectClose(custom.grads[w.name]!.dataSync(), reference.grads[w.name]!.dataSync(), 1e-5);
    // A hand-checked weight gradient: column 0 sums x[:, :, 0] * upstream[:, :, 0] over the 6 rows.
    let col0 = 0;
    for (let r = 0; r < 6; r++) col0 += Math.cos(r * 4) * 3 * Math.sin(r * 4 * 0.7);
    expect(custom.grads[w.name]!.dataSync()[0]).toBeCloseTo(col0, 4);
    tf.dispose([x, w, upstream, custom.value, reference.value, ...Object.values(custom.grads), ...Object.values(reference.grads)]);
  });
});
