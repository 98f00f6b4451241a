import { beforeAll, describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.js';
import { nativeBlas } from '../../src/backend/native-blas.js';
import { nativeAttentionCalls } from '../../src/backend/native-attention.js';
import { nativeLayerCalls } from '../../src/backend/native-layers.js';
import { selectBackend } from '../../src/backend/select.js';
import { tf } from '../../src/backend/tf.js';
import { setNativeUse } from '../../src/backend/native.js';
import { applyRope, rmsNorm, ropeFactors, ropeTable, rotateHalfMatrix, swiGlu } from '../../src/models/transformer/layers.js';
import { TransformerModel, type TransformerConfig } from '../../src/models/transformer/model.js';
import { lossAndGradients, maxRelDiff, randomArray, randomTrainBatch } from './fixtures.js';

// The native layer kernels (issue #20): each public layer function gives the same values and
// gradients on the native path as its tfjs form (the same function with the native path off),
// and a whole model's loss and gradients agree too.

const { blas } = nativeBlas();
const TOLERANCE = 1e-5;

/** Value and gradients (for a seeded upstream gradient) of `f` at `inputs`, as plain arrays. */
function valueAndGrads(f: (...xs: tf.Tensor[]) => tf.Tensor, inputs: { shape: number[]; seed: number; scale?: number }[], native: boolean): Float32Array[] {
  setNativeUse(native ? 'all' : 'off');
  try {
    return tf.tidy(() => {
      const xs = inputs.map(({ shape, seed, scale }) => tf.mul(tf.tensor(randomArray(shape.reduce((a, b) => a * b, 1), seed), shape), scale ?? 1));
      const y = f(...xs);
      const upstream = tf.tensor(randomArray(y.size, 999), y.shape);
      const grads = tf.grads((...args: tf.Tensor[]) => tf.sum(tf.mul(f(...args), upstream)))(xs);
      return [y, ...grads].map((t) => (t.dataSync() as Float32Array).slice());
    });
  } finally {
    setNativeUse('all');
  }
}

function expectSameOnBothPaths(name: keyof ReturnType<typeof nativeLayerCalls>, f: (...xs: tf.Tensor[]) => tf.Tensor, inputs: { shape: number[]; seed: number; scale?: number }[]): void {
  const before = nativeLayerCalls()[name];
  const native = valueAndGrads(f, inputs, true);
  expect(nativeLayerCalls()[name] - before, 'the native kernels ran').toBeGreaterThan(0);
  const after = nativeLayerCalls()[name];
  const reference = valueAndGrads(f, inputs, false);
  expect(nativeLayerCalls()[name], 'the tfjs form ran without them').toBe(after);
  expect(native.length).toBe(reference.length);
  native.forEach((got, i) => {
    expect(maxRelDiff(got, reference[i] as Float32Array), `${i === 0 ? 'value' : `gradient ${i - 1}`}`).toBeLessThan(TOLERANCE);
  });
}

describe.runIf(blas !== null)('native layer kernels (wasm backend)', () => {
  beforeAll(async () => {
    await selectBackend('wasm', { matmul: 'native' });
  });

  it('rmsNorm: values and gradients of x and the gain, 2-D and 4-D (q/k-norm over heads)', () => {
    expectSameOnBothPaths('rmsNorm', (x, w) => rmsNorm(x as tf.Tensor2D, w as tf.Tensor1D, 1e-5), [{ shape: [37, 24], seed: 1, scale: 3 }, { shape: [24], seed: 2 }]);
    expectSameOnBothPaths('rmsNorm', (x, w) => rmsNorm(x as tf.Tensor4D, w as tf.Tensor1D, 1e-6), [{ shape: [2, 3, 5, 16], seed: 3 }, { shape: [16], seed: 4 }]);
  });

  it('swiGlu: values and gradients of the input and all three weights', () => {
    expectSameOnBothPaths('swiGlu', (x, g, u, d) => swiGlu(x as tf.Tensor2D, g as tf.Tensor2D, u as tf.Tensor2D, d as tf.Tensor2D), [
      { shape: [19, 8], seed: 5, scale: 2 },
      { shape: [8, 20], seed: 6 },
      { shape: [8, 20], seed: 7 },
      { shape: [20, 8], seed: 8 },
    ]);
  });

  it('applyRope: values and gradients, positions out of order and repeated', () => {
    const [b, h, t, hd] = [2, 3, 7, 16];
    const table = ropeTable(64, hd, 10000);
    const positions = Int32Array.from({ length: b * t }, (_, i) => (i * 13) % 40);
    const rotate = tf.keep(tf.tensor2d(rotateHalfMatrix(hd), [hd, hd]));
    try {
      expectSameOnBothPaths(
        'rope',
        (x) =>
          tf.tidy(() => {
            const factors = ropeFactors(table, positions, b, t, hd, rotate);
            return applyRope(x as tf.Tensor4D, factors);
          }),
        [{ shape: [b, h, t, hd], seed: 9 }],
      );
    } finally {
      rotate.dispose();
    }
  });

  it("gives a whole model's training loss and gradients within 1e-5 of the tfjs forms", () => {
    const shape: TransformerConfig = { vocabSize: 48, dModel: 32, nLayers: 2, nHeads: 4, ffnHidden: 40, maxContext: 64, ropeTheta: 10000, rmsNormEps: 1e-5, tieEmbeddings: false };
    const model = new TransformerModel(shape, Rng.fromSeed(3));
    const rng = Rng.fromSeed(8);
    const [batch, seq] = [3, 12];
    const n = batch * seq;
    const attentionMaskIn = Uint8Array.from({ length: n }, (_, i) => (i % seq < 2 && i > seq ? 0 : 1));
    const train = randomTrainBatch(shape.vocabSize, batch, seq, rng, attentionMaskIn);
    const lossAndGrads = (native: boolean) => lossAndGradients(model, train, native);
    const before = nativeLayerCalls();
    const attentionBefore = nativeAttentionCalls();
    const native = lossAndGrads(true);
    const after = nativeLayerCalls();
    expect(nativeAttentionCalls() - attentionBefore).toBe(shape.nLayers);
    expect(after.rmsNorm - before.rmsNorm).toBe(2 * shape.nLayers + 1);
    expect(after.rope - before.rope).toBe(2 * shape.nLayers);
    expect(after.swiGlu - before.swiGlu).toBe(shape.nLayers);
    const reference = lossAndGrads(false);
    expect(Math.abs(native.loss - reference.loss) / Math.abs(reference.loss)).toBeLessThan(TOLERANCE);
    native.grads.forEach((g, i) => {
      expect(maxRelDiff(g, reference.grads[i] as Float32Array), `gradient ${i}`).toBeLessThan(TOLERANCE);
    });
    model.dispose();
  });
});
