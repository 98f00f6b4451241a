/**
 * The training contract the trainer, its gradient accumulation, step preparation and the
 * data-parallel gradient workers share: what a model must offer to be trained and what one
 * micro-batch carries. It sits below all of them (it imports only the backend and the batch
 * layout), so they depend on it and never on each other in a circle.
 */
import type { tf } from '../backend/tf.js';
import type { TrainBatch } from '../models/train-batch.js';

/** Named weights as plain arrays (the checkpoint format of models). */
export type NamedWeights = Map<string, { shape: number[]; data: Float32Array }>;

/** What the trainer needs from a model (the transformer in `src/models/transformer/model.ts` provides it). */
export interface TrainableModel {
  /** [N] target log-probs and entropies at `batch.targetPositions`; call inside `tf.variableGrads`. */
  forwardTrain(batch: TrainBatch, temperature: number): { logprobs: tf.Tensor1D; entropy: tf.Tensor1D };
  /** The same plus [N, d] hidden states at the targets; needed by a shared-trunk critic. */
  forwardTrainWithHidden?(batch: TrainBatch, temperature: number): { logprobs: tf.Tensor1D; entropy: tf.Tensor1D; hidden: tf.Tensor2D };
  /** The variables the optimizer updates, in a stable order. */
  trainableVariables(): tf.Variable[];
  namedWeights(): NamedWeights;
  loadNamedWeights(weights: NamedWeights): void;
}

/** One micro-batch with everything the losses need, all per target [N]. */
export interface MicroBatch {
  readonly batch: TrainBatch;
  readonly lossMask: Float32Array;
  readonly oldLogprobs: Float32Array;
  readonly advantages: Float32Array;
  readonly returns: Float32Array;
  /** Pre-update values (null without a critic). */
  readonly oldValues: Float32Array | null;
  /** Reference log-probs for the KL loss (null unless the KL is a loss term). */
  readonly refLogprobs: Float32Array | null;
  /** Aggregation weights over the whole mini-batch. */
  readonly weights: Float32Array;
  /** Token-mean weights over the whole mini-batch (`mask / trained tokens`). */
  readonly tokenWeights: Float32Array;
  /** Trained tokens of the whole mini-batch (the token-mean denominator). */
  readonly tokenCount: number;
  /** Real (non-pad) tokens, for throughput. */
  readonly tokens: number;
}
