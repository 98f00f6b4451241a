import { beforeAll, describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.js';
import { nativeAttentionCalls } from '../../src/backend/native-attention.js';
import { nativeBlas } from '../../src/backend/native-blas.js';
import { setNativeUse } from '../../src/backend/native.js';
import { selectBackend } from '../../src/backend/select.js';
import { tf } from '../../src/backend/tf.js';
import { attend, attentionMask, MASK_VALUE } from '../../src/models/transformer/layers.js';
import { TransformerModel, type TransformerConfig } from '../../src/models/transformer/model.js';
import { trackLiveTensorBytes } from '../helpers/live-tensor-bytes.js';
import { lossAndGradients, maxRelDiff, randomArray, randomTrainBatch } from './fixtures.js';

// The fused attention kernel (native/attention.c): `attend` gives the tfjs form's value and the
// gradients of q, k and v (the native kernels off) over causal and padding masks, grouped-query
// heads, head sizes on the vector path (multiples of 16) and off it, query rows not a multiple
// of the kernel's block of four, queries over a longer cache, and a mask per head.

const { blas } = nativeBlas();
const TOLERANCE = 1e-5;

interface Case {
  readonly label: string;
  readonly b: number;
  readonly heads: number;
  readonly kvHeads: number;
  readonly tq: number;
  readonly tk: number;
  readonly hd: number;
  /** The additive mask, [b, maskHeads, tq, tk]. */
  readonly mask: Float32Array;
  readonly maskHeads: number;
}

/** Causal with padding: row 0's first token and row 1's second are padding, so query 0 of row 0 sees no key at all. */
function paddedCausal(b: number, t: number): Float32Array {
  const pad = Uint8Array.from({ length: b * t }, (_, i) => (i === 0 || i === t + 1 ? 0 : 1));
  return attentionMask(new Uint8Array(0), 0, pad, b, t);
}

/** `tq` new queries per row over `past` cached slots (some masked) and `tk - past - tq` unused ones: a decode step's mask. */
function overCache(b: number, past: number, tq: number, tk: number): Float32Array {
  const pastMask = Uint8Array.from({ length: b * tk }, (_, i) => (i % tk < past && i % 5 !== 2 ? 1 : 0));
  return attentionMask(pastMask, past, new Uint8Array(b * tq).fill(1), b, tq, tk, tk);
}

/** A random per-head mask: about a third of the keys blocked for each query, never all of them. */
function perHead(b: number, h: number, tq: number, tk: number): Float32Array {
  const rng = Rng.fromSeed(21);
  const mask = Float32Array.from({ length: b * h * tq * tk }, () => (rng.next() < 0.33 ? MASK_VALUE : 0));
  for (let row = 0; row < b * h * tq; row++) mask[row * tk + (row % tk)] = 0;
  return mask;
}

const CASES: Case[] = [
  { label: 'causal with padding, hd 8 (scalar loops), 9 queries', b: 2, heads: 4, kvHeads: 4, tq: 9, tk: 9, hd: 8, mask: paddedCausal(2, 9), maskHeads: 1 },
  { label: 'grouped-query (4 heads over 2), hd 16, 13 queries', b: 2, heads: 4, kvHeads: 2, tq: 13, tk: 13, hd: 16, mask: paddedCausal(2, 13), maskHeads: 1 },
  { label: 'one kv head for 3 query heads, hd 32, 21 queries', b: 1, heads: 3, kvHeads: 1, tq: 21, tk: 21, hd: 32, mask: paddedCausal(1, 21), maskHeads: 1 },
  { label: '3 queries over 11 cache slots, hd 64', b: 2, heads: 2, kvHeads: 2, tq: 3, tk: 11, hd: 64, mask: overCache(2, 7, 3, 11), maskHeads: 1 },
  { label: 'a mask per head, hd 12', b: 2, heads: 3, kvHeads: 3, tq: 6, tk: 10, hd: 12, mask: perHead(2, 3, 6, 10), maskHeads: 3 },
];

/** attend's value and the gradients of q, k and v for a seeded upstream gradient, as plain arrays. */
function valueAndGrads(c: Case, native: boolean): Float32Array[] {
  setNativeUse(native ? 'all' : 'off');
  try {
    return tf.tidy(() => {
      const q = tf.tensor4d(randomArray(c.b * c.heads * c.tq * c.hd, 10), [c.b, c.heads, c.tq, c.hd]).mul(3) as tf.Tensor4D;
      const k = tf.tensor4d(randomArray(c.b * c.kvHeads * c.tk * c.hd, 11), [c.b, c.kvHeads, c.tk, c.hd]).mul(3) as tf.Tensor4D;
      const v = tf.tensor4d(randomArray(c.b * c.kvHeads * c.tk * c.hd, 12), [c.b, c.kvHeads, c.tk, c.hd]);
      const mask = tf.tensor4d(c.mask, [c.b, c.maskHeads, c.tq, c.tk]);
      const f = (qs: tf.Tensor, ks: tf.Tensor, vs: tf.Tensor) => attend(qs as tf.Tensor4D, ks as tf.Tensor4D, vs as tf.Tensor4D, mask);
      const y = f(q, k, v);
      const upstream = tf.tensor(randomArray(y.size, 999), y.shape);
      const grads = tf.grads((qs: tf.Tensor, ks: tf.Tensor, vs: tf.Tensor) => tf.sum(tf.mul(f(qs, ks, vs), upstream)))([q, k, v]);
      return [y, ...grads].map((t) => (t.dataSync() as Float32Array).slice());
    });
  } finally {
    setNativeUse('all');
  }
}

describe.runIf(blas !== null)('native attention (wasm backend)', () => {
  beforeAll(async () => {
    await selectBackend('wasm', { matmul: 'native' });
  });

  it('the cases mask what they say: a query row that sees no key, and blocked keys in every case', () => {
    expect(Array.from(CASES[0]!.mask.subarray(0, 9)).every((m) => m === MASK_VALUE)).toBe(true);
    for (const c of CASES) expect(c.mask).toContain(MASK_VALUE);
  });

  it.each(CASES)("gives the tfjs form's value and gradients of q, k and v: $label", (c) => {
    const before = nativeAttentionCalls();
    const native = valueAndGrads(c, true);
    const after = nativeAttentionCalls();
    expect(after - before, 'the native kernels ran (forward and the gradient function)').toBeGreaterThan(0);
    const reference = valueAndGrads(c, false);
    expect(nativeAttentionCalls(), 'the tfjs form ran without them').toBe(after);
    const names = ['value', 'dq', 'dk', 'dv'];
    native.forEach((got, i) => {
      const want = reference[i] as Float32Array;
      expect(want.some((x) => x !== 0), `${names[i]} is not all zeros`).toBe(true);
      expect(maxRelDiff(got, want), names[i]).toBeLessThan(TOLERANCE);
    });
  });

  it("for inference gives training's value bit for bit, keeps no probabilities and takes no gradient", () => {
    const c = CASES[1] as Case;
    tf.tidy(() => {
      const q = tf.tensor4d(randomArray(c.b * c.heads * c.tq * c.hd, 1), [c.b, c.heads, c.tq, c.hd]);
      const k = tf.tensor4d(randomArray(c.b * c.kvHeads * c.tk * c.hd, 2), [c.b, c.kvHeads, c.tk, c.hd]);
      const v = tf.tensor4d(randomArray(c.b * c.kvHeads * c.tk * c.hd, 3), [c.b, c.kvHeads, c.tk, c.hd]);
      const mask = tf.tensor4d(c.mask, [c.b, 1, c.tq, c.tk]);
      const tracker = trackLiveTensorBytes();
      const run = (use: 'train' | 'infer') => {
        tracker.resetPeak();
        const before = tracker.read().live;
        const y = attend(q, k, v, mask, use);
        return { y: y.dataSync().slice(), peak: tracker.read().peak - before };
      };
      const train = run('train');
      const infer = run('infer');
      expect(infer.y).toEqual(train.y);
      const context = 4 * c.b * c.heads * c.tq * c.hd;
      expect(train.peak, 'training: the context and the probabilities').toBe(context + 4 * c.b * c.heads * c.tq * c.tk);
      expect(infer.peak, 'inference: the context alone').toBe(context);
      expect(() => tf.grad((qs: tf.Tensor) => tf.sum(attend(qs as tf.Tensor4D, k, v, mask, 'infer')))(q)).toThrow(/gradient/i);
    });
  });

  it("trains a whole grouped-query model with padding to the tfjs form's loss and gradients", () => {
    const shape: TransformerConfig = { vocabSize: 40, dModel: 64, nLayers: 2, nHeads: 4, nKvHeads: 2, ffnHidden: 48, maxContext: 64, ropeTheta: 10000, rmsNormEps: 1e-5, tieEmbeddings: true };
    const model = new TransformerModel(shape, Rng.fromSeed(4));
    const [batch, seq] = [3, 14];
    const padding = Uint8Array.from({ length: batch * seq }, (_, i) => (i >= seq && i % seq < 3 ? 0 : 1));
    const train = randomTrainBatch(shape.vocabSize, batch, seq, Rng.fromSeed(9), padding);
    const before = nativeAttentionCalls();
    const native = lossAndGradients(model, train, true);
    expect(nativeAttentionCalls() - before).toBe(shape.nLayers);
    const reference = lossAndGradients(model, train, false);
    expect(Math.abs(native.loss - reference.loss) / Math.abs(reference.loss)).toBeLessThan(TOLERANCE);
    native.grads.forEach((g, i) => {
      expect(maxRelDiff(g, reference.grads[i] as Float32Array), `gradient ${i}`).toBeLessThan(TOLERANCE);
    });
    model.dispose();
  });

  it('refuses arrays and dimensions that do not fit, naming the function and what is wrong', () => {
    const [b, h, kvh, tq, tk, hd] = [1, 2, 1, 3, 4, 8];
    const f = (n: number) => new Float32Array(n);
    const q = f(b * h * tq * hd);
    const kv = f(b * kvh * tk * hd);
    const mask = f(b * tq * tk);
    const probs = f(b * h * tq * tk);
    const forward = blas?.attentionForward.bind(blas) as NonNullable<typeof blas>['attentionForward'];
    const backward = blas?.attentionBackward.bind(blas) as NonNullable<typeof blas>['attentionBackward'];
    expect(() => forward(q, kv, kv, mask, q, probs, b, h, kvh, tq, tk, hd, 1, 1)).not.toThrow();
    expect(() => forward(q, kv, kv, mask, q, f(0), b, h, kvh, tq, tk, hd, 1, 1), 'no probabilities kept').not.toThrow();
    expect(() => forward(f(5), kv, kv, mask, q, probs, b, h, kvh, tq, tk, hd, 1, 1)).toThrow(/attentionForward: q and out must hold/);
    expect(() => forward(q, kv, f(3), mask, q, probs, b, h, kvh, tq, tk, hd, 1, 1)).toThrow(/attentionForward: k and v must hold/);
    expect(() => forward(q, kv, kv, f(2), q, probs, b, h, kvh, tq, tk, hd, 1, 1)).toThrow(/attentionForward: mask must hold/);
    expect(() => forward(q, kv, kv, mask, q, f(7), b, h, kvh, tq, tk, hd, 1, 1)).toThrow(/attentionForward: probs must be empty or hold/);
    expect(() => forward(q, kv, kv, mask, q, probs, b, 3, 2, tq, tk, hd, 1, 1)).toThrow(/attentionForward: heads must be a multiple of kvHeads/);
    expect(() => forward(q, kv, kv, mask, q, probs, b, h, kvh, tq, tk, hd, 3, 1)).toThrow(/attentionForward: maskHeads must be 1 or heads/);
    expect(() => forward(q, kv, kv, mask, q, probs, b, h, kvh, tq, tk, 0, 1, 1)).toThrow(/attentionForward: expected/);
    expect(() => backward(q, q, kv, kv, mask, probs, q, kv, kv, b, h, kvh, tq, tk, hd, 1, 1)).not.toThrow();
    expect(() => backward(q, q, kv, kv, mask, f(0), q, kv, kv, b, h, kvh, tq, tk, hd, 1, 1)).toThrow(/attentionBackward: probs must hold/);
    expect(() => backward(q, q, kv, kv, mask, probs, q, f(1), kv, b, h, kvh, tq, tk, hd, 1, 1)).toThrow(/attentionBackward: k, v, dk and dv must hold/);
  });
});
