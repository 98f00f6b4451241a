import { beforeAll, describe, expect, it } from 'vitest';
import { selectBackend } from '../../../src/models/backend/select.js';
import { tf } from '../../../src/models/backend/tf.js';
import {
  batchMatMulTransposeCacheHits,
  reroutedBatchMatMulCalls,
  SHIM_MIN_MACS_PER_ITEM,
  setBatchMatMulShimEnabled,
} from '../../../src/models/backend/wasm-batch-matmul.js';
import { segmentSumRows } from '../../../src/models/backend/wasm-unsorted-segment-sum.js';

// Tensors belong to the backend they were made on, so every case builds its inputs from plain
// arrays inside `onBackend` and returns plain arrays.

/** Deterministic uniform(-1, 1) values (mulberry32). */
function randomArray(n: number, seed: number): Float32Array {
  let s = seed >>> 0;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    out[i] = ((t ^ (t >>> 14)) >>> 0) / 2147483648 - 1;
  }
  return out;
}

const size = (shape: readonly number[]) => shape.reduce((p, d) => p * d, 1);

async function onBackend<T>(name: 'cpu' | 'wasm', fn: () => T): Promise<T> {
  await tf.setBackend(name);
  return fn();
}

function maxRelDiff(got: ArrayLike<number>, want: ArrayLike<number>): number {
  expect(got.length).toBe(want.length);
  let scale = 1;
  for (let i = 0; i < want.length; i++) scale = Math.max(scale, Math.abs(want[i]));
  let diff = 0;
  for (let i = 0; i < want.length; i++) diff = Math.max(diff, Math.abs(got[i] - want[i]));
  return diff / scale;
}

beforeAll(async () => {
  const info = await selectBackend('wasm');
  expect(info.name).toBe('wasm');
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

interface MatmulCase {
  readonly label: string;
  readonly a: number[];
  readonly b: number[];
  readonly transposeA: boolean;
  readonly transposeB: boolean;
  /** Whether the wrapper should take the rerouted path (false: stock kernel). */
  readonly rerouted: boolean;
}

const cases: MatmulCase[] = [
  { label: 'NN rank 2 (stock XNNPACK path)', a: [64, 96], b: [96, 80], transposeA: false, transposeB: false, rerouted: false },
  { label: 'TN rank 2', a: [96, 64], b: [96, 80], transposeA: true, transposeB: false, rerouted: true },
  { label: 'NT rank 2', a: [64, 96], b: [80, 96], transposeA: false, transposeB: true, rerouted: true },
  { label: 'NT rank 3 (attention scores)', a: [4, 64, 32], b: [4, 48, 32], transposeA: false, transposeB: true, rerouted: true },
  { label: 'TT rank 3', a: [2, 64, 40], b: [2, 50, 64], transposeA: true, transposeB: true, rerouted: true },
  { label: 'TN rank 4', a: [2, 3, 32, 40], b: [2, 3, 32, 50], transposeA: true, transposeB: false, rerouted: true },
  { label: 'NN rank 3 x broadcast rank-2 b (flattened)', a: [5, 40, 64], b: [64, 48], transposeA: false, transposeB: false, rerouted: true },
  { label: 'NT rank 3 x broadcast b (tied head)', a: [3, 50, 64], b: [70, 64], transposeA: false, transposeB: true, rerouted: true },
  { label: 'NN broadcast rank-2 a x rank 3 b', a: [40, 64], b: [4, 64, 48], transposeA: false, transposeB: false, rerouted: true },
  { label: 'NN rank 4 x broadcast rank-4 b', a: [2, 3, 40, 64], b: [1, 1, 64, 48], transposeA: false, transposeB: false, rerouted: true },
  { label: 'small rank 3 (below threshold, stock)', a: [3, 4, 5], b: [3, 5, 6], transposeA: false, transposeB: false, rerouted: false },
  { label: 'small NT (below threshold, stock)', a: [8, 1, 32], b: [8, 20, 32], transposeA: false, transposeB: true, rerouted: false },
  { label: 'large TN [1024x128]^T', a: [128, 1024], b: [128, 128], transposeA: true, transposeB: false, rerouted: true },
];

describe('wasm BatchMatMul rerouting', () => {
  it.each(cases)('matches cpu: $label', async (c) => {
    const aData = randomArray(size(c.a), 11);
    const bData = randomArray(size(c.b), 13);
    const run = () =>
      tf.tidy(() => {
        const out = tf.matMul(tf.tensor(aData, c.a), tf.tensor(bData, c.b), c.transposeA, c.transposeB);
        return { shape: out.shape, data: Array.from(out.dataSync()) };
      });
    const want = await onBackend('cpu', run);
    await tf.setBackend('wasm');
    const idsBefore = tf.engine().backend.numDataIds();
    const callsBefore = reroutedBatchMatMulCalls();
    const got = run();
    expect(reroutedBatchMatMulCalls() - callsBefore).toBe(c.rerouted ? 1 : 0);
    expect(tf.engine().backend.numDataIds()).toBe(idsBefore); // no leaked temporaries
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
  // Embedding gather -> attention-like batched matmuls -> tied head -> softmax cross-entropy.
  const vocab = 40;
  const dim = 64;
  const batch = 2;
  const time = 24;
  const tokens = Int32Array.from({ length: batch * time }, (_, i) => (i * 17 + 3) % vocab);
  const targets = Int32Array.from({ length: batch * time }, (_, i) => (i * 29 + 1) % vocab);
  const params = { wte: randomArray(vocab * dim, 21), wq: randomArray(dim * dim, 22), wk: randomArray(dim * dim, 23), wv: randomArray(dim * dim, 24) };

  function lossAndGrads(): { loss: number; grads: Record<string, number[]> } {
    return tf.tidy(() => {
      const wte = tf.tensor2d(params.wte, [vocab, dim]);
      const wq = tf.tensor2d(params.wq, [dim, dim]).mul(0.1);
      const wk = tf.tensor2d(params.wk, [dim, dim]).mul(0.1);
      const wv = tf.tensor2d(params.wv, [dim, dim]).mul(0.1);
      const ids = tf.tensor2d(tokens, [batch, time], 'int32');
      const labels = tf.oneHot(tf.tensor1d(targets, 'int32'), vocab);
      const f = (e: tf.Tensor, q: tf.Tensor, k: tf.Tensor, v: tf.Tensor): tf.Scalar => {
        // tfjs's matMul gradient does not reduce broadcast batch dims, so project as [B*T, D].
        const x2 = tf.gather(e, ids.reshape([batch * time])) as tf.Tensor2D; // [B*T, D]
        const x = x2.reshape([batch, time, dim]);
        const qx = tf.matMul(x2, q as tf.Tensor2D).reshape([batch, time, dim]);
        const kx = tf.matMul(x2, k as tf.Tensor2D).reshape([batch, time, dim]);
        const vx = tf.matMul(x2, v as tf.Tensor2D).reshape([batch, time, dim]);
        const att = tf.softmax(tf.matMul(qx, kx, false, true).div(Math.sqrt(dim))); // [B, T, T]
        const h = tf.matMul(att, vx).add(x); // [B, T, D]
        const logits = tf.matMul(h.reshape([batch * time, dim]), e, false, true); // tied head
        return tf.losses.softmaxCrossEntropy(labels, logits) as tf.Scalar;
      };
      const { value, grads } = tf.valueAndGrads(f)([wte, wq, wk, wv]);
      const names = ['wte', 'wq', 'wk', 'wv'];
      return {
        loss: value.dataSync()[0],
        grads: Object.fromEntries(grads.map((g, i) => [names[i], Array.from(g.dataSync())])),
      };
    });
  }

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
