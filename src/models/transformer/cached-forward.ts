/**
 * The model's sampling path: forwards that append new tokens to a {@link KvCache} and return the
 * next-token logits. Two of them:
 * - `extend` (padded): a left-padded `[rows, seqLen]` chunk over one multi-row cache, through the
 *   model's own decoder with a cache-aware attention (prefill when the cache is empty; decode
 *   steps attend over the cache, in JS when small: transformer/cpu-attention.ts).
 * - `extendPacked` (varlen): ragged rows, each over its own one-row cache (transformer/inference.ts),
 *   reading each layer's q/k/v projections as one fused `[d, 3d]` weight kept here.
 *
 * The training forward lives in transformer.ts; this file only reads the model through a
 * {@link DecoderView}, so the two cannot disagree on the decoder itself.
 */
import { InvalidArgumentError } from '../../core/errors.js';
import { tf } from '../../backend/tf.js';
import { KvCache } from '../kv-cache.js';
import { headDim, kvHeads } from './config.js';
import { cpuAttention, useCpuAttention } from './cpu-attention.js';
import { type InferenceWeights, type PackedOptions, packedExtend } from './inference.js';
import { type AttentionFn, attend, attentionMask, type FusedProjection, type Projection, positionsFromMask } from './layers.js';
import { ScratchPool } from './scratch.js';

/** What the sampling path reads from a model (its weights stay private to it). */
export interface DecoderView extends Omit<InferenceWeights, 'fusedQkv'> {
  /** The decoder stack over `ids` (`[batch * seqLen]`) at `positions`, attending through `attention`: the residual stream `[batch * seqLen, d]`. */
  decode(ids: Int32Array, batch: number, seqLen: number, positions: Int32Array, attention: AttentionFn): tf.Tensor2D;
}

/**
 * The KV-cached forwards of one model; `TransformerModel` validates its arguments and delegates here.
 * @example
 * const sampling = new CachedForward(view);
 * const cache = sampling.createCache(2, 16);
 * const logits = sampling.extend(cache, ids, mask, 5); // [2, V]
 * sampling.dispose(); // frees the fused q/k/v weights
 */
export class CachedForward {
  /** Per layer: the fused `[d, 3d]` q/k/v weight of the packed path and the dataIds it was built from. */
  private qkvCache: Array<{ ids: readonly object[]; fused: FusedProjection } | undefined> = [];
  private readonly packedWeights: InferenceWeights;
  /** The packed path's work buffers, kept between calls (transformer/scratch.ts). */
  private readonly scratch = new ScratchPool();

  constructor(private readonly view: DecoderView) {
    this.packedWeights = {
      config: view.config,
      rope: view.rope,
      embed: (ids) => view.embed(ids),
      block: (layer) => view.block(layer),
      fusedQkv: (layer) => this.fusedQkv(layer),
      head: (hidden) => view.head(hidden),
      scratch: this.scratch,
    };
  }

  /** An empty cache sized for the model. */
  createCache(rows: number, capacity: number): KvCache {
    const { nLayers } = this.view.config;
    return new KvCache({ nLayers, nHeads: kvHeads(this.view.config), headDim: headDim(this.view.config) }, rows, capacity);
  }

  /**
   * Appends a left-padded chunk of `seqLen` tokens per row to `cache` and returns the next-token
   * logits after each row's last column, `[rows, vocab]` (see `TransformerModel.extend`; the ids
   * and mask are already checked there).
   */
  extend(cache: KvCache, inputIds: Int32Array, mask: Uint8Array, seqLen: number): tf.Tensor2D {
    const rows = cache.rows;
    const { nLayers, nHeads } = this.view.config;
    const nKv = kvHeads(this.view.config);
    const hd = headDim(this.view.config);
    if (cache.shape.nLayers !== nLayers || cache.shape.nHeads !== nKv || cache.shape.headDim !== hd) {
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
      // Kept: the layers run in their own tidies (the decoder frees each layer's intermediates).
      maskTensor ??= tf.keep(tf.tensor4d(attentionMask(cache.keyMask, past, mask, rows, seqLen, keySlots, slots), [rows, 1, seqLen, keySlots]));
      return maskTensor;
    };
    // Small decode steps (a few new tokens over a cache, few rows) attend in JS over the cache
    // buffers: no cache upload and five fewer kernel dispatches per layer (transformer/cpu-attention.ts).
    const cpu = !prefill && useCpuAttention(rows, nHeads, seqLen, slots, hd);
    const pastMask = cpu ? cache.keyMask : null; // read before advance() below marks the new slots
    const attention: AttentionFn = (layer, query, key, value) => {
      cache.write(layer, key.dataSync(), value.dataSync(), seqLen);
      if (prefill) return attend(query, key, value, maskT(), 'infer');
      if (pastMask !== null) {
        const buffers = cache.layerBuffers(layer);
        const shape = { rows, heads: nHeads, kvHeads: nKv, queries: seqLen, headDim: hd, past, capacity: slots };
        const context = cpuAttention(query.dataSync() as Float32Array, buffers.key, buffers.value, pastMask, mask, shape);
        return tf.tensor4d(context, [rows, nHeads, seqLen, hd]);
      }
      // Decode: upload the whole cache buffer (a memcpy) rather than tf.concat (slow on wasm).
      const buffers = cache.layerBuffers(layer);
      const fullKey = tf.tensor4d(buffers.key, [rows, nKv, slots, hd]);
      const fullValue = tf.tensor4d(buffers.value, [rows, nKv, slots, hd]);
      return attend(query, fullKey, fullValue, maskT(), 'infer');
    };
    let logits: tf.Tensor2D;
    try {
      logits = tf.tidy(() => {
        const hidden = this.view.decode(inputIds, rows, seqLen, positions, attention);
        if (seqLen === 1) return this.view.head(hidden);
        const last = new Int32Array(rows).map((_, r) => r * seqLen + seqLen - 1);
        return this.view.head(tf.gather(hidden, tf.tensor1d(last, 'int32'))); // [rows, V]
      });
    } finally {
      (maskTensor as tf.Tensor4D | null)?.dispose();
    }
    cache.advance(mask, seqLen);
    return logits;
  }

  /** Packed ("varlen") extend over one-row caches (see `TransformerModel.extendPacked`, transformer/inference.ts). */
  extendPacked(caches: readonly KvCache[], tokens: readonly Int32Array[], options?: PackedOptions): tf.Tensor2D {
    return packedExtend(this.packedWeights, caches, tokens, options);
  }

  /** Frees the fused weights and the work buffers; the next packed call would rebuild them. */
  dispose(): void {
    for (const entry of this.qkvCache) disposeFused(entry?.fused);
    this.qkvCache = [];
    this.scratch.clear();
  }

  /**
   * The layer's q, k and v projections side by side, `[d, q + 2 * kv]` (and their biases), rebuilt
   * when any of the tensors was reassigned (new dataId). A LoRA pair is merged in
   * (`W + scale * A·B`): sampling never applies dropout, so the merged weight gives the same outputs.
   */
  private fusedQkv(layer: number): FusedProjection {
    const { q, k, v } = this.view.block(layer);
    const parts = [q, k, v];
    const tensors = parts.flatMap((p) => [p.weight, p.bias, p.lora?.a, p.lora?.b].filter((t) => t !== undefined)) as tf.Tensor[];
    const cached = this.qkvCache[layer];
    if (cached !== undefined && cached.ids.length === tensors.length && cached.ids.every((id, i) => id === tensors[i].dataId)) return cached.fused;
    disposeFused(cached?.fused);
    const fused = tf.tidy(() => {
      const weight = tf.concat(parts.map(mergedWeight), 1) as tf.Tensor2D;
      const bias = parts.some((p) => p.bias !== undefined)
        ? (tf.concat(parts.map((p) => p.bias ?? tf.zeros([p.weight.shape[1]])), 0) as tf.Tensor1D)
        : undefined;
      return bias === undefined ? { weight } : { weight, bias };
    });
    tf.keep(fused.weight);
    if (fused.bias) tf.keep(fused.bias);
    this.qkvCache[layer] = { ids: tensors.map((t) => t.dataId), fused };
    return fused;
  }
}

function mergedWeight(p: Projection): tf.Tensor2D {
  if (p.lora === undefined) return p.weight;
  return tf.add(p.weight, tf.mul(tf.matMul(p.lora.a, p.lora.b), p.lora.scale));
}

function disposeFused(fused: FusedProjection | undefined): void {
  fused?.weight.dispose();
  fused?.bias?.dispose();
}
