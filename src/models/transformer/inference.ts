/**
 * The packed ("varlen") inference forward: every row's new tokens in one `[sumNew, d]` matrix, so
 * each per-token op (embedding, RMSNorm, the fused q/k/v projection, o-projection, SwiGLU MLP)
 * is ONE kernel dispatch for the whole batch, with no padding; only attention follows the row
 * structure, per group of rows with similar spans over each row's own one-row KV cache
 * (transformer/grouped-attention.ts: tfjs for prefill-sized chunks, JS for decode-sized ones).
 *
 * Why (issue #10 part F): the padded path (`TransformerModel.extend`) pays ~100 kernels per call
 * and pads ragged rows, so the sampler split a B = 64 batch into many tight buckets, each paying
 * those kernels again, and merged the rows' cached prefixes into one padded cache first. Attention
 * itself costs the same here (its work per row does not shrink with batching; bench/RESULTS.md,
 * issue 10 part F, measures where the time goes). Per layer this path runs 22 kernels: RMSNorm
 * (6), q/k/v as one matMul with a concatenated weight, o-projection + residual (2), RMSNorm (6),
 * SwiGLU (6, gate and up kept apart since wasm Slice copies its whole input), residual (1) —
 * plus 5 per attention group (none for groups attended in JS), and no transposes (the projection
 * output is already `[token, head, headDim]`; RoPE runs on the values read back, natively with the
 * addon). Its work buffers are pooled per model (scratch.ts): a call allocates no arrays a layer.
 */
import { InvalidArgumentError } from '../../core/errors.js';
import { readFloatsInto } from '../../backend/read-into.js';
import { tf } from '../../backend/tf.js';
import type { KvCache } from '../kv-cache.js';
import { headDim, kvHeads, queryWidth, type TransformerConfig } from './config.js';
import { type BlockWeights, type FusedProjection, mlpResidual, rmsNorm } from './layers.js';
import type { RopeTable } from './rope.js';
import { attendGroups, attentionGroups } from './grouped-attention.js';
import { ropePackedInPlace, writePackedKv } from './packed-attention.js';
import { ScratchPool } from './scratch.js';

/** Attention groups split when a row's span falls below this fraction of its group's (grouped-attention.ts). */
export const DEFAULT_GROUP_RATIO = 0.9;

/** Most padded attention scores (floats) one attention group may hold: 24 Mi = 96 MB. */
export const DEFAULT_MAX_SCORES = 24 * 2 ** 20;

/** Tuning of {@link packedExtend}. */
export interface PackedOptions {
  /** Attention groups split below this fraction of the group's span or width. Default {@link DEFAULT_GROUP_RATIO}. */
  readonly groupRatio?: number;
  /** Padded attention scores one group may hold. Default {@link DEFAULT_MAX_SCORES}. */
  readonly maxScores?: number;
}

/** What the packed forward reads from a model (its weights stay private to it). */
export interface InferenceWeights {
  readonly config: TransformerConfig;
  /** RoPE cos/sin table (grown on demand). */
  readonly rope: RopeTable;
  /** Token embeddings `[n, d]`. */
  embed(ids: Int32Array): tf.Tensor2D;
  /** The weights of decoder block `layer`. */
  block(layer: number): BlockWeights;
  /** `[d, q + 2 * kv]`: the layer's q, k and v projections side by side, with their biases (kept by the model). */
  fusedQkv(layer: number): FusedProjection;
  /** Final norm + LM head: `[n, d] -> [n, vocab]`. */
  head(hidden: tf.Tensor2D): tf.Tensor2D;
  /** Work buffers kept between calls (the model's); without one, a call's own pool is shared by its layers only. */
  readonly scratch?: ScratchPool;
}

/**
 * Appends `tokens[r]` to the one-row cache `caches[r]` for every row r (a prefill when that cache
 * is empty; rows may mix empty and cached caches of any lengths) and returns the next-token
 * logits after each row's last new token, `[rows, vocab]` (raw). The caller disposes the logits.
 * @example
 * const logits = packedExtend(weights, [model.createCache(1, 16), cached], [prompt, observation]); // [2, V]
 */
export function packedExtend(weights: InferenceWeights, caches: readonly KvCache[], tokens: readonly Int32Array[], options: PackedOptions = {}): tf.Tensor2D {
  const { config } = weights;
  const { nLayers, nHeads, vocabSize, maxContext, rmsNormEps: eps } = config;
  const hd = headDim(config);
  const nKv = kvHeads(config);
  const qWidth = queryWidth(config);
  if (caches.length !== tokens.length) throw InvalidArgumentError.format('tokens', `expected ${caches.length} rows (one per cache), got ${tokens.length}`);
  if (caches.length === 0) throw InvalidArgumentError.format('caches', 'expected at least one row');
  const offsets = new Int32Array(caches.length + 1);
  // Plain loops: a closure made per call was recompiled by V8 on nearly every call (see grouped-attention.ts).
  for (let r = 0; r < caches.length; r++) {
    const cache = caches[r];
    const { shape } = cache;
    if (cache.rows !== 1) throw InvalidArgumentError.format(`caches[${r}]`, `expected a one-row cache, got ${cache.rows} rows`);
    if (shape.nLayers !== nLayers || shape.nHeads !== nKv || shape.headDim !== hd) {
      throw InvalidArgumentError.format(`caches[${r}]`, `shape ${JSON.stringify(shape)} does not match the model`);
    }
    const ids = tokens[r];
    if (ids.length === 0) throw InvalidArgumentError.format(`tokens[${r}]`, 'expected at least one new token');
    for (const id of ids) if (id < 0 || id >= vocabSize) throw InvalidArgumentError.format(`tokens[${r}]`, `id ${id} outside [0, ${vocabSize})`);
    const last = cache.nextPositions[0] + ids.length - 1;
    if (last >= maxContext) throw InvalidArgumentError.format(`tokens[${r}]`, `position ${last} exceeds maxContext ${maxContext}`);
    offsets[r + 1] = offsets[r] + ids.length;
  }
  const n = offsets[caches.length];
  const ids = new Int32Array(n); // [n] packed
  const positions = new Int32Array(n);
  const pastLength = new Int32Array(caches.length);
  for (let r = 0; r < caches.length; r++) {
    const cache = caches[r];
    ids.set(tokens[r], offsets[r]);
    for (let j = 0; j < tokens[r].length; j++) positions[offsets[r] + j] = cache.nextPositions[0] + j;
    pastLength[r] = cache.length;
    cache.reserve(tokens[r].length);
  }
  const shape = { heads: nHeads, kvHeads: nKv, headDim: hd, offsets };
  let highest = 0;
  for (const p of positions) if (p > highest) highest = p;
  weights.rope.ensure(highest + 1);
  const masks: Array<Float32Array | undefined> = []; // per group, shared by the layers
  const groups = attentionGroups(pastLength, offsets, options.groupRatio ?? DEFAULT_GROUP_RATIO, nHeads, options.maxScores ?? DEFAULT_MAX_SCORES);
  const scratch = weights.scratch ?? new ScratchPool();
  const width = qWidth + 2 * nKv * hd;
  const packedLayer = (layer: number, x: tf.Tensor2D): tf.Tensor2D => {
    const block = weights.block(layer);
    const h = rmsNorm(x, block.inputNorm, eps);
    const fused = weights.fusedQkv(layer);
    const projected = fused.bias === undefined ? tf.matMul(h, fused.weight) : tf.add(tf.matMul(h, fused.weight), fused.bias);
    // Modified in place below: on wasm a pooled copy; on cpu the array backs a tensor nothing else reads.
    const qkv = readFloatsInto(projected, scratch.take('qkv', n * width)); // [n, q + 2 * kv]
    if (block.qNorm !== undefined && block.kNorm !== undefined) {
      headNormsInPlace(qkv, n, nHeads, nKv, hd, normWeights(block.qNorm), normWeights(block.kNorm), eps);
    }
    ropePackedInPlace(qkv, positions, weights.rope, nHeads, hd, nKv);
    writePackedKv(caches, layer, qkv, shape); // first: grouped attention reads new keys from the caches
    // Every element is written by attendGroups (each row is in one group), so stale contents never leak.
    const context = scratch.take('context', n * qWidth); // [n, heads * hd]
    attendGroups(qkv, caches, pastLength, layer, shape, groups, masks, context, scratch);
    return mlpResidual(x, tf.tensor2d(context, [n, qWidth]), block, eps);
  };
  const logits = tf.tidy(() => {
    let x = weights.embed(ids); // [n, d]
    for (let layer = 0; layer < nLayers; layer++) {
      // Each layer in its own tidy: its intermediates are freed before the next layer runs.
      const next = tf.tidy(() => packedLayer(layer, x));
      x.dispose();
      x = next;
    }
    if (n === caches.length) return weights.head(x); // one new token per row: every row is a last one
    const last = Int32Array.from({ length: caches.length }, (_, r) => offsets[r + 1] - 1);
    return weights.head(tf.gather(x, tf.tensor1d(last, 'int32'))); // [rows, V]
  });
  caches.forEach((cache, r) => {
    cache.advance(new Uint8Array(tokens[r].length).fill(1), tokens[r].length);
  });
  return logits;
}

/** The values of a q/k norm weight, read once per weights version (its dataId). */
const normCache = new WeakMap<object, Float32Array>();
function normWeights(weight: tf.Tensor1D): Float32Array {
  let values = normCache.get(weight.dataId);
  if (values === undefined) {
    values = weight.dataSync() as Float32Array;
    normCache.set(weight.dataId, values);
  }
  return values;
}

/**
 * Qwen3's per-head RMSNorm of queries and keys, in place on the fused projection rows
 * (`x / sqrt(mean(x²) + eps) * w` over each head vector), before RoPE.
 * @example headNormsInPlace(qkv, n, 16, 8, 128, qNorm, kNorm, 1e-6)
 */
export function headNormsInPlace(
  qkv: Float32Array,
  tokens: number,
  heads: number,
  kvHeadCount: number,
  headDimension: number,
  qNorm: Float32Array,
  kNorm: Float32Array,
  eps: number,
): void {
  const stride = (heads + 2 * kvHeadCount) * headDimension;
  for (let t = 0; t < tokens; t++) {
    for (let hv = 0; hv < heads + kvHeadCount; hv++) {
      const base = t * stride + hv * headDimension;
      const w = hv < heads ? qNorm : kNorm;
      let sum = 0;
      for (let e = 0; e < headDimension; e++) sum += qkv[base + e] * qkv[base + e];
      const inv = 1 / Math.sqrt(Math.fround(sum / headDimension) + eps);
      for (let e = 0; e < headDimension; e++) qkv[base + e] = Math.fround(qkv[base + e] * inv) * w[e];
    }
  }
}
