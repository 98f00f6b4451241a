/**
 * Shared fixtures of the backend tests: seeded inputs, a cpu-vs-wasm runner, the BatchMatMul
 * shape cases and a tiny model whose loss and gradients exercise every matmul form.
 */
import { expect } from 'vitest';
import { setNativeUse } from '../../src/backend/native.js';
import { tf } from '../../src/backend/tf.js';
import type { Rng } from '../../src/core/rng.js';
import type { TrainBatch } from '../../src/models/train-batch.js';
import type { TransformerModel } from '../../src/models/transformer/model.js';

// Tensors belong to the backend they were made on, so every case builds its inputs from plain
// arrays inside `onBackend` and returns plain arrays.

/** Deterministic uniform(-1, 1) values (mulberry32). */
export function randomArray(n: number, seed: number): Float32Array {
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

export const size = (shape: readonly number[]) => shape.reduce((p, d) => p * d, 1);

export async function onBackend<T>(name: 'cpu' | 'wasm', fn: () => T): Promise<T> {
  await tf.setBackend(name);
  return fn();
}

export function maxRelDiff(got: ArrayLike<number>, want: ArrayLike<number>): number {
  expect(got.length).toBe(want.length);
  let scale = 1;
  for (let i = 0; i < want.length; i++) scale = Math.max(scale, Math.abs(want[i]));
  let diff = 0;
  for (let i = 0; i < want.length; i++) diff = Math.max(diff, Math.abs(got[i] - want[i]));
  return diff / scale;
}


export interface MatmulCase {
  readonly label: string;
  readonly a: number[];
  readonly b: number[];
  readonly transposeA: boolean;
  readonly transposeB: boolean;
  /** Whether the wrapper should take the rerouted path (false: stock kernel). */
  readonly rerouted: boolean;
}

export const matmulCases: MatmulCase[] = [
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
  // One row (a decode step at batch 1): the native path runs these as matrix-vector products.
  { label: 'one row NN (a decode projection)', a: [1, 576], b: [576, 96], transposeA: false, transposeB: false, rerouted: false },
  { label: 'one row NT (a tied LM head)', a: [1, 64], b: [300, 64], transposeA: false, transposeB: true, rerouted: false },
  { label: 'one row TN, batched', a: [3, 128, 1], b: [3, 128, 40], transposeA: true, transposeB: false, rerouted: false },
];

// The tiny model: embedding gather -> attention-like batched matmuls -> tied head -> softmax cross-entropy.
const vocab = 40;
const dim = 64;
const batch = 2;
const time = 24;
const tokens = Int32Array.from({ length: batch * time }, (_, i) => (i * 17 + 3) % vocab);
const targets = Int32Array.from({ length: batch * time }, (_, i) => (i * 29 + 1) % vocab);
const params = { wte: randomArray(vocab * dim, 21), wq: randomArray(dim * dim, 22), wk: randomArray(dim * dim, 23), wv: randomArray(dim * dim, 24) };

/** The tiny model's loss and gradients, as plain arrays. */
export function lossAndGrads(): { loss: number; grads: Record<string, number[]> } {
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


/** One matmul case on cpu and on wasm: both results, how many wasm data ids it left behind, and the wasm call's counter deltas. */
export async function matmulOnCpuAndWasm(
  c: MatmulCase,
  counters: Record<string, () => number>,
): Promise<{ want: { shape: number[]; data: number[] }; got: { shape: number[]; data: number[] }; leakedIds: number; deltas: Record<string, number> }> {
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
  const before = Object.fromEntries(Object.entries(counters).map(([k, f]) => [k, f()]));
  const got = run();
  const deltas = Object.fromEntries(Object.entries(counters).map(([k, f]) => [k, f() - (before[k] as number)]));
  return { want, got, leakedIds: tf.engine().backend.numDataIds() - idsBefore, deltas };
}

/** A training batch of random ids where every position is a target. */
export function randomTrainBatch(vocabSize: number, batchSize: number, seqLen: number, rng: Rng, attentionMask?: Uint8Array): TrainBatch {
  const n = batchSize * seqLen;
  return {
    batchSize,
    seqLen,
    inputIds: Int32Array.from({ length: n }, () => rng.int(vocabSize)),
    attentionMask: attentionMask ?? new Uint8Array(n).fill(1),
    targetPositions: Int32Array.from({ length: n }, (_, i) => i),
    targetIds: Int32Array.from({ length: n }, () => rng.int(vocabSize)),
    allowedOffsets: null,
    allowedIds: null,
  };
}

/** A model's mean negative log-likelihood on `batch` and its gradients (trainable variables' order), with the native kernels on or off. */
export function lossAndGradients(model: TransformerModel, batch: TrainBatch, native: boolean): { loss: number; grads: Float32Array[] } {
  setNativeUse(native ? 'all' : 'off');
  try {
    const { value, grads } = tf.variableGrads(() => tf.neg(tf.mean(model.forwardTrain(batch, 1).logprobs)) as tf.Scalar, model.trainableVariables());
    const out = { loss: value.dataSync()[0] as number, grads: model.trainableVariables().map((v) => (grads[v.name] as tf.Tensor).dataSync().slice() as Float32Array) };
    tf.dispose([value, ...Object.values(grads)]);
    return out;
  } finally {
    setNativeUse('all');
  }
}
