import { beforeAll, describe, expect, it } from 'vitest';
import { selectBackend } from '../../src/backend/select.js';
import { tf } from '../../src/backend/tf.js';
import {
  batchMatMulTransposeCacheHits,
  reroutedBatchMatMulCalls,
  SHIM_MIN_MACS_PER_ITEM,
  setBatchMatMulShimEnabled,
} from '../../src/backend/wasm-batch-matmul.js';
import { segmentSumRows } from '../../src/backend/wasm-unsorted-segment-sum.js';
import { lossAndGrads, matmulCases as cases, matmulOnCpuAndWasm, maxRelDiff, onBackend, randomArray, size } from './fixtures.js';

beforeAll(async () => {
  // The XNNPACK rerouting is what these tests check: keep the native BLAS path out of it.
  const info = await selectBackend('wasm', { matmul: 'wasm' });
  expect(info.name).toBe('wasm');
  expect(info.matmul).toBe('wasm (requested)');
});

describe('wasm UnsortedSegmentSum shim', () => {
  it('sums rows like the cpu backend on random inputs, dropping out-of-range ids', async () => {
    const rows = 37;
    const inner = [3, 5];
    const numSegments = 11;
    const x = randomArray(rows * size(inner), 7);
    const ids = Int32Array.from({ length: rows }, (_, i) => ((i * 7919) % 13) - 1); // includes -1, 11, 12
    const run = () =>
      tf.tidy(() => {
        const t = tf.unsortedSegmentSum(tf.tensor(x, [rows, ...inner]), tf.tensor1d(ids, 'int32'), numSegments);
        return { shape: t.shape, data: Array.from(t.dataSync()) };
      });
    const want = await onBackend('cpu', run);
    const got = await onBackend('wasm', run);
    expect(got.shape).toEqual([numSegments, ...inner]);
    expect(maxRelDiff(got.data, want.data)).toBeLessThan(1e-6);
  });

  it('zeroes its output in the heap: segments no id reaches are 0 even where freed tensors left values', () => {
    const got = tf.tidy(() => {
      // A freed tensor of the output's size: the allocator hands its bytes to the next allocation.
      tf.fill([64, 32], 7).dataSync();
      return Array.from(tf.unsortedSegmentSum(tf.ones([2, 32]), tf.tensor1d([5, 5], 'int32'), 64).dataSync());
    });
    expect(got.filter((v) => v !== 0).length).toBe(32); // segment 5 only
    expect(got.slice(5 * 32, 6 * 32)).toEqual(new Array(32).fill(2));
  });

  it('has a plain-array reference that matches a hand-computed case', () => {
    expect(Array.from(segmentSumRows(new Float32Array([1, 2, 3, 4, 5, 6]), new Int32Array([1, 1, 0]), 2, 2))).toEqual([5, 6, 4, 6]);
  });

  it('makes tf.gather differentiable on wasm', async () => {
    const table = randomArray(6 * 4, 3);
    const ids = [0, 5, 5, 2];
    const run = () =>
      tf.tidy(() => {
        const g = tf.grad((w: tf.Tensor) => tf.gather(w, tf.tensor1d(ids, 'int32')).square().sum())(tf.tensor2d(table, [6, 4]));
        return Array.from(g.dataSync());
      });
    const want = await onBackend('cpu', run);
    const got = await onBackend('wasm', run);
    expect(maxRelDiff(got, want)).toBeLessThan(1e-6);
  });
});

describe('wasm BatchMatMul rerouting', () => {
  it.each(cases)('matches cpu: $label', async (c) => {
    const { want, got, leakedIds, deltas } = await matmulOnCpuAndWasm(c, { rerouted: reroutedBatchMatMulCalls });
    expect(deltas.rerouted).toBe(c.rerouted ? 1 : 0);
    expect(leakedIds).toBe(0); // no leaked temporaries
    expect(got.shape).toEqual(want.shape);
    expect(maxRelDiff(got.data, want.data)).toBeLessThan(1e-4);
  });

  it('uses the stock kernel when disabled, with the same result', async () => {
    await tf.setBackend('wasm');
    const a = randomArray(4 * 64 * 32, 5);
    const b = randomArray(4 * 48 * 32, 6);
    const run = () => tf.tidy(() => Array.from(tf.matMul(tf.tensor(a, [4, 64, 32]), tf.tensor(b, [4, 48, 32]), false, true).dataSync()));
    const shim = run();
    setBatchMatMulShimEnabled(false);
    try {
      const before = reroutedBatchMatMulCalls();
      const stock = run();
      expect(reroutedBatchMatMulCalls()).toBe(before);
      expect(maxRelDiff(shim, stock)).toBeLessThan(1e-5);
    } finally {
      setBatchMatMulShimEnabled(true);
    }
  });

  it('stays correct when its own allocations grow the wasm heap', async () => {
    await tf.setBackend('wasm');
    const heap = () => (tf.backend() as unknown as { wasm: { HEAPU8: Uint8Array } }).wasm.HEAPU8.buffer.byteLength;
    // Size the output to exceed the current heap, so allocating it must grow (and detach) the heap.
    const batch = 2;
    const m = 1024;
    const k = 64;
    const n = (Math.ceil(heap() / (batch * m * 4) / k) + 1) * k;
    const aData = randomArray(batch * m * k, 31);
    // b[i][kk][j] = (i + 1) when kk === j % k, so out[i][r][j] = (i + 1) * a[i][r][j % k].
    const bData = new Float32Array(batch * k * n);
    for (let i = 0; i < batch; i++) for (let j = 0; j < n; j++) bData[(i * k + (j % k)) * n + j] = i + 1;
    const a = tf.tensor3d(aData, [batch, m, k]);
    const b = tf.tensor3d(bData, [batch, k, n]);
    const heapBefore = heap();
    const callsBefore = reroutedBatchMatMulCalls();
    const out = tf.matMul(a, b);
    expect(reroutedBatchMatMulCalls() - callsBefore).toBe(1);
    expect(heap()).toBeGreaterThan(heapBefore);
    const got = out.dataSync();
    tf.dispose([a, b, out]);
    let diff = 0;
    for (let i = 0; i < batch; i++)
      for (let r = 0; r < m; r++)
        for (let j = 0; j < n; j++) diff = Math.max(diff, Math.abs(got[(i * m + r) * n + j] - (i + 1) * aData[(i * m + r) * k + (j % k)]));
    expect(diff).toBe(0);
  });

  it('reuses the transpose of an input shared by several weight gradients, and not of a reshaped view', async () => {
    // y = x·Wq + x·Wk + x·Wv: backprop forms x^T·dy three times for the same x.
    const x = randomArray(96 * 40, 11);
    const ws = [12, 13, 14].map((seed) => randomArray(40 * 48, seed));
    const run = () =>
      tf.tidy(() => {
        const xt = tf.tensor2d(x, [96, 40]);
        const f = (a: tf.Tensor, b: tf.Tensor, c: tf.Tensor) => tf.addN([a, b, c].map((w) => tf.matMul(xt, w as tf.Tensor2D))).square().sum() as tf.Scalar;
        const grads = tf.grads(f)(ws.map((w) => tf.tensor2d(w, [40, 48])));
        // The same data as another [k, m] view: must not hit the [96, 40] entry.
        const view = tf.matMul(tf.reshape(xt, [80, 48]), tf.tensor2d(randomArray(80 * 40, 15), [80, 40]), true, false);
        return [...grads, view].map((g) => Array.from(g.dataSync()));
      });
    const want = await onBackend('cpu', run);
    const hits = batchMatMulTransposeCacheHits();
    const got = await onBackend('wasm', run);
    expect(batchMatMulTransposeCacheHits() - hits).toBe(2); // 3 weight gradients, 1 transpose
    got.forEach((g, i) => {
      expect(maxRelDiff(g, want[i])).toBeLessThan(1e-5);
    });
  });

  it('keeps the documented threshold', () => {
    expect(SHIM_MIN_MACS_PER_ITEM).toBe(32_768);
  });
});

describe('cpu vs wasm gradients of a tiny model', () => {
  it('gives the same loss and gradients on cpu and on wasm with both shims (within 1e-5)', async () => {
    const want = await onBackend('cpu', lossAndGrads);
    const callsBefore = reroutedBatchMatMulCalls();
    const got = await onBackend('wasm', lossAndGrads);
    expect(reroutedBatchMatMulCalls()).toBeGreaterThan(callsBefore); // the shim really ran
    expect(Math.abs(got.loss - want.loss)).toBeLessThan(1e-5);
    for (const name of Object.keys(want.grads)) {
      let diff = 0;
      for (let i = 0; i < want.grads[name].length; i++) diff = Math.max(diff, Math.abs(got.grads[name][i] - want.grads[name][i]));
      expect(diff, name).toBeLessThan(1e-5);
    }
  });
});
