/** Shared tiny-model fixtures for the transformer tests (not a test file itself). */
import { Rng } from '../../src/core/rng.js';
import type { TrainBatch } from '../../src/models/train-batch.js';
import { type TransformerConfig, TransformerModel } from '../../src/models/transformer/model.js';

export const TINY: TransformerConfig = {
  vocabSize: 40,
  dModel: 16,
  nLayers: 2,
  nHeads: 2,
  ffnHidden: 44,
  maxContext: 64,
  ropeTheta: 10000,
  rmsNormEps: 1e-5,
  tieEmbeddings: false,
};

export function tinyModel(seed = 1, overrides: Partial<TransformerConfig> = {}): TransformerModel {
  return new TransformerModel({ ...TINY, ...overrides }, Rng.fromSeed(seed));
}

/** A random sequence of ids in [6, vocab) (0..5 are the special tokens). */
export function randomSeq(rng: Rng, length: number, vocab = TINY.vocabSize): Int32Array {
  return Int32Array.from({ length }, () => 6 + rng.int(vocab - 6));
}

/** One sequence to train on: input ids and the (position -> target) pairs with allowed sets. */
export interface SeqTargets {
  readonly ids: Int32Array;
  /** Index t in `ids` whose output predicts `ids[t + 1]`. */
  readonly positions: number[];
  /** Allowed set per target, empty = unconstrained. */
  readonly allowed?: number[][];
}

/** Right-pads sequences into a TrainBatch (targets are the next tokens at the given positions). */
export function packBatch(seqs: readonly SeqTargets[], seqLen?: number): TrainBatch {
  const t = seqLen ?? Math.max(...seqs.map((s) => s.ids.length));
  const b = seqs.length;
  const inputIds = new Int32Array(b * t);
  const attentionMask = new Uint8Array(b * t);
  const targetPositions: number[] = [];
  const targetIds: number[] = [];
  const offsets = [0];
  const allowedIds: number[] = [];
  let constrained = false;
  seqs.forEach((s, row) => {
    inputIds.set(s.ids, row * t);
    attentionMask.fill(1, row * t, row * t + s.ids.length);
    s.positions.forEach((p, k) => {
      targetPositions.push(row * t + p);
      targetIds.push(s.ids[p + 1]);
      const allowed = s.allowed?.[k] ?? [];
      if (allowed.length > 0) constrained = true;
      allowedIds.push(...allowed);
      offsets.push(allowedIds.length);
    });
  });
  return {
    batchSize: b,
    seqLen: t,
    inputIds,
    attentionMask,
    targetPositions: Int32Array.from(targetPositions),
    targetIds: Int32Array.from(targetIds),
    allowedOffsets: constrained ? Int32Array.from(offsets) : null,
    allowedIds: constrained ? Int32Array.from(allowedIds) : null,
  };
}
