/**
 * The training forwards of {@link TransformerModel}: the full causal forward over a right-padded
 * {@link TrainBatch} with only the target rows through the LM head (whole, or a chunk of rows at a
 * time for large vocabularies), LoRA dropout, activation checkpointing when it is on, and the ids a
 * pretrained model pads its vocabulary with kept out of the distribution.
 */
import { InvalidArgumentError } from '../../core/errors.js';
import { Rng } from '../../core/rng.js';
import { tf } from '../../backend/tf.js';
import type { TrainBatch } from '../train-batch.js';
import { chunkedTargetStats, headChunkRows } from './chunked-head.js';
import type { TransformerConfig } from './config.js';
import type { Decoder, DecoderOptions, LayerDropout } from './decoder.js';
import { attend, attentionMask, MASK_VALUE, positionsFromMask, targetLogProbsAndEntropy } from './layers.js';
import { constraintMask, everyPosition, validateTrainBatch } from './train-inputs.js';
import type { WeightStore } from './weight-store.js';

/** Output of `TransformerModel.forwardTrain`, aligned with `TrainBatch.targetIds`. */
export interface TrainForward {
  /** [N] log-prob of each target under the masked, temperature-scaled distribution. */
  readonly logprobs: tf.Tensor1D;
  /** [N] entropy of that distribution (nats). */
  readonly entropy: tf.Tensor1D;
}

/** Output of `TransformerModel.forwardTrainWithHidden`: the train forward plus what a value head reads. */
export interface TrainForwardWithHidden extends TrainForward {
  /** [N, dModel] final-normed hidden state at each target position (the LM head's input). */
  readonly hidden: tf.Tensor2D;
}

/**
 * One model's training forwards and the settings they read (output vocabulary, checkpointing).
 * @example const { logprobs } = training.forward(batch, 1, false);
 */
export class TrainingForward {
  /** Activation checkpointing of the training forwards (checkpointed-layer.ts). */
  checkpointing = false;
  private outputs: number;
  private unusedMask: tf.Tensor1D | null = null;

  constructor(
    private readonly config: TransformerConfig,
    private readonly decoder: Decoder,
    private readonly store: WeightStore,
  ) {
    this.outputs = config.vocabSize;
  }

  /** Ids the model can emit: `[0, outputVocab)`. */
  get outputVocab(): number {
    return this.outputs;
  }

  /** Gives no probability to ids at or past `n` (see `TransformerModel.restrictOutputs`). */
  restrictOutputs(n: number): void {
    const v = this.config.vocabSize;
    if (!(Number.isInteger(n) && n >= 1 && n <= v)) throw InvalidArgumentError.format('outputs', `expected an integer in [1, ${v}], got ${n}`);
    this.outputs = n;
    this.unusedMask?.dispose();
    this.unusedMask = null;
  }

  /** The shared training forward; the hidden rows are returned (kept out of the tidy) only when asked for. */
  forward(batch: TrainBatch, temperature: number, withHidden: boolean): TrainForward | TrainForwardWithHidden {
    validateTrainBatch(batch, this.config);
    if (!(temperature > 0)) throw InvalidArgumentError.format('temperature', `expected > 0, got ${temperature}`);
    const { batchSize: b, seqLen: t, targetIds } = batch;
    const v = this.config.vocabSize;
    const n = targetIds.length;
    const positions = positionsFromMask(batch.attentionMask, b, t, new Int32Array(b));
    const maskValues = attentionMask(new Uint8Array(0), 0, batch.attentionMask, b, t);
    const constraint = constraintMask(batch, v);
    return tf.tidy(() => {
      const mask = tf.tensor4d(maskValues, [b, 1, t, t]);
      const rope = this.decoder.ropeFor(positions, b, t);
      const hidden = this.decoder.run(batch.inputIds, b, t, rope, (_, q, k, val) => attend(q, k, val, mask), this.decoderOptions(batch, mask)); // [B*T, d]
      // Every position a target, in order (dense targets): the rows are `hidden` itself; skip the slow wasm Gather.
      const selected = everyPosition(batch) ? hidden : tf.gather(hidden, tf.tensor1d(batch.targetPositions, 'int32')); // [N, d]
      const normed = this.decoder.finalNorm(selected); // [N, d]
      const both = constraint === null && n > headChunkRows(v) ? this.chunkedHead(normed, targetIds, temperature) : this.wholeHead(normed, targetIds, temperature, constraint); // [2, N]
      const logprobs = tf.reshape(tf.slice(both, [0, 0], [1, n]), [n]) as tf.Tensor1D;
      const entropy = tf.reshape(tf.slice(both, [1, 0], [1, n]), [n]) as tf.Tensor1D;
      return withHidden ? { logprobs, entropy, hidden: normed } : { logprobs, entropy };
    });
  }

  /** Final-normed hidden states at `batch.targetPositions`, `[N, dModel]`, without the LM head. */
  hidden(batch: TrainBatch): tf.Tensor2D {
    validateTrainBatch(batch, this.config);
    const { batchSize: b, seqLen: t } = batch;
    const positions = positionsFromMask(batch.attentionMask, b, t, new Int32Array(b));
    const maskValues = attentionMask(new Uint8Array(0), 0, batch.attentionMask, b, t);
    return tf.tidy(() => {
      const mask = tf.tensor4d(maskValues, [b, 1, t, t]);
      const rope = this.decoder.ropeFor(positions, b, t);
      const hidden = this.decoder.run(batch.inputIds, b, t, rope, (_, q, k, val) => attend(q, k, val, mask)); // [B*T, d]
      return this.decoder.finalNorm(tf.gather(hidden, tf.tensor1d(batch.targetPositions, 'int32')));
    });
  }

  dispose(): void {
    this.unusedMask?.dispose();
    this.unusedMask = null;
  }

  /** `[V]` additive mask: 0 below `outputVocab`, masked from there. */
  private unusedRowsMask(): tf.Tensor1D {
    if (this.unusedMask === null) {
      const values = new Float32Array(this.config.vocabSize);
      values.fill(MASK_VALUE, this.outputs);
      this.unusedMask = tf.keep(tf.tensor1d(values));
    }
    return this.unusedMask;
  }

  /** The loss head over all `[N, V]` logits at once (constrained targets, or few enough rows). */
  private wholeHead(normed: tf.Tensor2D, targetIds: Int32Array, temperature: number, constraint: Float32Array | null): tf.Tensor2D {
    const [n] = normed.shape;
    const v = this.config.vocabSize;
    // Temperature 1 (training's usual): skip a division pass over [N, V] and its gradient.
    let logits = temperature === 1 ? this.decoder.project(normed) : tf.div(this.decoder.project(normed), temperature); // [N, V]
    if (constraint !== null) logits = tf.add(logits, tf.tensor2d(constraint, [n, v]));
    else if (this.outputs < v) logits = tf.add(logits, this.unusedRowsMask()); // ids past the tokenizer's: never sampled, never scored
    return targetLogProbsAndEntropy(logits as tf.Tensor2D, targetIds);
  }

  /** The loss head a chunk of rows at a time (chunked-head.ts): large vocabularies. */
  private chunkedHead(normed: tf.Tensor2D, targetIds: Int32Array, temperature: number): tf.Tensor2D {
    const weight = this.decoder.headWeight();
    const additive = this.outputs < this.config.vocabSize ? this.unusedRowsMask() : null;
    return chunkedTargetStats(normed, targetIds, { weight, tied: this.config.tieEmbeddings, temperature, additive }, headChunkRows(this.config.vocabSize));
  }

  /** How a training forward runs its decoder: LoRA dropout, and checkpointed layers when asked for. */
  private decoderOptions(batch: TrainBatch, mask: tf.Tensor4D): DecoderOptions {
    const drop = this.loraDropout(batch);
    return { ...(drop === undefined ? {} : { drop }), ...(this.checkpointing ? { checkpointMask: mask } : {}) };
  }

  /**
   * LoRA dropout on the adapters' inputs (training forwards only, as PEFT in train mode);
   * undefined when there is nothing to drop. The masks' seeds come from the batch's own ids and
   * the layer, so a micro-batch gets the same masks in any process, on resume and when a
   * checkpointed layer runs again (no stream state to checkpoint; the cost: a batch seen twice,
   * e.g. in a second PPO epoch, sees the same masks).
   */
  private loraDropout(batch: TrainBatch): LayerDropout | undefined {
    const rate = this.store.lora?.dropout ?? 0;
    if (rate === 0) return undefined;
    let hash = 2166136261;
    for (const id of batch.inputIds) hash = Math.imul(hash ^ id, 16777619) >>> 0;
    for (const id of batch.targetPositions) hash = Math.imul(hash ^ id, 16777619) >>> 0;
    return (layer) => {
      const rng = Rng.fromSeed(Math.imul(hash ^ (layer + 1), 16777619) >>> 0);
      return (x) => tf.dropout(x, rate, undefined, rng.int(2 ** 31)) as tf.Tensor2D;
    };
  }
}
