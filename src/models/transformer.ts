/**
 * A Llama-style decoder-only transformer in tfjs: token embedding, pre-RMSNorm blocks with rotary
 * causal multi-head attention and a SwiGLU MLP, final RMSNorm, LM head. Weights carry Hugging Face
 * Llama names (`namedWeights()` returns HF layout), so a real Llama checkpoint loads.
 *
 * Two forward paths share one decoder:
 * - `forwardTrain(batch, temperature)` (inside `tf.variableGrads`): full causal forward over a
 *   right-padded batch; only the `targetPositions` rows go through the LM head.
 * - `extend(cache, ids, mask, seqLen)` (sampling): appends a left-padded chunk to a {@link KvCache}
 *   (prefill when the cache is empty) and returns the next-token logits of each row.
 */
import { CheckpointError, InvalidArgumentError } from '../core/errors.js';
import type { Rng } from '../core/rng.js';
import { tf } from './backend/tf.js';
import { KvCache } from './kv-cache.js';
import { cpuAttention, useCpuAttention } from './transformer/cpu-attention.js';
import { type InferenceWeights, type PackedOptions, packedExtend } from './transformer/inference.js';
import type { TrainBatch } from './train-batch.js';
import { type HfLlamaConfig, headDim, type TransformerConfig, toHfConfig, validateTransformerConfig } from './transformer/config.js';
import {
  applyRope,
  attend,
  attentionMask,
  embedRows,
  MASK_VALUE,
  mergeHeads,
  positionsFromMask,
  type RopeFactors,
  rmsNorm,
  ropeFactors,
  ropeTable,
  rotateHalfMatrix,
  splitHeads,
  swiGlu,
  targetLogProbsAndEntropy,
} from './transformer/layers.js';
import { fromHfLayout, initialValues, type NamedWeight, storedShape, toHfLayout, type WeightSpec, weightSpecs } from './transformer/weights.js';

export type { HfLlamaConfig, TransformerConfig } from './transformer/config.js';
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

/** HF checkpoints carry these buffers; they are recomputed here, so loading skips them. */
const IGNORED_CHECKPOINT_SUFFIXES = ['rotary_emb.inv_freq'];

/** Embedding tables up to this many values are looked up on the CPU (see `embedRows`). */
const CPU_EMBED_LIMIT = 8_000_000;

/** Per layer: attention of the new roped queries/keys and values `[b, h, t, hd]` -> context `[b, h, t, hd]`. */
type AttentionFn = (layer: number, query: tf.Tensor4D, key: tf.Tensor4D, value: tf.Tensor4D) => tf.Tensor4D;

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
  private readonly specs: WeightSpec[];
  private readonly vars = new Map<string, tf.Variable>();
  private readonly rope: { cos: Float32Array; sin: Float32Array };
  private readonly rotate: tf.Tensor2D; // [headDim, headDim]
  private disposed = false;
  private embedCache: { dataId: object; data: Float32Array } | null = null;
  /** Per layer: the fused `[d, 3d]` q/k/v weight of the packed inference path and the dataIds it was built from. */
  private qkvCache: Array<{ ids: readonly object[]; fused: tf.Tensor2D } | undefined> = [];

  /** Builds a model with N(0, 0.02) weights drawn from `rng` (deterministic for a seed). */
  constructor(config: TransformerConfig, rng: Rng) {
    validateTransformerConfig(config);
    this.config = { ...config };
    this.specs = weightSpecs(config);
    this.specs.forEach((spec, i) => {
      const values = initialValues(spec, rng.fork('init', i));
      // Unnamed: tfjs variable names are global, and several models may coexist.
      this.vars.set(spec.name, tf.variable(tf.tensor(values, storedShape(spec)), true));
    });
    const hd = headDim(config);
    this.rope = ropeTable(config.maxContext, hd, config.ropeTheta);
    this.rotate = tf.keep(tf.tensor2d(rotateHalfMatrix(hd), [hd, hd]));
  }

  /** Total number of parameters. */
  get parameterCount(): number {
    let n = 0;
    for (const v of this.vars.values()) n += v.size;
    return n;
  }

  /** The trainable variables, in a fixed order (embedding, blocks, final norm, head). */
  trainableVariables(): tf.Variable[] {
    return this.specs.map((s) => this.weight(s.name));
  }

  /** The Llama `config.json` for this model. */
  toHfConfig(): HfLlamaConfig {
    return toHfConfig(this.config);
  }

  /**
   * Every weight under its HF name, in HF layout (Linear weights [out, in]); data are copies.
   * A tied model has no `lm_head.weight`.
   */
  namedWeights(): Map<string, NamedWeight> {
    const out = new Map<string, NamedWeight>();
    for (const spec of this.specs) {
      const stored = Float32Array.from(this.weight(spec.name).dataSync() as Float32Array);
      out.set(spec.name, toHfLayout(spec, stored));
    }
    return out;
  }

  /**
   * Loads HF-layout weights. Every weight of this config must be present with its HF shape
   * ({@link CheckpointError} names the missing or mismatched tensor); `lm_head.weight` is ignored
   * when embeddings are tied; an unknown name is an error (it means another architecture).
   */
  loadNamedWeights(weights: ReadonlyMap<string, NamedWeight>): void {
    const known = new Set(this.specs.map((s) => s.name));
    for (const name of weights.keys()) {
      const ignorable = IGNORED_CHECKPOINT_SUFFIXES.some((s) => name.endsWith(s)) || (name === 'lm_head.weight' && this.config.tieEmbeddings);
      if (!known.has(name) && !ignorable) throw new CheckpointError(name, 'unknown tensor for this model config');
    }
    const converted = this.specs.map((spec) => {
      const weight = weights.get(spec.name);
      if (weight === undefined) throw new CheckpointError(spec.name, 'missing tensor');
      return fromHfLayout(spec, weight);
    });
    this.specs.forEach((spec, i) => {
      const value = tf.tensor(converted[i], storedShape(spec));
      this.weight(spec.name).assign(value);
      value.dispose();
    });
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
    const oneHot = new Float32Array(n * v); // [N, V]
    for (let i = 0; i < n; i++) oneHot[i * v + targetIds[i]] = 1;
    const constraint = constraintMask(batch, v);
    return tf.tidy(() => {
      const mask = tf.tensor4d(maskValues, [b, 1, t, t]);
      const rope = this.ropeFor(positions, b, t);
      const hidden = this.decoder(batch.inputIds, b, t, rope, (_, q, k, val) => attend(q, k, val, mask)); // [B*T, d]
      // Every position a target, in order (dense targets): the rows are `hidden` itself; skip the slow wasm Gather.
      const selected = everyPosition(batch) ? hidden : tf.gather(hidden, tf.tensor1d(batch.targetPositions, 'int32')); // [N, d]
      const normed = this.finalNorm(selected); // [N, d]
      let logits = tf.div(this.project(normed), temperature); // [N, V]
      if (constraint !== null) logits = tf.add(logits, tf.tensor2d(constraint, [n, v]));
      const both = targetLogProbsAndEntropy(logits as tf.Tensor2D, tf.tensor2d(oneHot, [n, v])); // [2, N]
      const logprobs = tf.reshape(tf.slice(both, [0, 0], [1, n]), [n]) as tf.Tensor1D;
      const entropy = tf.reshape(tf.slice(both, [1, 0], [1, n]), [n]) as tf.Tensor1D;
      return withHidden ? { logprobs, entropy, hidden: normed } : { logprobs, entropy };
    });
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
      const hidden = this.decoder(inputIds, batchSize, seqLen, rope, (_, q, k, v) => attend(q, k, v, mask));
      return tf.reshape(this.head(hidden), [batchSize, seqLen, this.config.vocabSize]);
    });
  }

  /** An empty cache sized for this model. */
  createCache(rows: number, capacity: number): KvCache {
    const { nLayers, nHeads } = this.config;
    return new KvCache({ nLayers, nHeads, headDim: headDim(this.config) }, rows, capacity);
  }

  /**
   * Appends a chunk of `seqLen` tokens per row to `cache` (a prefill when the cache is empty) and
   * returns the next-token logits after each row's last chunk column, `[rows, vocab]` (raw, no
   * temperature). Chunks are left-padded: `mask` 0 marks pads, and a row's last column must be a
   * real token for its logits to mean anything. The caller disposes the logits.
   */
  extend(cache: KvCache, inputIds: Int32Array, mask: Uint8Array, seqLen: number): tf.Tensor2D {
    this.checkAlive();
    const rows = cache.rows;
    this.checkIds(inputIds, mask, rows, seqLen);
    const { nLayers, nHeads } = this.config;
    const hd = headDim(this.config);
    if (cache.shape.nLayers !== nLayers || cache.shape.nHeads !== nHeads || cache.shape.headDim !== hd) {
      throw InvalidArgumentError.format('cache', `shape ${JSON.stringify(cache.shape)} does not match the model`);
    }
    cache.reserve(seqLen);
    const past = cache.length;
    const slots = cache.capacity;
    const prefill = past === 0;
    const positions = positionsFromMask(mask, rows, seqLen, cache.nextPositions);
    // Prefill attends over the fresh keys only; decode steps over every cache slot (unused ones masked).
    const keySlots = prefill ? seqLen : slots;
    let maskTensor: tf.Tensor4D | null = null; // created inside the tidy below, shared by the layers
    const maskT = () => {
      maskTensor ??= tf.tensor4d(attentionMask(cache.keyMask, past, mask, rows, seqLen, keySlots, slots), [rows, 1, seqLen, keySlots]);
      return maskTensor;
    };
    // Small decode steps (a few new tokens over a cache, few rows) attend in JS over the cache
    // buffers: no cache upload and five fewer kernel dispatches per layer (transformer/cpu-attention.ts).
    const cpu = !prefill && useCpuAttention(rows, nHeads, seqLen, slots, hd);
    const pastMask = cpu ? cache.keyMask : null; // read before advance() below marks the new slots
    const attention: AttentionFn = (layer, query, key, value) => {
      cache.write(layer, key.dataSync(), value.dataSync(), seqLen);
      if (prefill) return attend(query, key, value, maskT());
      if (pastMask !== null) {
        const buffers = cache.layerBuffers(layer);
        const shape = { rows, heads: nHeads, queries: seqLen, headDim: hd, past, capacity: slots };
        const context = cpuAttention(query.dataSync() as Float32Array, buffers.key, buffers.value, pastMask, mask, shape);
        return tf.tensor4d(context, [rows, nHeads, seqLen, hd]);
      }
      // Decode: upload the whole cache buffer (a memcpy) rather than tf.concat (slow on wasm).
      const buffers = cache.layerBuffers(layer);
      const fullKey = tf.tensor4d(buffers.key, [rows, nHeads, slots, hd]);
      const fullValue = tf.tensor4d(buffers.value, [rows, nHeads, slots, hd]);
      return attend(query, fullKey, fullValue, maskT());
    };
    const logits = tf.tidy(() => {
      const hidden = this.decoder(inputIds, rows, seqLen, this.ropeFor(positions, rows, seqLen), attention);
      if (seqLen === 1) return this.head(hidden);
      const last = new Int32Array(rows).map((_, r) => r * seqLen + seqLen - 1);
      return this.head(tf.gather(hidden, tf.tensor1d(last, 'int32'))); // [rows, V]
    });
    cache.advance(mask, seqLen);
    return logits;
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
    return packedExtend(this.inferenceWeights(), caches, tokens, options);
  }

  /** The weights view {@link extendPacked} reads (transformer/inference.ts). */
  private inferenceWeights(): InferenceWeights {
    return {
      config: this.config,
      rope: this.rope,
      embed: (ids) => this.embed(ids),
      weight1d: (name) => this.weight1d(name),
      weight2d: (name) => this.weight2d(name),
      fusedQkv: (layer) => this.fusedQkv(layer),
      head: (hidden) => this.head(hidden),
    };
  }

  /** `[d, 3d]` = concat(q, k, v) of a layer, rebuilt when any of them was reassigned (new dataId). */
  private fusedQkv(layer: number): tf.Tensor2D {
    const p = `model.layers.${layer}.self_attn`;
    const parts = [this.weight2d(`${p}.q_proj.weight`), this.weight2d(`${p}.k_proj.weight`), this.weight2d(`${p}.v_proj.weight`)];
    const cached = this.qkvCache[layer];
    if (cached?.ids.every((id, i) => id === parts[i].dataId)) return cached.fused;
    cached?.fused.dispose();
    const fused = tf.keep(tf.concat(parts, 1));
    this.qkvCache[layer] = { ids: parts.map((w) => w.dataId), fused };
    return fused;
  }

  /** Frees every variable and constant; the model is unusable afterwards. */
  dispose(): void {
    if (this.disposed) return;
    for (const entry of this.qkvCache) entry?.fused.dispose();
    this.qkvCache = [];
    for (const v of this.vars.values()) v.dispose();
    this.vars.clear();
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
  ): tf.Tensor2D {
    const { nHeads, nLayers, rmsNormEps: eps } = this.config;
    let x = this.embed(ids); // [B*T, d]
    for (let i = 0; i < nLayers; i++) {
      const p = `model.layers.${i}`;
      const h = rmsNorm(x, this.weight1d(`${p}.input_layernorm.weight`), eps); // [B*T, d]
      const q = applyRope(splitHeads(tf.matMul(h, this.weight2d(`${p}.self_attn.q_proj.weight`)), batch, seqLen, nHeads), rope); // [B, H, T, hd]
      const k = applyRope(splitHeads(tf.matMul(h, this.weight2d(`${p}.self_attn.k_proj.weight`)), batch, seqLen, nHeads), rope);
      const v = splitHeads(tf.matMul(h, this.weight2d(`${p}.self_attn.v_proj.weight`)), batch, seqLen, nHeads);
      const context = mergeHeads(attention(i, q, k, v)); // [B*T, d]
      x = tf.add(x, tf.matMul(context, this.weight2d(`${p}.self_attn.o_proj.weight`)));
      const h2 = rmsNorm(x, this.weight1d(`${p}.post_attention_layernorm.weight`), eps);
      const mlp = swiGlu(
        h2,
        this.weight2d(`${p}.mlp.gate_proj.weight`),
        this.weight2d(`${p}.mlp.up_proj.weight`),
        this.weight2d(`${p}.mlp.down_proj.weight`),
      );
      x = tf.add(x, mlp);
    }
    return x;
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
    const v = this.vars.get(name);
    if (v === undefined) throw InvalidArgumentError.format('model', this.disposed ? 'used after dispose()' : `no weight ${name}`);
    return v;
  }

  private weight1d(name: string): tf.Tensor1D {
    return this.weight(name) as tf.Tensor as tf.Tensor1D;
  }

  private weight2d(name: string): tf.Tensor2D {
    return this.weight(name) as tf.Tensor as tf.Tensor2D;
  }
}

/** Checks a {@link TrainBatch} against the model config; throws naming the field. */
function validateTrainBatch(batch: TrainBatch, config: TransformerConfig): void {
  const { batchSize: b, seqLen: t } = batch;
  if (!Number.isInteger(b) || b < 1) throw InvalidArgumentError.format('batch.batchSize', `expected a positive integer, got ${b}`);
  if (!Number.isInteger(t) || t < 1 || t > config.maxContext) {
    throw InvalidArgumentError.format('batch.seqLen', `expected 1..${config.maxContext}, got ${t}`);
  }
  if (batch.inputIds.length !== b * t) throw InvalidArgumentError.format('batch.inputIds', `expected ${b * t} ids, got ${batch.inputIds.length}`);
  if (batch.attentionMask.length !== b * t) {
    throw InvalidArgumentError.format('batch.attentionMask', `expected ${b * t} entries, got ${batch.attentionMask.length}`);
  }
  const v = config.vocabSize;
  for (const id of batch.inputIds) if (id < 0 || id >= v) throw InvalidArgumentError.format('batch.inputIds', `id ${id} outside [0, ${v})`);
  const n = batch.targetIds.length;
  if (batch.targetPositions.length !== n) {
    throw InvalidArgumentError.format('batch.targetPositions', `expected ${n} entries (one per target), got ${batch.targetPositions.length}`);
  }
  for (const p of batch.targetPositions) if (p < 0 || p >= b * t) throw InvalidArgumentError.format('batch.targetPositions', `${p} outside [0, ${b * t})`);
  for (const id of batch.targetIds) if (id < 0 || id >= v) throw InvalidArgumentError.format('batch.targetIds', `id ${id} outside [0, ${v})`);
  const { allowedOffsets: off, allowedIds: ids } = batch;
  if ((off === null) !== (ids === null)) throw InvalidArgumentError.format('batch.allowedOffsets', 'allowedOffsets and allowedIds must both be set or both null');
  if (off !== null && ids !== null) {
    if (off.length !== n + 1) throw InvalidArgumentError.format('batch.allowedOffsets', `expected ${n + 1} offsets, got ${off.length}`);
    if (off[0] !== 0 || off[n] !== ids.length) throw InvalidArgumentError.format('batch.allowedOffsets', `must run from 0 to ${ids.length}`);
    for (let i = 0; i < n; i++) if (off[i + 1] < off[i]) throw InvalidArgumentError.format('batch.allowedOffsets', `decreasing at ${i}`);
    for (const id of ids) if (id < 0 || id >= v) throw InvalidArgumentError.format('batch.allowedIds', `id ${id} outside [0, ${v})`);
  }
}

/** True when the targets are exactly positions 0..B·T-1 in order (training forward, issue #10). */
function everyPosition(batch: TrainBatch): boolean {
  const p = batch.targetPositions;
  if (p.length !== batch.batchSize * batch.seqLen) return false;
  for (let i = 0; i < p.length; i++) if (p[i] !== i) return false;
  return true;
}

/** [N, V] additive constraint mask from the CSR (null when no target is constrained). */
function constraintMask(batch: TrainBatch, v: number): Float32Array | null {
  const { allowedOffsets: off, allowedIds: ids } = batch;
  if (off === null || ids === null || ids.length === 0) return null;
  const n = batch.targetIds.length;
  const out = new Float32Array(n * v);
  for (let i = 0; i < n; i++) {
    if (off[i + 1] === off[i]) continue; // empty range: unconstrained
    out.fill(MASK_VALUE, i * v, (i + 1) * v);
    for (let j = off[i]; j < off[i + 1]; j++) out[i * v + ids[j]] = 0;
  }
  return out;
}
