import { beforeAll, describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.js';
import { globalNormScale } from '../../src/algorithms/grad-clip.js';
import { nativeAdamAvailable } from '../../src/backend/native-adam.js';
import { nativeBlas } from '../../src/backend/native-blas.js';
import { selectBackend } from '../../src/backend/select.js';
import { tf } from '../../src/backend/tf.js';
import { accumulateGradients, type GradientOptions } from '../../src/learner/grad-accumulate.js';
import { estimateMemory, parameterCount, WASM_HEAP_BYTES } from '../../src/models/memory-estimate.js';
import { AdamW } from '../../src/learner/optimizer.js';
import type { MicroBatch } from '../../src/learner/train-contract.js';
import { headChunkRows } from '../../src/models/transformer/chunked-head.js';
import { type TransformerConfig, TransformerModel } from '../../src/models/transformer/model.js';

// Issue #31: on the native path Adam's moments live outside the wasm heap and the clip is folded
// into the update; the estimate says so (heap: the gradients alone; host: the moments), exactly.

const SMOLLM2: TransformerConfig = { vocabSize: 49152, dModel: 576, nLayers: 30, nHeads: 9, nKvHeads: 3, headDim: 64, ffnHidden: 1536, maxContext: 2048, ropeTheta: 100000, rmsNormEps: 1e-5, tieEmbeddings: true };
const SMALL: TransformerConfig = { vocabSize: 300, dModel: 48, nLayers: 2, nHeads: 4, ffnHidden: 128, maxContext: 64, ropeTheta: 10000, rmsNormEps: 1e-5, tieEmbeddings: false };
const OPTIONS: GradientOptions = { temperature: 1, clipRatio: 0.2, entropyCoef: 0, dualClip: null, klEstimator: 'k3', offPolicy: { kind: 'none' }, valueClip: null, valueCoef: 1, klCoef: 0, warmingUp: false };

function micro(rows: number, seq: number, vocab: number, seed: number, total: number): MicroBatch {
  const rng = Rng.fromSeed(seed);
  const n = rows * seq;
  return {
    batch: { batchSize: rows, seqLen: seq, inputIds: Int32Array.from({ length: n }, () => rng.int(vocab)), attentionMask: new Uint8Array(n).fill(1), targetPositions: Int32Array.from({ length: n }, (_, i) => i), targetIds: Int32Array.from({ length: n }, () => rng.int(vocab)), allowedOffsets: null, allowedIds: null },
    lossMask: new Float32Array(n).fill(1),
    oldLogprobs: new Float32Array(n).fill(-Math.log(vocab)),
    advantages: Float32Array.from({ length: n }, () => rng.normal()),
    returns: new Float32Array(n),
    oldValues: null,
    refLogprobs: null,
    weights: new Float32Array(n).fill(1 / total),
    tokenWeights: new Float32Array(n).fill(1 / total),
    tokenCount: total,
    tokens: n,
  };
}

describe('memory estimate with the optimizer outside the heap', () => {
  it('counts the moments on the host and only the gradients in the heap', () => {
    const plan = { lora: null, reference: false, microBatchTokens: 256, sequenceLength: 128, kvCacheBytes: 0 };
    const inHeap = estimateMemory(SMOLLM2, plan);
    const onHost = estimateMemory(SMOLLM2, { ...plan, optimizerOnHost: true, accumulates: false });
    const summing = estimateMemory(SMOLLM2, { ...plan, optimizerOnHost: true });
    const p = parameterCount(SMOLLM2);
    expect(inHeap.optimizer).toBe(16 * p);
    expect(inHeap.host).toBe(0);
    expect(onHost.optimizer).toBe(4 * p);
    expect(summing.optimizer).toBe(8 * p);
    expect(onHost.host).toBe(8 * p);
    // The case: full fine-tuning of the 135M shape at [2, 128] did not fit the heap; it does now.
    expect(inHeap.total).toBeGreaterThan(WASM_HEAP_BYTES);
    expect(onHost.total).toBeLessThan(WASM_HEAP_BYTES);
  });
});

describe.runIf(nativeBlas().blas !== null)('memory estimate against a live full fine-tuning step (wasm, native path)', () => {
  beforeAll(async () => {
    await selectBackend('wasm', { matmul: 'native' });
  });

  it('holds no moment and no clipped copy in the heap: an update adds one variable at a time, and the moments sit exactly where the estimate puts them', async () => {
    expect(nativeAdamAvailable()).toBe(true);
    const model = new TransformerModel(SMALL, Rng.fromSeed(3));
    const optimizer = new AdamW({ lr: 1e-3 });
    const [rows, seq] = [4, 32];
    const chunk = [micro(rows, seq, SMALL.vocabSize, 1, 2 * rows * seq), micro(rows, seq, SMALL.vocabSize, 2, 2 * rows * seq)];
    const weightsBytes = tf.memory().numBytes; // the weights, and the model's rotary constants
    const gradients = () => accumulateGradients({ policy: model, critic: null }, chunk, OPTIONS, () => undefined).actorGrads;
    const first = gradients();
    optimizer.apply(model.trainableVariables(), first, globalNormScale(first, 0.5).scale); // creates the moments
    tf.dispose(first);
    expect(tf.memory().numBytes, 'nothing of a step stays in the heap: no moment, no gradient').toBe(weightsBytes);
    const grads = gradients();
    const held = tf.memory().numBytes;
    expect(held - weightsBytes, 'one copy of the gradients after summing two micro-batches').toBe(4 * parameterCount(SMALL));
    const { scale } = globalNormScale(grads, 0.5);
    expect(scale).toBeLessThan(1); // the clip is in force
    const { peakBytes } = await tf.profile(() => optimizer.apply(model.trainableVariables(), grads, scale));
    const largest = Math.max(...model.trainableVariables().map((v) => 4 * v.size));
    expect(peakBytes - held, 'the update: each variable\'s new value, one at a time').toBeLessThanOrEqual(largest);
    tf.dispose(grads);
    const estimate = estimateMemory(SMALL, { lora: null, reference: false, microBatchTokens: rows * seq, sequenceLength: seq, kvCacheBytes: 0, optimizerOnHost: true });
    expect(optimizer.hostBytes, 'the estimate counts the moments exactly').toBe(estimate.host);
    expect(estimate.optimizer).toBe(2 * 4 * parameterCount(SMALL)); // two copies while micro-batches are summed
    optimizer.dispose();
    model.dispose();
  });
});

describe('memory estimate of a chunked loss head', () => {
  it('counts one chunk of [rows, vocab] maps for an unconstrained head, every row for a constrained one', () => {
    const qwen: TransformerConfig = { vocabSize: 151936, dModel: 896, nLayers: 24, nHeads: 14, nKvHeads: 2, headDim: 64, ffnHidden: 4864, maxContext: 2048, ropeTheta: 1e6, rmsNormEps: 1e-6, tieEmbeddings: true, qkvBias: true };
    const plan = { lora: { rank: 16, alpha: 32, dropout: 0, targets: ['q_proj' as const] }, reference: false, microBatchTokens: 1024, sequenceLength: 256, kvCacheBytes: 0 };
    const chunked = estimateMemory(qwen, plan);
    const whole = estimateMemory(qwen, { ...plan, constrained: true });
    expect(whole.activations - chunked.activations).toBe(4 * 3 * (1024 - headChunkRows(qwen.vocabSize)) * qwen.vocabSize);
  });
});
