/**
 * A Llama-style decoder-only transformer in tfjs: token embedding, pre-RMSNorm blocks with rotary
 * causal multi-head attention and a SwiGLU MLP, final RMSNorm, LM head. Weights carry Hugging Face
 * Llama names (`namedWeights()` returns HF layout), so a real Llama checkpoint loads.
 *
 * Two forward paths share one decoder:
 * - `forwardTrain(batch, temperature)` (inside `tf.variableGrads`): full causal forward over a
 *   right-padded batch; only the `targetPositions` rows go through the LM head.
 * - `extend(cache, ids, mask, seqLen)` / `extendPacked(caches, tokens)` (sampling): append new
 *   tokens to a {@link KvCache} and return the next-token logits of each row. This file validates
 *   and delegates; the sampling path itself is transformer/cached-forward.ts.
 */
import { CheckpointError, InvalidArgumentError } from '../core/errors.js';
import { Rng } from '../core/rng.js';
import { tf } from './backend/tf.js';
import { type ConfigTokenIds, writeHfConfig } from './hf/hf-config.js';
import type { KvCache } from './kv-cache.js';
import type { TrainBatch } from './train-batch.js';
import { CachedForward } from './transformer/cached-forward.js';
import { checkpointedLayer } from './transformer/checkpointed-layer.js';
import { headDim, kvHeads, type TransformerConfig, validateTransformerConfig } from './transformer/config.js';
import type { PackedOptions } from './transformer/inference.js';
import {
  type AttentionFn,
  applyRope,
  MASK_VALUE,
  attend,
  attentionMask,
  type BlockWeights,
  embedRows,
  mergeHeads,
  mlpResidual,
  type Projection,
  positionsFromMask,
  project,
  type RopeFactors,
  rmsNorm,
  ropeFactors,
  rotateHalfMatrix,
  splitHeads,
  targetLogProbsAndEntropy,
} from './transformer/layers.js';
import { RopeTable, ropeInverseFrequencies } from './transformer/rope.js';
import { chunkedTargetStats, headChunkRows } from './transformer/chunked-head.js';
import { NativeDecoder } from './transformer/native-decode.js';
import { constraintMask, everyPosition, validateTrainBatch } from './transformer/train-inputs.js';
import { WeightStore } from './transformer/weight-store.js';
import type { NamedWeight } from './transformer/weights.js';
import type { LoraSpec } from './lora/lora.js';

export type { TransformerConfig } from './transformer/config.js';
export type { NamedWeight } from './transformer/weights.js';

/** Output of {@link TransformerModel.forwardTrain}, aligned with `TrainBatch.targetIds`. */
export interface TrainForward {
  /** [N] log-prob of each target under the masked, temperature-scaled distribution. */
  readonly logprobs: tf.Tensor1D;
  /** [N] entropy of that distribution (nats). */
  readonly entropy: tf.Tensor1D;
}

/** Output of {@link TransformerModel.forwardTrainWithHidden}: the train forward plus what a value head reads. */
export interface TrainForwardWithHidden extends TrainForward {
  /** [N, dModel] final-normed hidden state at each target position (the LM head's input). */
  readonly hidden: tf.Tensor2D;
}

/** LoRA dropout of one layer's adapter inputs (deterministic: the same masks when a checkpointed layer runs again). */
type LayerDropout = (layer: number) => ((x: tf.Tensor2D) => tf.Tensor2D) | undefined;

/** How the decoder stack runs. */
interface DecoderOptions {
  /** LoRA dropout of the training forward. */
  readonly drop?: LayerDropout;
  /** Inference only (nothing records gradients): free each layer's intermediates as it goes. */
  readonly release?: boolean;
  /** Training with activation checkpointing (transformer/checkpointed-layer.ts): the attention mask every layer reads. */
  readonly checkpointMask?: tf.Tensor4D;
}

/** Embedding tables up to this many values are looked up on the CPU (see `embedRows`). */
const CPU_EMBED_LIMIT = 8_000_000;

/**
 * The policy network.
 * @example
 * const model = new TransformerModel({ vocabSize: 40, dModel: 16, nLayers: 2, nHeads: 2, ffnHidden: 44,
 *   maxContext: 64, ropeTheta: 10000, rmsNormEps: 1e-5, tieEmbeddings: false }, Rng.fromSeed(0));
 * const { value, grads } = tf.variableGrads(() => {
 *   const { logprobs } = model.forwardTrain(batch, 1);
 *   return tf.neg(tf.mean(logprobs)) as tf.Scalar;
 * });
 */
export class TransformerModel {
  readonly config: TransformerConfig;
  private readonly store: WeightStore;
  private readonly rope: RopeTable;
  private readonly rotate: tf.Tensor2D; // [headDim, headDim]
  private disposed = false;
  private embedCache: { dataId: object; data: Float32Array } | null = null;
  private outputs: number;
  private unusedMask: tf.Tensor1D | null = null;
  /** The KV-cached sampling forwards, reading this model through a view (transformer/cached-forward.ts). */
  private readonly sampling: CachedForward;
  private checkpointing = false;
  /** Decode steps as one native call per layer where the addon runs them (transformer/native-decode.ts). */
  private readonly nativeDecoder: NativeDecoder;

  /**
   * Builds a model with N(0, 0.02) weights drawn from `rng` (deterministic for a seed), or with
   * the given HF-layout weights (see {@link TransformerModel.fromNamedWeights}).
   */
  constructor(config: TransformerConfig, source: Rng | ReadonlyMap<string, NamedWeight> | WeightStore) {
    validateTransformerConfig(config);
    this.config = { ...config };
    this.store = source instanceof WeightStore ? source : new WeightStore(this.config, source);
    this.outputs = config.vocabSize;
    const hd = headDim(config);
    this.rope = new RopeTable(ropeInverseFrequencies(config), config.maxContext);
    this.rotate = tf.keep(tf.tensor2d(rotateHalfMatrix(hd), [hd, hd]));
    this.sampling = new CachedForward({
      config: this.config,
      rope: this.rope,
      embed: (ids) => this.embed(ids),
      block: (layer) => this.block(layer),
      decode: (ids, batch, seqLen, positions, attention) => this.decoder(ids, batch, seqLen, this.ropeFor(positions, batch, seqLen), attention, { release: true }),
      head: (hidden) => this.head(hidden),
    });
    this.nativeDecoder = new NativeDecoder({
      config: this.config,
      rope: this.rope,
      block: (layer) => this.block(layer),
      embedding: () => this.weight2d('model.embed_tokens.weight'),
      head: () => {
        const tied = this.config.tieEmbeddings;
        return { norm: this.weight1d('model.norm.weight'), weight: this.weight2d(tied ? 'model.embed_tokens.weight' : 'lm_head.weight'), tied };
      },
    });
  }

  /**
   * A model holding `weights` (HF layout, e.g. a pretrained checkpoint) from the start: no random
   * initialisation, no second copy.
   * @example const model = TransformerModel.fromNamedWeights(parsed.config, await readHfWeights(folder));
   */
  static fromNamedWeights(config: TransformerConfig, weights: ReadonlyMap<string, NamedWeight>): TransformerModel {
    return new TransformerModel(config, weights instanceof Map ? weights : new Map(weights));
  }

  /**
   * Ids at or past `n` (embedding rows a pretrained model pads its vocabulary with, which no token
   * maps to) get no probability in the training forward; the policy samples below `n` too, so
   * both score the same distribution.
   * @example model.restrictOutputs(tokenizer.vocabSize)
   */
  restrictOutputs(n: number): void {
    const v = this.config.vocabSize;
    if (!(Number.isInteger(n) && n >= 1 && n <= v)) throw InvalidArgumentError.format('outputs', `expected an integer in [1, ${v}], got ${n}`);
    this.outputs = n;
    this.unusedMask?.dispose();
    this.unusedMask = null;
  }

  /** Ids the model can emit: `[0, outputVocab)` (see {@link restrictOutputs}). */
  get outputVocab(): number {
    return this.outputs;
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

  /**
   * Activation checkpointing of the training forwards (transformer/checkpointed-layer.ts): each
   * decoder layer keeps only its input for the backward pass and runs again there. Same values and
   * gradients (within float rounding); about a third more compute, a fraction of the memory.
   * @example model.checkpointActivations(true) // a pretrained model's training at a 512-token context
   */
  checkpointActivations(on: boolean): void {
    this.checkpointing = on;
  }

  /** Whether {@link checkpointActivations} is on. */
  get checkpointsActivations(): boolean {
    return this.checkpointing;
  }

  /** Total number of parameters (base + adapters). */
  get parameterCount(): number {
    return this.store.parameterCount;
  }

  /** Parameters the optimizer updates (the adapters of a LoRA model). */
  get trainableParameterCount(): number {
    return this.store.trainableParameterCount;
  }

  /** The LoRA spec when adapters are attached, else null. */
  get lora(): LoraSpec | null {
    return this.store.lora;
  }

  /**
   * Attaches LoRA adapters (fresh from `source`, or PEFT-layout weights) and freezes the base:
   * from then on {@link trainableVariables} and {@link namedWeights} are the adapters.
   * @example model.attachLora({ rank: 8, alpha: 16, dropout: 0.05, targets: ['q_proj', 'v_proj'] }, rng.fork('lora'));
   */
  attachLora(spec: LoraSpec, source: Rng | ReadonlyMap<string, NamedWeight>): void {
    this.checkAlive();
    this.store.attachLora(spec, source);
  }

  /**
   * A second model on the same frozen base (no copy) with its own copy of the adapters: the
   * sampler of a LoRA run. It never writes the base; dispose it before this model.
   * @example const sampler = learner.sharingBase(rng.fork('sampler'));
   */
  sharingBase(rng: Rng): TransformerModel {
    this.checkAlive();
    return new TransformerModel(this.config, this.store.sharingBase(rng));
  }

  /**
   * A model over the same frozen base (no copy) with adapters of its own, fresh or given in PEFT
   * layout: one of several LoRA models trained on one base. Dispose it before this model.
   * @example const tuned = base.withOwnAdapters({ rank: 8, alpha: 32, dropout: 0, targets: [...LORA_TARGETS] }, rng);
   */
  withOwnAdapters(spec: LoraSpec, source: Rng | ReadonlyMap<string, NamedWeight>): TransformerModel {
    this.checkAlive();
    return new TransformerModel(this.config, this.store.withOwnAdapters(spec, source));
  }

  /** Runs `fn` on the base model, adapters off (a LoRA run's KL reference: no second copy of the weights). */
  withAdaptersOff<T>(fn: () => T): T {
    return this.store.withAdaptersOff(fn);
  }

  /** The variables the optimizer updates, in a fixed order (a LoRA model's adapters; else embedding, blocks, final norm, head). */
  trainableVariables(): tf.Variable[] {
    return this.store.trainableVariables();
  }

  /** Every base weight in HF layout (copies), adapters not merged. */
  baseNamedWeights(): Map<string, NamedWeight> {
    return this.store.baseNamedWeights();
  }

  /** Base weights with the adapters merged in: a plain Hugging Face model for export. */
  mergedNamedWeights(): Map<string, NamedWeight> {
    return this.store.mergedNamedWeights();
  }

  /**
   * The Hugging Face `config.json` for this model, with the special-token ids `generate` needs.
   * @example model.toHfConfig({ bos: 1, eos: [5], pad: 0 }).model_type // 'llama'
   */
  toHfConfig(tokenIds: ConfigTokenIds = { bos: null, eos: [], pad: null }): Record<string, unknown> {
    return writeHfConfig(this.config, tokenIds);
  }

  /**
   * What trains, as plain data (copies): every weight under its HF name in HF layout (Linear
   * weights [out, in]; a tied model has no `lm_head.weight`), or a LoRA model's adapters under
   * PEFT names. What a learner publishes and a checkpoint saves.
   */
  namedWeights(): Map<string, NamedWeight> {
    return this.store.namedWeights();
  }

  /**
   * Loads what {@link namedWeights} gives. Every tensor must be present with its shape
   * ({@link CheckpointError} names the missing or mismatched one); `lm_head.weight` is ignored
   * when embeddings are tied; an unknown name is an error (it means another architecture).
   */
  loadNamedWeights(weights: ReadonlyMap<string, NamedWeight>): void {
    this.checkAlive();
    this.store.loadNamedWeights(weights);
  }

  /**
   * Training forward: log-probs and entropies of the targets under `softmax(logits / T + mask)`.
   * Call inside `tf.variableGrads`; the caller disposes the returned tensors.
   */
  forwardTrain(batch: TrainBatch, temperature: number): TrainForward {
    return this.trainForward(batch, temperature, false);
  }

  /**
   * {@link forwardTrain} plus the final-normed hidden states at the target positions, for a value
   * head on the policy trunk (PPO with a shared critic). Same math, one decoder pass.
   * @example
   * const { logprobs, hidden } = model.forwardTrainWithHidden(batch, 1); // hidden [N, dModel]
   */
  forwardTrainWithHidden(batch: TrainBatch, temperature: number): TrainForwardWithHidden {
    return this.trainForward(batch, temperature, true) as TrainForwardWithHidden;
  }

  /** The shared training forward; the hidden rows are returned (kept out of the tidy) only when asked for. */
  private trainForward(batch: TrainBatch, temperature: number, withHidden: boolean): TrainForward | TrainForwardWithHidden {
    this.checkAlive();
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
      const rope = this.ropeFor(positions, b, t);
      const hidden = this.decoder(batch.inputIds, b, t, rope, (_, q, k, val) => attend(q, k, val, mask), this.trainingDecoder(batch, mask)); // [B*T, d]
      // Every position a target, in order (dense targets): the rows are `hidden` itself; skip the slow wasm Gather.
      const selected = everyPosition(batch) ? hidden : tf.gather(hidden, tf.tensor1d(batch.targetPositions, 'int32')); // [N, d]
      const normed = this.finalNorm(selected); // [N, d]
      const both = constraint === null && n > headChunkRows(v) ? this.chunkedHead(normed, targetIds, temperature) : this.wholeHead(normed, targetIds, temperature, constraint); // [2, N]
      const logprobs = tf.reshape(tf.slice(both, [0, 0], [1, n]), [n]) as tf.Tensor1D;
      const entropy = tf.reshape(tf.slice(both, [1, 0], [1, n]), [n]) as tf.Tensor1D;
      return withHidden ? { logprobs, entropy, hidden: normed } : { logprobs, entropy };
    });
  }

  /** The loss head over all `[N, V]` logits at once (constrained targets, or few enough rows). */
  private wholeHead(normed: tf.Tensor2D, targetIds: Int32Array, temperature: number, constraint: Float32Array | null): tf.Tensor2D {
    const [n] = normed.shape;
    const v = this.config.vocabSize;
    // Temperature 1 (training's usual): skip a division pass over [N, V] and its gradient.
    let logits = temperature === 1 ? this.project(normed) : tf.div(this.project(normed), temperature); // [N, V]
    if (constraint !== null) logits = tf.add(logits, tf.tensor2d(constraint, [n, v]));
    else if (this.outputs < v) logits = tf.add(logits, this.unusedRowsMask()); // ids past the tokenizer's: never sampled, never scored
    return targetLogProbsAndEntropy(logits as tf.Tensor2D, targetIds);
  }

  /** The loss head a chunk of rows at a time (transformer/chunked-head.ts): large vocabularies. */
  private chunkedHead(normed: tf.Tensor2D, targetIds: Int32Array, temperature: number): tf.Tensor2D {
    const tied = this.config.tieEmbeddings;
    const weight = this.weight2d(tied ? 'model.embed_tokens.weight' : 'lm_head.weight');
    const additive = this.outputs < this.config.vocabSize ? this.unusedRowsMask() : null;
    return chunkedTargetStats(normed, targetIds, { weight, tied, temperature, additive }, headChunkRows(this.config.vocabSize));
  }

  /**
   * Final-normed hidden states at `batch.targetPositions`, `[N, dModel]`, without the LM head: the
   * trunk of a separate critic model. Call inside `tf.variableGrads` to train it.
   * @example const hidden = critic.forwardHidden(batch); // [N, dModel]
   */
  forwardHidden(batch: TrainBatch): tf.Tensor2D {
    this.checkAlive();
    validateTrainBatch(batch, this.config);
    const { batchSize: b, seqLen: t } = batch;
    const positions = positionsFromMask(batch.attentionMask, b, t, new Int32Array(b));
    const maskValues = attentionMask(new Uint8Array(0), 0, batch.attentionMask, b, t);
    return tf.tidy(() => {
      const mask = tf.tensor4d(maskValues, [b, 1, t, t]);
      const rope = this.ropeFor(positions, b, t);
      const hidden = this.decoder(batch.inputIds, b, t, rope, (_, q, k, val) => attend(q, k, val, mask)); // [B*T, d]
      return this.finalNorm(tf.gather(hidden, tf.tensor1d(batch.targetPositions, 'int32')));
    });
  }

  /**
   * Full next-token logits at every position (tests, evaluation): `[batch, seqLen, vocab]`.
   * `attentionMask` 0 marks padding (left or right).
   */
  forwardLogits(inputIds: Int32Array, attentionMaskIn: Uint8Array, batchSize: number, seqLen: number): tf.Tensor3D {
    this.checkAlive();
    this.checkIds(inputIds, attentionMaskIn, batchSize, seqLen);
    const positions = positionsFromMask(attentionMaskIn, batchSize, seqLen, new Int32Array(batchSize));
    const maskValues = attentionMask(new Uint8Array(0), 0, attentionMaskIn, batchSize, seqLen);
    return tf.tidy(() => {
      const mask = tf.tensor4d(maskValues, [batchSize, 1, seqLen, seqLen]);
      const rope = this.ropeFor(positions, batchSize, seqLen);
      const hidden = this.decoder(inputIds, batchSize, seqLen, rope, (_, q, k, v) => attend(q, k, v, mask), { release: true });
      return tf.reshape(this.head(hidden), [batchSize, seqLen, this.config.vocabSize]);
    });
  }

  /**
   * {@link forwardLogits} a chunk of positions at a time, so that the `[batch * seqLen, vocab]`
   * logits never exist whole (2,048 positions of Qwen2.5's 151,936-id vocabulary are 1.2 GB): the
   * decoder runs once, then `each(logits, start)` gets rows `[start, start + chunkRows)` of the
   * flattened positions, inside a tidy (what it returns is kept; the chunk's logits are freed).
   * @example const picked = model.forwardLogitChunks(ids, ones, 1, t, 110, (z) => tf.logSoftmax(z)); // [110, V] each
   */
  forwardLogitChunks<T extends tf.TensorContainer>(inputIds: Int32Array, attentionMaskIn: Uint8Array, batchSize: number, seqLen: number, chunkRows: number, each: (logits: tf.Tensor2D, start: number) => T): T[] {
    this.checkAlive();
    this.checkIds(inputIds, attentionMaskIn, batchSize, seqLen);
    if (!(Number.isInteger(chunkRows) && chunkRows >= 1)) throw InvalidArgumentError.format('chunkRows', `expected a positive integer, got ${chunkRows}`);
    const positions = positionsFromMask(attentionMaskIn, batchSize, seqLen, new Int32Array(batchSize));
    const maskValues = attentionMask(new Uint8Array(0), 0, attentionMaskIn, batchSize, seqLen);
    const normed = tf.tidy(() => {
      const mask = tf.tensor4d(maskValues, [batchSize, 1, seqLen, seqLen]);
      const rope = this.ropeFor(positions, batchSize, seqLen);
      return this.finalNorm(this.decoder(inputIds, batchSize, seqLen, rope, (_, q, k, v) => attend(q, k, v, mask), { release: true }));
    });
    try {
      const out: T[] = [];
      const n = batchSize * seqLen;
      for (let start = 0; start < n; start += chunkRows) {
        const rows = Math.min(chunkRows, n - start);
        out.push(tf.tidy(() => each(this.project(tf.slice(normed, [start, 0], [rows, normed.shape[1]]) as tf.Tensor2D), start)));
      }
      return out;
    } finally {
      normed.dispose();
    }
  }

  /** An empty cache sized for this model. */
  createCache(rows: number, capacity: number): KvCache {
    return this.sampling.createCache(rows, capacity);
  }

  /**
   * Appends a chunk of `seqLen` tokens per row to `cache` (a prefill when the cache is empty) and
   * returns the next-token logits after each row's last chunk column, `[rows, vocab]` (raw, no
   * temperature). Chunks are left-padded: `mask` 0 marks pads, and a row's last column must be a
   * real token for its logits to mean anything. The caller disposes the logits.
   */
  extend(cache: KvCache, inputIds: Int32Array, mask: Uint8Array, seqLen: number): tf.Tensor2D {
    this.checkAlive();
    this.checkIds(inputIds, mask, cache.rows, seqLen);
    return this.sampling.extend(cache, inputIds, mask, seqLen);
  }

  /**
   * Packed ("varlen") extend: appends `tokens[r]` (ragged, no padding) to the one-row cache
   * `caches[r]` of each row — empty caches (prefill) and cached ones of any lengths may share a
   * call — and returns the next-token logits after each row's last new token, `[rows, vocab]`
   * (raw). Same results as {@link extend} row by row, within float rounding, with one kernel
   * dispatch per op for the whole batch (transformer/inference.ts). The caller disposes the logits.
   * @example
   * const caches = [model.createCache(1, 16), model.createCache(1, 16)];
   * const logits = model.extendPacked(caches, [Int32Array.from([7, 8, 9]), Int32Array.from([4])]); // [2, V]
   */
  extendPacked(caches: readonly KvCache[], tokens: readonly Int32Array[], options?: PackedOptions): tf.Tensor2D {
    this.checkAlive();
    return this.sampling.extendPacked(caches, tokens, options);
  }

  /**
   * A decode step — `ids[r]`, one real token per row, appended to `cache` — as native calls where
   * the addon runs them (wasm): the next-token logits `[rows * vocab]` in a buffer the model reuses
   * (read it before the next step), the same values as {@link extend} gives. Null when it does not
   * apply here (another backend, no addon, an empty cache): nothing changed, call {@link extend}.
   * @example const logits = model.decodeStep(cache, next) ?? (await model.extend(cache, next, ones, 1).data());
   */
  decodeStep(cache: KvCache, ids: Int32Array): Float32Array | null {
    this.checkAlive();
    const { nLayers } = this.config;
    if (cache.shape.nLayers !== nLayers || cache.shape.nHeads !== kvHeads(this.config) || cache.shape.headDim !== headDim(this.config)) {
      throw InvalidArgumentError.format('cache', `shape ${JSON.stringify(cache.shape)} does not match the model`);
    }
    return this.nativeDecoder.step(cache, ids);
  }

  /** Frees every variable and constant; the model is unusable afterwards. */
  dispose(): void {
    if (this.disposed) return;
    this.sampling.dispose();
    this.store.dispose();
    this.unusedMask?.dispose();
    this.rotate.dispose();
    this.embedCache = null;
    this.disposed = true;
  }

  /** The decoder stack: embeddings -> blocks; returns the residual stream `[batch * seqLen, d]`. */
  private decoder(
    ids: Int32Array,
    batch: number,
    seqLen: number,
    rope: RopeFactors,
    attention: AttentionFn,
    options: DecoderOptions = {},
  ): tf.Tensor2D {
    const { drop, release, checkpointMask } = options;
    let x = this.embed(ids); // [B*T, d]
    for (let i = 0; i < this.config.nLayers; i++) {
      if (checkpointMask !== undefined && !release) {
        // The layer reads the rope factors and mask it is handed: in the backward pass, the saved copies.
        x = checkpointedLayer(x, [rope.cos, rope.sin, checkpointMask], this.layerVariables(i), (h, [cos, sin, m]) =>
          this.decoderLayer(i, h, batch, seqLen, { cos: cos as tf.Tensor4D, sin: sin as tf.Tensor4D, rotate: rope.rotate }, (_, q, k, v) => attend(q, k, v, m as tf.Tensor4D), {
            drop: drop?.(i),
          }),
        );
      } else if (release) {
        // Inference: free each layer's intermediates as soon as the next residual stream exists
        // (one tidy over the whole stack would hold every layer's, ~2.4 GB for a 64-row prefill at 135M).
        const next = tf.tidy(() => this.decoderLayer(i, x, batch, seqLen, rope, attention, {}));
        x.dispose();
        x = next;
      } else {
        x = this.decoderLayer(i, x, batch, seqLen, rope, attention, { drop: drop?.(i) });
      }
    }
    return x;
  }

  /** One decoder block on the residual stream `x` `[B*T, d]`. */
  private decoderLayer(i: number, x: tf.Tensor2D, batch: number, seqLen: number, rope: RopeFactors, attention: AttentionFn, options: { drop?: (x: tf.Tensor2D) => tf.Tensor2D }): tf.Tensor2D {
    const { nHeads, rmsNormEps: eps } = this.config;
    const nKv = kvHeads(this.config);
    const { drop } = options;
    const w = this.block(i);
    const h = rmsNorm(x, w.inputNorm, eps); // [B*T, d]
    let q = splitHeads(project(h, w.q, drop), batch, seqLen, nHeads); // [B, H, T, hd]
    let k = splitHeads(project(h, w.k, drop), batch, seqLen, nKv); // [B, Hkv, T, hd]
    if (w.qNorm !== undefined && w.kNorm !== undefined) {
      q = rmsNorm(q, w.qNorm, eps);
      k = rmsNorm(k, w.kNorm, eps);
    }
    const v = splitHeads(project(h, w.v, drop), batch, seqLen, nKv);
    return mlpResidual(x, mergeHeads(attention(i, applyRope(q, rope), applyRope(k, rope), v)), w, eps, drop); // context [B*T, H*hd]
  }

  /** How a training forward runs its decoder: LoRA dropout, and checkpointed layers when asked for. */
  private trainingDecoder(batch: TrainBatch, mask: tf.Tensor4D): DecoderOptions {
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

  /** The trainable variables decoder layer `layer` reads (its adapters, or all its weights when the model trains in full). */
  private layerVariables(layer: number): tf.Variable[] {
    const w = this.block(layer);
    const tensors: (tf.Tensor | undefined)[] = [w.inputNorm, w.qNorm, w.kNorm, w.postNorm];
    for (const p of [w.q, w.k, w.v, w.o, w.gate, w.up, w.down]) tensors.push(p.weight, p.bias, p.lora?.a, p.lora?.b);
    return tensors.filter((t): t is tf.Variable => t instanceof tf.Variable && t.trainable);
  }

  /** The weights of decoder block `layer` (the variables themselves, read by both forward paths). */
  private block(layer: number): BlockWeights {
    const p = `model.layers.${layer}`;
    const proj = (name: string): Projection => {
      const bias = this.store.find(`${p}.${name}.bias`) as tf.Tensor as tf.Tensor1D | undefined;
      const lora = this.store.loraOf(`${p}.${name}`);
      return { weight: this.weight2d(`${p}.${name}.weight`), ...(bias === undefined ? {} : { bias }), ...(lora === undefined ? {} : { lora }) };
    };
    const qkNorm = this.config.qkNorm === true;
    return {
      inputNorm: this.weight1d(`${p}.input_layernorm.weight`),
      q: proj('self_attn.q_proj'),
      k: proj('self_attn.k_proj'),
      v: proj('self_attn.v_proj'),
      o: proj('self_attn.o_proj'),
      ...(qkNorm ? { qNorm: this.weight1d(`${p}.self_attn.q_norm.weight`), kNorm: this.weight1d(`${p}.self_attn.k_norm.weight`) } : {}),
      postNorm: this.weight1d(`${p}.post_attention_layernorm.weight`),
      gate: proj('mlp.gate_proj'),
      up: proj('mlp.up_proj'),
      down: proj('mlp.down_proj'),
    };
  }

  /** Token embeddings `[n, d]`: a CPU row copy for tables that fit (see `embedRows`), else `tf.gather`. */
  private embed(ids: Int32Array): tf.Tensor2D {
    const table = this.weight2d('model.embed_tokens.weight');
    if (table.size > CPU_EMBED_LIMIT) return tf.gather(table, tf.tensor1d(ids, 'int32'));
    // Variables get a new dataId on every assign (optimizer step, load), so this re-reads once per version.
    if (this.embedCache?.dataId !== table.dataId) this.embedCache = { dataId: table.dataId, data: table.dataSync() as Float32Array };
    return embedRows(table, ids, this.embedCache.data);
  }

  /** Final norm + LM head on selected rows: `[n, d] -> [n, vocab]`. */
  private head(hidden: tf.Tensor2D): tf.Tensor2D {
    return this.project(this.finalNorm(hidden));
  }

  /** Final RMSNorm: `[n, d] -> [n, d]`. */
  private finalNorm(hidden: tf.Tensor2D): tf.Tensor2D {
    return rmsNorm(hidden, this.weight1d('model.norm.weight'), this.config.rmsNormEps);
  }

  /** LM head on normed rows: `[n, d] -> [n, vocab]`. */
  private project(normed: tf.Tensor2D): tf.Tensor2D {
    if (this.config.tieEmbeddings) return tf.matMul(normed, this.weight2d('model.embed_tokens.weight'), false, true);
    return tf.matMul(normed, this.weight2d('lm_head.weight')); // stored [d, V]
  }

  private ropeFor(positions: Int32Array, batch: number, seqLen: number): RopeFactors {
    this.checkPositions(positions);
    let highest = 0;
    for (const p of positions) if (p > highest) highest = p;
    this.rope.ensure(highest + 1);
    return ropeFactors(this.rope, positions, batch, seqLen, headDim(this.config), this.rotate);
  }

  private checkPositions(positions: Int32Array): void {
    for (const p of positions) {
      if (p >= this.config.maxContext) {
        throw InvalidArgumentError.format('inputIds', `position ${p} exceeds maxContext ${this.config.maxContext}`);
      }
    }
  }

  private checkIds(ids: Int32Array, mask: Uint8Array, batch: number, seqLen: number): void {
    if (!Number.isInteger(batch) || batch < 0 || !Number.isInteger(seqLen) || seqLen < 1) {
      throw InvalidArgumentError.format('seqLen', `expected batch >= 0 and seqLen >= 1, got ${batch} x ${seqLen}`);
    }
    if (ids.length !== batch * seqLen) throw InvalidArgumentError.format('inputIds', `expected ${batch * seqLen} ids, got ${ids.length}`);
    if (mask.length !== batch * seqLen) throw InvalidArgumentError.format('attentionMask', `expected ${batch * seqLen} entries, got ${mask.length}`);
    const v = this.config.vocabSize;
    for (const id of ids) if (id < 0 || id >= v) throw InvalidArgumentError.format('inputIds', `id ${id} outside [0, ${v})`);
  }

  private checkAlive(): void {
    if (this.disposed) throw InvalidArgumentError.format('model', 'used after dispose()');
  }

  private weight(name: string): tf.Variable {
    if (this.disposed) throw InvalidArgumentError.format('model', 'used after dispose()');
    return this.store.get(name);
  }

  private weight1d(name: string): tf.Tensor1D {
    return this.weight(name) as tf.Tensor as tf.Tensor1D;
  }

  private weight2d(name: string): tf.Tensor2D {
    return this.weight(name) as tf.Tensor as tf.Tensor2D;
  }
}
