import { beforeAll, describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.js';
import { nativeBlas } from '../../src/backend/native-blas.js';
import { nativeLoraCalls } from '../../src/backend/native-lora.js';
import { setNativeUse } from '../../src/backend/native.js';
import { selectBackend } from '../../src/backend/select.js';
import { tf } from '../../src/backend/tf.js';
import { nativeBatchMatMulCalls } from '../../src/backend/wasm-batch-matmul.js';
import { project, type Projection } from '../../src/models/transformer/layers.js';
import { TransformerModel, type TransformerConfig } from '../../src/models/transformer/model.js';
import { lossAndGradients, maxRelDiff, randomArray, randomTrainBatch } from './fixtures.js';

// The fused LoRA projection (native/lora.c): `project` gives the same values and gradients with
// it as with the tfjs form (the native kernels off), computes only the gradients the tape asks
// for, and a whole adapted model trains the same.

const { blas } = nativeBlas();
const TOLERANCE = 2e-6;

const [n, inFeatures, outFeatures, rank, scale] = [13, 24, 20, 4, 2.5];
const tensorOf = (shape: number[], seed: number): tf.Tensor2D => tf.tensor(randomArray(shape.reduce((a, b) => a * b, 1), seed), shape) as tf.Tensor as tf.Tensor2D;

/** A fixed "dropout" of the adapter's input: a seeded keep mask scaled by 1 / (1 - p), p = 0.25. */
const dropInput = (x: tf.Tensor2D) => tf.mul(x, tf.div(tf.cast(tf.greater(tf.tensor(randomArray(x.size, 77), x.shape), -0.5), 'float32'), 0.75)) as tf.Tensor2D;

/** project(x, {w, bias?, lora: {a, b}}): value and the gradients of x, w, a, b (and the bias), for a seeded upstream gradient. */
function valueAndGrads(native: boolean, withBias: boolean, drop?: (x: tf.Tensor2D) => tf.Tensor2D): Float32Array[] {
  setNativeUse(native ? 'all' : 'off');
  try {
    return tf.tidy(() => {
      const inputs = [tensorOf([n, inFeatures], 1), tensorOf([inFeatures, outFeatures], 2), tensorOf([inFeatures, rank], 3), tensorOf([rank, outFeatures], 4), tensorOf([outFeatures], 5)];
      const f = (x: tf.Tensor, w: tf.Tensor, a: tf.Tensor, b: tf.Tensor, bias: tf.Tensor) => {
        const p: Projection = { weight: w as tf.Tensor2D, ...(withBias ? { bias: bias as tf.Tensor1D } : {}), lora: { a: a as tf.Tensor2D, b: b as tf.Tensor2D, scale } };
        return project(x as tf.Tensor2D, p, drop);
      };
      const y = f(...(inputs as [tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor]));
      const upstream = tf.tensor(randomArray(y.size, 999), y.shape);
      const differentiated = withBias ? inputs : inputs.slice(0, 4);
      const grads = tf.grads((...args: tf.Tensor[]) => tf.sum(tf.mul(f(...(args as [tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor]), args[4] ?? (inputs[4] as tf.Tensor)), upstream)))(differentiated);
      return [y, ...grads].map((t) => (t.dataSync() as Float32Array).slice());
    });
  } finally {
    setNativeUse('all');
  }
}

describe.runIf(blas !== null)('the fused LoRA projection (wasm backend, native addon)', () => {
  beforeAll(async () => {
    await selectBackend('wasm', { matmul: 'native' });
  });

  for (const [withBias, dropped] of [
    [false, false],
    [true, false],
    [false, true],
    [true, true],
  ] as const) {
    it(`gives the tfjs form's value and the gradients of x, W, A, B${withBias ? ' and the bias' : ''}${dropped ? ', the adapter reading x after dropout' : ''}`, () => {
      const drop = dropped ? dropInput : undefined;
      const before = nativeLoraCalls();
      const native = valueAndGrads(true, withBias, drop);
      expect(nativeLoraCalls() - before, 'the fused kernel ran (the forward, and again under tf.grads)').toBe(2);
      const reference = valueAndGrads(false, withBias, drop);
      expect(nativeLoraCalls() - before, 'not with the native kernels off').toBe(2);
      expect(native.length).toBe(withBias ? 6 : 5);
      native.forEach((got, i) => {
        expect(maxRelDiff(got, reference[i] as Float32Array), i === 0 ? 'value' : `gradient ${['x', 'W', 'A', 'B', 'bias'][i - 1]}`).toBeLessThan(TOLERANCE);
      });
      // Not trivially equal: the adapter changes the value, and dropout changes the adapter.
      const base = tf.tidy(() => (tf.matMul(tensorOf([n, inFeatures], 1), tensorOf([inFeatures, outFeatures], 2)).dataSync() as Float32Array).slice());
      expect(maxRelDiff(base, native[0] as Float32Array)).toBeGreaterThan(0.01);
      if (dropped) expect(maxRelDiff(valueAndGrads(true, withBias)[0] as Float32Array, native[0] as Float32Array)).toBeGreaterThan(0.01);
    });
  }

  it('computes only the gradients asked for: the frozen base weight costs no product', () => {
    tf.tidy(() => {
      const [x, w, a, b] = [tensorOf([n, inFeatures], 1), tensorOf([inFeatures, outFeatures], 2), tensorOf([inFeatures, rank], 3), tensorOf([rank, outFeatures], 4)];
      const loss = (xs: tf.Tensor, ws: tf.Tensor, as: tf.Tensor, bs: tf.Tensor) => tf.sum(project(xs as tf.Tensor2D, { weight: ws as tf.Tensor2D, lora: { a: as as tf.Tensor2D, b: bs as tf.Tensor2D, scale } }));
      const products = (f: () => void) => {
        const before = nativeBatchMatMulCalls();
        f();
        return nativeBatchMatMulCalls() - before;
      };
      expect(products(() => tf.grads((as: tf.Tensor, bs: tf.Tensor) => loss(x, w, as, bs))([a, b])), 'adapters only').toBe(0);
      expect(products(() => tf.grads((ws: tf.Tensor, as: tf.Tensor, bs: tf.Tensor) => loss(x, ws, as, bs))([w, a, b])), 'dW = xᵀ·dy').toBe(1);
    });
  });

  for (const [sharedA, dropout] of [
    [false, 0],
    [true, 0],
    [false, 0.1],
  ] as const) {
    it(`trains a whole adapted model with the tfjs form's loss and gradients${sharedA ? ' (q/k/v and gate/up share A)' : ''}${dropout > 0 ? ' (LoRA dropout 0.1)' : ''}`, () => {
      const shape: TransformerConfig = { vocabSize: 48, dModel: 32, nLayers: 2, nHeads: 4, ffnHidden: 40, maxContext: 64, ropeTheta: 10000, rmsNormEps: 1e-5, tieEmbeddings: false };
      const base = new TransformerModel(shape, Rng.fromSeed(3));
      const targets = ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] as const;
      const model = base.withOwnAdapters({ rank: 4, alpha: 8, dropout, targets: [...targets], sharedA }, Rng.fromSeed(4));
      // B starts at zero (PEFT's init), which would hide a wrong dA: give B values first.
      for (const v of model.trainableVariables()) v.assign(tf.tidy(() => tf.mul(tf.randomUniform(v.shape, -1, 1, 'float32', 7), 0.2)));
      const train = randomTrainBatch(shape.vocabSize, 3, 10, Rng.fromSeed(8));
      const lossAndGrads = (native: boolean) => lossAndGradients(model, train, native);
      const before = nativeLoraCalls();
      const native = lossAndGrads(true);
      expect(nativeLoraCalls() - before, 'every adapted projection').toBe(targets.length * shape.nLayers);
      const reference = lossAndGrads(false);
      expect(Math.abs(native.loss - reference.loss) / Math.abs(reference.loss)).toBeLessThan(1e-5);
      // Per layer seven B; seven A, or four when q/k/v and gate/up share theirs.
      expect(native.grads.length).toBe((sharedA ? 4 + 7 : 7 + 7) * shape.nLayers);
      native.grads.forEach((g, i) => {
        expect(maxRelDiff(g, reference.grads[i] as Float32Array), `gradient of ${model.trainableVariables()[i]?.name}`).toBeLessThan(1e-5);
      });
      model.dispose();
      base.dispose();
    });
  }

  it('refuses arrays shorter than the dimensions say, naming the function', () => {
    const small = new Float32Array(4);
    expect(() => blas?.loraForward(small, small, small, small, small, small, small, 2, 3, 2, 2, 1)).toThrow(/loraForward: an array is shorter/);
    expect(() => blas?.loraInputGrad(small, small, small, small, small, 2, 3, 2, 1)).toThrow(/loraInputGrad: an array is shorter/);
    expect(() => blas?.loraAdapterGrads(small, small, small, small, small, small, small, 1, 1, 1, 0, 1)).toThrow(/loraAdapterGrads: expected/);
  });
});
