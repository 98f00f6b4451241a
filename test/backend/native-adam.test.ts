import { beforeAll, describe, expect, it } from 'vitest';
import { nativeAdamCalls } from '../../src/backend/native-adam.js';
import { nativeBlas } from '../../src/backend/native-blas.js';
import { selectBackend } from '../../src/backend/select.js';
import { tf } from '../../src/backend/tf.js';
import { setNativeUse } from '../../src/backend/native.js';
import { AdamW } from '../../src/learner/optimizer.js';
import { randomArray } from './fixtures.js';

// The native Adam step (issue #20): the same bits as tfjs' AdamOptimizer on wasm, step after step,
// including a learning-rate change, weight decay, and a state saved by one path and resumed by the other.
// Issue #31: its moments live outside the wasm heap, and the global-norm clip is folded into it.

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

async function train(native: boolean, options: { weightDecay: number; steps: number; scale?: number; from?: { vars: tf.Variable[]; state: Map<string, { name: string; shape: number[]; data: Float32Array }> } }) {
  setNativeUse(native ? 'all' : 'off');
  try {
    const vars = options.from?.vars.map((v) => tf.variable(v.clone(), true)) ?? variables(7);
    const adam = new AdamW({ lr: 1e-2, beta1: 0.9, beta2: 0.99, weightDecay: options.weightDecay });
    if (options.from) await adam.setState(options.from.state, vars);
    const callsBefore = nativeAdamCalls();
    for (let step = 0; step < options.steps; step++) {
      if (step === 2) adam.setLearningRate(3e-3);
      const grads = gradients(step + (options.from ? 50 : 0));
      adam.apply(vars, grads, options.scale);
      tf.dispose(grads);
    }
    const state = new Map((await adam.getState()).map((a) => [a.name, a]));
    return { vars, state, adam, nativeCalls: nativeAdamCalls() - callsBefore };
  } finally {
    setNativeUse('all');
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

  it('folds the global-norm clip in: a scale gives the bits of clipped copies, on either path', async () => {
    const scale = 0.37;
    const folded = await train(true, { weightDecay: 0.1, steps: 4, scale });
    // The reference: tfjs' optimizer on clipped copies made as clipByGlobalNorm makes them.
    setNativeUse('off');
    const vars = variables(7);
    const adam = new AdamW({ lr: 1e-2, beta1: 0.9, beta2: 0.99, weightDecay: 0.1 });
    try {
      for (let step = 0; step < 4; step++) {
        if (step === 2) adam.setLearningRate(3e-3);
        const grads = gradients(step);
        const clipped = grads.map((g) => tf.mul(g, scale));
        adam.apply(vars, clipped);
        tf.dispose([...grads, ...clipped]);
      }
    } finally {
      setNativeUse('all');
    }
    const tfjsScaled = await train(false, { weightDecay: 0.1, steps: 4, scale });
    expect(folded.nativeCalls).toBe(4 * SHAPES.length);
    expect(bits(folded.vars)).toEqual(bits(vars));
    expect(bits(tfjsScaled.vars)).toEqual(bits(vars));
    for (const r of [folded, tfjsScaled]) {
      tf.dispose(r.vars);
      r.adam.dispose();
    }
    tf.dispose(vars);
    adam.dispose();
  });

  it('keeps the moments outside the tensor backend, and moves them between the paths mid-run with the same bits', async () => {
    const vars = variables(9);
    const adam = new AdamW({ lr: 1e-2 });
    const before = tf.memory().numBytes;
    const g0 = gradients(0);
    adam.apply(vars, g0);
    tf.dispose(g0);
    const parameters = SHAPES.reduce((n, s) => n + s.reduce((a, b) => a * b, 1), 0);
    expect(tf.memory().numBytes - before, 'no moment in the heap').toBe(0);
    expect(adam.hostBytes, 'two float32 moments per parameter outside it').toBe(8 * parameters);
    // One step on tfjs' path (the state moves into tfjs variables), then back on the native path.
    setNativeUse('off');
    try {
      const g1 = gradients(1);
      adam.apply(vars, g1, 0.5);
      tf.dispose(g1);
      expect(adam.hostBytes).toBe(0);
      expect(tf.memory().numBytes - before).toBe(8 * parameters);
    } finally {
      setNativeUse('all');
    }
    const g2 = gradients(2);
    adam.apply(vars, g2);
    tf.dispose(g2);
    expect(tf.memory().numBytes - before).toBe(0);
    // The same three steps on tfjs' path alone.
    setNativeUse('off');
    const reference = variables(9);
    const tfjs = new AdamW({ lr: 1e-2 });
    try {
      for (const [step, scale] of [[0, 1], [1, 0.5], [2, 1]] as const) {
        const g = gradients(step);
        tfjs.apply(reference, g, scale);
        tf.dispose(g);
      }
    } finally {
      setNativeUse('all');
    }
    expect(bits(vars)).toEqual(bits(reference));
    const [a, b] = [await adam.getState(), await tfjs.getState()];
    expect(a.map((x) => [x.name, x.shape, Array.from(x.data)])).toEqual(b.map((x) => [x.name, x.shape, Array.from(x.data)]));
    tf.dispose([...vars, ...reference]);
    adam.dispose();
    tfjs.dispose();
  });

  it('refuses a scale outside [0, 1], naming it', () => {
    const vars = variables(1);
    const adam = new AdamW({ lr: 1e-3 });
    const grads = gradients(0);
    expect(() => adam.apply(vars, grads, -0.5)).toThrow(/scale/);
    expect(() => adam.apply(vars, grads, Number.NaN)).toThrow(/scale/);
    expect(() => adam.apply(vars, grads, 1.5)).toThrow(/scale/);
    tf.dispose([...vars, ...grads]);
    adam.dispose();
  });
});
