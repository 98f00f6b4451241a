/**
 * A Llama-style decoder-only transformer in tfjs: token embedding, pre-RMSNorm blocks with rotary
 * causal multi-head attention and a SwiGLU MLP, final RMSNorm, LM head. Weights carry Hugging Face
 * Llama names (`namedWeights()` returns HF layout), so a real Llama checkpoint loads.
 *
 * This file is the model's face; each path lives beside it, all over one decoder (decoder.ts):
 * - `forwardTrain(batch, temperature)` (inside `tf.variableGrads`): training-forward.ts, the full
 *   causal forward over a right-padded batch with only the `targetPositions` rows through the LM
 *   head, activation checkpointing (checkpointed-layer.ts) when it is on.
 * - `extend(cache, ids, mask, seqLen)` / `extendPacked(caches, tokens)` (sampling): append new
 *   tokens to a {@link KvCache} and return the next-token logits of each row (cached-forward.ts).
 * - `decodeStep(cache, ids)`: one decode step as native calls where the addon runs them (native-decode.ts).
 * - the weights, base and LoRA adapters: weight-store.ts.
 */
import { CheckpointError, InvalidArgumentError } from '../../core/errors.js';
import type { Rng } from '../../core/rng.js';
import { tf } from '../../backend/tf.js';
import { type ConfigTokenIds, writeHfConfig } from '../hf/hf-config.js';
import type { KvCache } from '../kv-cache.js';
import type { LoraSpec } from '../lora/lora.js';
import type { TrainBatch } from '../train-batch.js';
import { CachedForward } from './cached-forward.js';
import { headDim, kvHeads, type TransformerConfig, validateTransformerConfig } from './config.js';
import { Decoder } from './decoder.js';
import type { PackedOptions } from './inference.js';
import { attend, attentionMask, positionsFromMask } from './layers.js';
import { NativeDecoder } from './native-decode.js';
import { type TrainForward, type TrainForwardWithHidden, TrainingForward } from './training-forward.js';
import { WeightStore } from './weight-store.js';
import type { NamedWeight } from './weights.js';

export type { TransformerConfig } from './config.js';
export type { TrainForward, TrainForwardWithHidden } from './training-forward.js';
export type { NamedWeight } from './weights.js';

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
  private readonly decoder: Decoder;
  private readonly training: TrainingForward;
  private disposed = false;
  /** The KV-cached sampling forwards, reading this model's decoder (cached-forward.ts). */
  private readonly sampling: CachedForward;
  /** Decode steps as one native call per layer where the addon runs them (native-decode.ts). */
  private readonly nativeDecoder: NativeDecoder;

  /**
   * Builds a model with N(0, 0.02) weights drawn from `rng` (deterministic for a seed), or with
   * the given HF-layout weights (see {@link TransformerModel.fromNamedWeights}).
   */
  constructor(config: TransformerConfig, source: Rng | ReadonlyMap<string, NamedWeight> | WeightStore) {
    validateTransformerConfig(config);
    this.config = { ...config };
    this.store = source instanceof WeightStore ? source : new WeightStore(this.config, source);
    const decoder = new Decoder(this.config, this.store);
    this.decoder = decoder;
    this.training = new TrainingForward(this.config, decoder, this.store);
    this.sampling = new CachedForward({
      config: this.config,
      rope: decoder.rope,
      embed: (ids) => decoder.embed(ids),
      block: (layer) => decoder.block(layer),
      decode: (ids, batch, seqLen, positions, attention) => decoder.run(ids, batch, seqLen, decoder.ropeFor(positions, batch, seqLen), attention, { release: true }),
      head: (hidden) => decoder.head(hidden),
    });
    this.nativeDecoder = new NativeDecoder({
      config: this.config,
      rope: decoder.rope,
      block: (layer) => decoder.block(layer),
      embedding: () => decoder.weight2d('model.embed_tokens.weight'),
      head: () => ({ norm: decoder.weight1d('model.norm.weight'), weight: decoder.headWeight(), tied: this.config.tieEmbeddings }),
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
    this.training.restrictOutputs(n);
  }

  /** Ids the model can emit: `[0, outputVocab)` (see {@link restrictOutputs}). */
  get outputVocab(): number {
    return this.training.outputVocab;
  }

  /**
   * Activation checkpointing of the training forwards (checkpointed-layer.ts): each
   * decoder layer keeps only its input for the backward pass and runs again there. Same values and
   * gradients (within float rounding); about a third more compute, a fraction of the memory.
   * @example model.checkpointActivations(true) // a pretrained model's training at a 512-token context
   */
  checkpointActivations(on: boolean): void {
    this.training.checkpointing = on;
  }

  /** Whether {@link checkpointActivations} is on. */
  get checkpointsActivations(): boolean {
    return this.training.checkpointing;
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
    this.checkAlive();
    return this.training.forward(batch, temperature, false);
  }

  /**
   * {@link forwardTrain} plus the final-normed hidden states at the target positions, for a value
   * head on the policy trunk (PPO with a shared critic). Same math, one decoder pass.
   * @example
   * const { logprobs, hidden } = model.forwardTrainWithHidden(batch, 1); // hidden [N, dModel]
   */
  forwardTrainWithHidden(batch: TrainBatch, temperature: number): TrainForwardWithHidden {
    this.checkAlive();
    return this.training.forward(batch, temperature, true) as TrainForwardWithHidden;
  }

  /**
   * Final-normed hidden states at `batch.targetPositions`, `[N, dModel]`, without the LM head: the
   * trunk of a separate critic model. Call inside `tf.variableGrads` to train it.
   * @example const hidden = critic.forwardHidden(batch); // [N, dModel]
   */
  forwardHidden(batch: TrainBatch): tf.Tensor2D {
    this.checkAlive();
    return this.training.hidden(batch);
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
      const rope = this.decoder.ropeFor(positions, batchSize, seqLen);
      const hidden = this.decoder.run(inputIds, batchSize, seqLen, rope, (_, q, k, v) => attend(q, k, v, mask, 'infer'), { release: true });
      return tf.reshape(this.decoder.head(hidden), [batchSize, seqLen, this.config.vocabSize]);
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
    const hidden = tf.tidy(() => {
      const mask = tf.tensor4d(maskValues, [batchSize, 1, seqLen, seqLen]);
      const rope = this.decoder.ropeFor(positions, batchSize, seqLen);
      return this.decoder.run(inputIds, batchSize, seqLen, rope, (_, q, k, v) => attend(q, k, v, mask, 'infer'), { release: true }); // [B*T, d]
    });
    try {
      const out: T[] = [];
      const n = batchSize * seqLen;
      for (let start = 0; start < n; start += chunkRows) {
        const rows = Math.min(chunkRows, n - start);
        // The final norm is per row, so normalising a chunk gives that chunk of the whole.
        out.push(tf.tidy(() => each(this.decoder.head(tf.slice(hidden, [start, 0], [rows, hidden.shape[1]]) as tf.Tensor2D), start)));
      }
      return out;
    } finally {
      hidden.dispose();
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
   * dispatch per op for the whole batch (inference.ts). The caller disposes the logits.
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
    this.training.dispose();
    this.decoder.dispose();
    this.disposed = true;
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
}
