import { afterEach, describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.js';
import { nativeBlas } from '../../src/backend/native-blas.js';
import { selectBackend } from '../../src/backend/select.js';
import { tf } from '../../src/backend/tf.js';
import { chunkedTargetStats, HEAD_CHUNK_BYTES, headChunkRows, setHeadChunkBytes } from '../../src/models/transformer/chunked-head.js';
import { targetLogProbsAndEntropy } from '../../src/models/transformer/layers.js';
import { type TransformerConfig, TransformerModel } from '../../src/models/transformer/model.js';

// The chunked loss head (issue #31): the values and gradients of the whole head, a chunk of rows at
// a time, on both backends; and a model's training forward through it.

const backends = nativeBlas().blas !== null ? (['cpu', 'wasm'] as const) : (['cpu'] as const);

function wholeStats(x: tf.Tensor2D, w: tf.Tensor2D, tied: boolean, targets: Int32Array, temperature: number, additive: tf.Tensor1D | null): tf.Tensor2D {
  let z = tied ? tf.matMul(x, w, false, true) : tf.matMul(x, w);
  if (temperature !== 1) z = tf.div(z, temperature);
  if (additive !== null) z = tf.add(z, additive);
  return targetLogProbsAndEntropy(z as tf.Tensor2D, targets);
}

const maxDiff = (a: Float32Array, b: Float32Array) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - (b[i] as number))), 0);

afterEach(() => setHeadChunkBytes(HEAD_CHUNK_BYTES));

describe('chunkedTargetStats', () => {
  for (const backend of backends) {
    for (const tied of [true, false]) {
      it(`gives the whole head's values, and its gradients to float rounding (${backend}, ${tied ? 'tied' : 'untied'}, T 0.7, masked ids)`, async () => {
        await selectBackend(backend, { matmul: backend === 'wasm' ? 'native' : 'auto' });
        const rng = Rng.fromSeed(3);
        const [n, d, v] = [23, 12, 37];
        const x = tf.variable(tf.tensor2d(Float32Array.from({ length: n * d }, () => rng.normal()), [n, d]));
        const w = tf.variable(tf.tensor2d(Float32Array.from({ length: v * d }, () => rng.normal() * 0.3), tied ? [v, d] : [d, v]));
        const targets = Int32Array.from({ length: n }, () => rng.int(v - 3));
        const mask = new Float32Array(v);
        mask.fill(-1e9, v - 3);
        const additive = tf.tensor1d(mask);
        const upstream = tf.tensor2d(Float32Array.from({ length: 2 * n }, () => rng.normal()), [2, n]);
        const run = (f: () => tf.Tensor2D) => tf.variableGrads(() => tf.sum(tf.mul(f(), upstream)) as tf.Scalar, [x, w]);
        const whole = run(() => wholeStats(x, w, tied, targets, 0.7, additive));
        const wholeValue = (await wholeStats(x, w, tied, targets, 0.7, additive).data()) as Float32Array;
        const head = { weight: w, tied, temperature: 0.7, additive };
        const chunked = run(() => chunkedTargetStats(x, targets, head, 5)); // 5 chunks, the last of 3 rows
        const chunkedValue = (await chunkedTargetStats(x, targets, head, 5).data()) as Float32Array;
        expect(maxDiff(chunkedValue, wholeValue)).toBeLessThan(1e-6);
        for (const v of [x, w]) {
          const a = (await (chunked.grads[v.name] as tf.Tensor).data()) as Float32Array;
          const b = (await (whole.grads[v.name] as tf.Tensor).data()) as Float32Array;
          expect(maxDiff(a, b), `gradient of ${v === x ? 'x' : 'w'}`).toBeLessThan(1e-5);
        }
        // A frozen head weight gets no gradient (and is not an input of the chunked op).
        w.trainable = false;
        const frozen = tf.variableGrads(() => tf.sum(tf.mul(chunkedTargetStats(x, targets, head, 4), upstream)) as tf.Scalar, [x]);
        expect(maxDiff((await frozen.grads[x.name]?.data()) as Float32Array, (await (whole.grads[x.name] as tf.Tensor).data()) as Float32Array)).toBeLessThan(1e-5);
        tf.dispose([x, w, additive, upstream, whole.value, chunked.value, frozen.value, ...Object.values(whole.grads), ...Object.values(chunked.grads), ...Object.values(frozen.grads)]);
      });
    }
  }

  it('sizes chunks to the byte budget', () => {
    expect(headChunkRows(151936)).toBe(Math.floor(HEAD_CHUNK_BYTES / (12 * 151936)));
    expect(headChunkRows(10, 12 * 10 * 7)).toBe(7);
    expect(headChunkRows(10 ** 9, 1)).toBe(1);
  });
});

describe("a model's training forward with a chunked head", () => {
  const shape: TransformerConfig = { vocabSize: 61, dModel: 16, nLayers: 2, nHeads: 4, nKvHeads: 2, ffnHidden: 40, maxContext: 32, ropeTheta: 10000, rmsNormEps: 1e-5, tieEmbeddings: true };
  for (const backend of backends) {
    it(`gives the same log-probs, entropies and gradients as the whole head (${backend}, tied, full fine-tuning)`, async () => {
      await selectBackend(backend, { matmul: backend === 'wasm' ? 'native' : 'auto' });
      const model = new TransformerModel(shape, Rng.fromSeed(2));
      model.restrictOutputs(57);
      const rng = Rng.fromSeed(8);
      const [b, t] = [3, 9];
      const batch = {
        batchSize: b,
        seqLen: t,
        inputIds: Int32Array.from({ length: b * t }, () => rng.int(57)),
        attentionMask: new Uint8Array(b * t).fill(1),
        targetPositions: Int32Array.from({ length: b * t }, (_, i) => i),
        targetIds: Int32Array.from({ length: b * t }, () => rng.int(57)),
        allowedOffsets: null,
        allowedIds: null,
      };
      const step = () =>
        tf.variableGrads(() => {
          const { logprobs, entropy } = model.forwardTrain(batch, 1);
          return tf.add(tf.sum(logprobs), tf.mul(tf.sum(entropy), 0.3)) as tf.Scalar;
        });
      const whole = step();
      setHeadChunkBytes(12 * shape.vocabSize * 4); // chunks of 4 rows: 27 targets in 7 chunks
      const chunked = step();
      expect(Math.abs((await chunked.value.data())[0] - (await whole.value.data())[0])).toBeLessThan(1e-4);
      for (const name of Object.keys(whole.grads)) {
        const a = (await (chunked.grads[name] as tf.Tensor).data()) as Float32Array;
        const c = (await (whole.grads[name] as tf.Tensor).data()) as Float32Array;
        expect(maxDiff(a, c), name).toBeLessThan(1e-5);
      }
      tf.dispose([whole.value, chunked.value, ...Object.values(whole.grads), ...Object.values(chunked.grads)]);
      model.dispose();
    });
  }
});
