import { beforeAll, describe, expect, it } from 'vitest';
import { nativeAdamCalls } from '../../../src/models/backend/native-adam.js';
import { nativeBlas } from '../../../src/models/backend/native-blas.js';
import { selectBackend } from '../../../src/models/backend/select.js';
import { tf } from '../../../src/models/backend/tf.js';
import { setNativeMatMulEnabled } from '../../../src/models/backend/wasm-batch-matmul.js';
import { AdamW } from '../../../src/models/optimizer.js';
import { randomArray } from './fixtures.js';

// The native Adam step (issue #20): the same bits as tfjs' AdamOptimizer on wasm, step after step,
// including a learning-rate change, weight decay, and a state saved by one path and resumed by the other.

const { blas } = nativeBlas();
const SHAPES = [[37, 19], [64], [3, 5, 7], [1]];

function variables(seed: number): tf.Variable[] {
  return SHAPES.map((shape, i) => tf.variable(tf.tensor(randomArray(shape.reduce((a, b) => a * b, 1), seed + i), shape), true));
}

function gradients(step: number): tf.Tensor[] {
  // Mixed scales, and exact zeros, so every branch of the arithmetic is exercised.
  return SHAPES.map((shape, i) => tf.tidy(() => tf.mul(tf.tensor(randomArray(shape.reduce((a, b) => a * b, 1), 100 * step + i), shape), step % 2 === 0 ? 1e-3 : 3)));
}

const bits = (vars: readonly tf.Variable[]) => vars.map((v) => Array.from(new Uint32Array((v.dataSync() as Float32Array).slice().buffer)));

async function train(native: boolean, options: { weightDecay: number; steps: number; from?: { vars: tf.Variable[]; state: Map<string, { name: string; shape: number[]; data: Float32Array }> } }) {
  setNativeMatMulEnabled(native);
  try {
    const vars = options.from?.vars.map((v) => tf.variable(v.clone(), true)) ?? variables(7);
    const adam = new AdamW({ lr: 1e-2, beta1: 0.9, beta2: 0.99, weightDecay: options.weightDecay });
    if (options.from) await adam.setState(options.from.state, vars);
    const callsBefore = nativeAdamCalls();
    for (let step = 0; step < options.steps; step++) {
      if (step === 2) adam.setLearningRate(3e-3);
      const grads = gradients(step + (options.from ? 50 : 0));
      adam.apply(vars, grads);
      tf.dispose(grads);
    }
    const state = new Map((await adam.getState()).map((a) => [a.name, a]));
    return { vars, state, adam, nativeCalls: nativeAdamCalls() - callsBefore };
  } finally {
    setNativeMatMulEnabled(true);
  }
}

describe.runIf(blas !== null)('native Adam (wasm backend)', () => {
  beforeAll(async () => {
    await selectBackend('wasm', { matmul: 'native' });
  });

  for (const weightDecay of [0, 0.1]) {
    it(`gives tfjs' weights and moments bit for bit (weight decay ${weightDecay})`, async () => {
      const native = await train(true, { weightDecay, steps: 5 });
      const reference = await train(false, { weightDecay, steps: 5 });
      expect(native.nativeCalls, 'the native kernel ran for every variable and step').toBe(5 * SHAPES.length);
      expect(reference.nativeCalls).toBe(0);
      expect(bits(native.vars)).toEqual(bits(reference.vars));
      expect([...native.state.keys()]).toEqual([...reference.state.keys()]);
      for (const [name, entry] of native.state) expect(Array.from(entry.data), name).toEqual(Array.from((reference.state.get(name) as { data: Float32Array }).data));
      for (const r of [native, reference]) {
        tf.dispose(r.vars);
        r.adam.dispose();
      }
    });
  }

  it('resumes a state saved by either path: the next steps match bit for bit', async () => {
    const start = await train(false, { weightDecay: 0, steps: 3 });
    const viaNative = await train(true, { weightDecay: 0, steps: 3, from: start });
    const viaTfjs = await train(false, { weightDecay: 0, steps: 3, from: start });
    expect(bits(viaNative.vars)).toEqual(bits(viaTfjs.vars));
    for (const r of [start, viaNative, viaTfjs]) {
      tf.dispose(r.vars);
      r.adam.dispose();
    }
  });

  it('leaks no tensors', async () => {
    const vars = variables(3);
    const adam = new AdamW({ lr: 1e-3 });
    adam.apply(vars, gradients(0)); // creates the moments
    const before = tf.memory().numTensors;
    const grads = gradients(1);
    adam.apply(vars, grads);
    tf.dispose(grads);
    expect(tf.memory().numTensors).toBe(before);
    tf.dispose(vars);
    adam.dispose();
  });
});
