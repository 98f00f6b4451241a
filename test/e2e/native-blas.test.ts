import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { InvalidConfigError } from '../../src/core/errors.js';
import { ADDON_PATH, nativeBlas } from '../../src/backend/native-blas.js';
import { nativeLossHeadCalls } from '../../src/backend/native-log-softmax.js';
import { describeBackend, selectBackend } from '../../src/backend/select.js';
import { tf } from '../../src/backend/tf.js';
import { setNativeUse } from '../../src/backend/native.js';
import { nativeBatchMatMulCalls, reroutedBatchMatMulCalls } from '../../src/backend/wasm-batch-matmul.js';
import { MASK_VALUE, targetLogProbsAndEntropy } from '../../src/models/transformer/layers.js';
import { lossAndGrads, matmulCases, matmulOnCpuAndWasm, maxRelDiff, onBackend, randomArray } from '../backend/fixtures.js';

// The optional native matmul path. CI installs a C compiler and OpenBLAS, so there it must load;
// elsewhere, a machine without it must say why and refuse `model.matmul: native`.
const { blas, why } = nativeBlas();

describe('native BLAS availability', () => {
  it(blas === null ? `is unavailable here and says why: ${why}` : `is loaded from ${blas.library}`, async () => {
    if (process.env.CI === 'true') expect(blas, `CI installs g++ and libopenblas0-pthread: ${why}`).not.toBeNull();
    if (blas === null) {
      expect(why.length).toBeGreaterThan(10);
      await expect(selectBackend('wasm', { matmul: 'native' })).rejects.toThrow(InvalidConfigError);
      await expect(selectBackend('wasm', { matmul: 'native' })).rejects.toThrow(/model\.matmul/);
      return;
    }
    const info = await selectBackend('wasm', { matmul: 'native' });
    expect(info.matmul).toMatch(/^native BLAS lib\S+( \(\w+ kernels\))?, \d+ threads?$/);
    expect(describeBackend(info)).toContain(', matmul: native BLAS');
  });
});

describe('the native addon without a BLAS library', () => {
  it(existsSync(ADDON_PATH) ? 'names every library it tried' : `is not built here: ${why}`, () => {
    if (!existsSync(ADDON_PATH)) {
      expect(why).toMatch(/addon not built|TURNWISE_NATIVE_BLAS=off/);
      return;
    }
    // A fresh process, so that no library is open yet.
    const script = `const a = require(${JSON.stringify(`${process.cwd()}/${ADDON_PATH}`)}); try { a.open(['libturnwise-none.so.9', 'libm.so.6']); } catch (e) { console.log(e.message); process.exit(3); }`;
    const run = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    expect(run.status).toBe(3);
    expect(run.stdout).toContain('no CBLAS library could be opened');
    expect(run.stdout).toContain('libturnwise-none.so.9 (not found)');
    expect(run.stdout).toContain('libm.so.6 (no cblas_sgemm)');
  });
});

describe.runIf(blas !== null)('native BLAS BatchMatMul (wasm backend)', () => {
  beforeAll(async () => {
    await selectBackend('wasm', { matmul: 'native' });
  });

  it.each(matmulCases)('matches cpu and takes the native path: $label', async (c) => {
    const { want, got, leakedIds, deltas } = await matmulOnCpuAndWasm(c, { native: nativeBatchMatMulCalls, rerouted: reroutedBatchMatMulCalls });
    expect(deltas).toEqual({ native: 1, rerouted: 0 });
    expect(leakedIds).toBe(0);
    expect(got.shape).toEqual(want.shape);
    expect(maxRelDiff(got.data, want.data)).toBeLessThan(1e-5);
  });

  it('gives the same loss and gradients as cpu on a tiny model (within 1e-5)', async () => {
    const want = await onBackend('cpu', lossAndGrads);
    const before = nativeBatchMatMulCalls();
    const got = await onBackend('wasm', lossAndGrads);
    expect(nativeBatchMatMulCalls() - before).toBeGreaterThanOrEqual(10); // forward and backward products
    expect(Math.abs(got.loss - want.loss)).toBeLessThan(1e-5);
    for (const name of Object.keys(want.grads)) expect(maxRelDiff(got.grads[name] as number[], want.grads[name] as number[]), name).toBeLessThan(1e-5);
  });

  it('repeats a product bit for bit at a fixed thread count, agrees across thread counts, and falls back to wasm when turned off', async () => {
    const lib = blas!;
    const threads = lib.threads();
    await tf.setBackend('wasm');
    const a = randomArray(256 * 96, 3);
    const b = randomArray(96 * 320, 4);
    const product = () => tf.tidy(() => tf.matMul(tf.tensor2d(a, [256, 96]), tf.tensor2d(b, [96, 320])).dataSync() as Float32Array);
    const same = (x: Float32Array, y: Float32Array) => x.length === y.length && x.every((v, i) => Object.is(v, y[i]));
    try {
      lib.setThreads(1);
      const one = product();
      expect(same(product(), one)).toBe(true);
      lib.setThreads(2);
      const two = product();
      expect(same(product(), two)).toBe(true);
      // OpenBLAS splits the work differently with 2 threads: the same up to rounding, not bit for bit.
      expect(maxRelDiff(two, one)).toBeLessThan(1e-5);
      setNativeUse('off');
      const before = nativeBatchMatMulCalls();
      const wasm = product();
      expect(nativeBatchMatMulCalls()).toBe(before);
      expect(maxRelDiff(wasm, one)).toBeLessThan(1e-5);
    } finally {
      setNativeUse('all');
      lib.setThreads(threads);
    }
  });

  it('computes the loss head natively with the tfjs form\'s values and gradients, masked logits included', async () => {
    await tf.setBackend('wasm');
    const n = 37;
    const v = 61;
    const raw = randomArray(n * v, 9).map((x) => 4 * x);
    for (let i = 0; i < n * v; i += 7) raw[i] = (raw[i] as number) + MASK_VALUE; // constrained-out tokens
    const targetIds = Int32Array.from({ length: n }, (_, i) => (i * 11 + 1) % v);
    for (let i = 0; i < n; i++) if ((i * v + (targetIds[i] as number)) % 7 === 0) targetIds[i] = ((targetIds[i] as number) + 1) % v; // targets stay allowed
    const weights = randomArray(2 * n, 10);
    const run = () => {
      const initial = tf.tensor2d(raw, [n, v]);
      const z = tf.variable(initial);
      initial.dispose();
      try {
        const { value, grads } = tf.variableGrads(() => tf.sum(tf.mul(targetLogProbsAndEntropy(z, targetIds), tf.tensor2d(weights, [2, n]))) as tf.Scalar, [z]);
        const out = { loss: value.dataSync()[0] as number, grad: Array.from(grads[z.name]?.dataSync() ?? []) };
        tf.dispose([value, ...Object.values(grads)]);
        return out;
      } finally {
        z.dispose();
      }
    };
    const tensorsBefore = tf.memory().numTensors;
    const callsBefore = nativeLossHeadCalls();
    const native = run();
    expect(nativeLossHeadCalls() - callsBefore, 'the native kernels ran').toBe(1);
    expect(tf.memory().numTensors, 'native leak').toBe(tensorsBefore);
    setNativeUse('off'); // the tfjs form
    let tfjs: ReturnType<typeof run>;
    try {
      tfjs = run();
    } finally {
      setNativeUse('all');
    }
    expect(nativeLossHeadCalls() - callsBefore, 'the tfjs form ran').toBe(1);
    expect(tf.memory().numTensors, 'tfjs leak').toBe(tensorsBefore);
    expect(Math.abs(native.loss - tfjs.loss)).toBeLessThan(1e-4);
    expect(maxRelDiff(native.grad, tfjs.grad)).toBeLessThan(1e-5);
    expect(native.grad.filter((_, i) => i % 7 === 0).every((g) => g === 0)).toBe(true); // masked logits get no gradient
  });

  it('rejects operands shorter than the shapes say, naming the operand', () => {
    const lib = blas!;
    const ok = new Float32Array(12);
    expect(() => lib.sgemmBatch(new Float32Array(5), ok, ok, 1, 1, 1, 2, 2, 3, false, false)).toThrow(/a is shorter than batchA \* m \* k/);
    expect(() => lib.sgemmBatch(ok, ok, new Float32Array(3), 1, 1, 1, 2, 2, 3, false, false)).toThrow(/c is shorter/);
    expect(() => lib.sgemmBatch(ok, ok, ok, 1, 1, 1, 0, 2, 3, false, false)).toThrow(/positive integers/);
    expect(() => lib.sgemmBatch([1, 2] as unknown as Float32Array, ok, ok, 1, 1, 1, 1, 1, 1, false, false)).toThrow(/a must be a Float32Array/);
    // A hand-computed product: [[1,2,3],[4,5,6]] x [[1,0],[0,1],[1,1]] = [[4,5],[10,11]].
    const c = new Float32Array(4);
    lib.sgemmBatch(new Float32Array([1, 2, 3, 4, 5, 6]), new Float32Array([1, 0, 0, 1, 1, 1]), c, 1, 1, 1, 2, 2, 3, false, false);
    expect(Array.from(c)).toEqual([4, 5, 10, 11]);
    expect(() => lib.logSoftmaxStats(new Float32Array(6), new Int32Array([0, 5]), new Float32Array(4), new Float32Array(2), new Float32Array(6), 2, 3)).toThrow(/target id is outside/);
    expect(() => lib.logSoftmaxStats(new Float32Array(5), new Int32Array(2), new Float32Array(4), new Float32Array(2), new Float32Array(6), 2, 3)).toThrow(/shorter than n and v/);
  });
});
