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
 * output is already `[token, head, headDim]`; RoPE runs in JS on the values read back).
 */
import { InvalidArgumentError } from '../../core/errors.js';
import { tf } from '../backend/tf.js';
import type { KvCache } from '../kv-cache.js';
import type { TransformerConfig } from './config.js';
import { type BlockWeights, mlpResidual, rmsNorm } from './layers.js';
import { attendGroups, attentionGroups } from './grouped-attention.js';
import { ropePackedInPlace, writePackedKv } from './packed-attention.js';

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
  /** RoPE cos/sin tables `[maxContext, headDim]`. */
  readonly rope: { readonly cos: Float32Array; readonly sin: Float32Array };
  /** Token embeddings `[n, d]`. */
  embed(ids: Int32Array): tf.Tensor2D;
  /** The weights of decoder block `layer`. */
  block(layer: number): BlockWeights;
  /** `[d, 3 * d]`: the layer's q, k and v projections side by side (kept by the model). */
  fusedQkv(layer: number): tf.Tensor2D;
  /** Final norm + LM head: `[n, d] -> [n, vocab]`. */
  head(hidden: tf.Tensor2D): tf.Tensor2D;
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
  const { nLayers, nHeads, dModel, vocabSize, maxContext, rmsNormEps: eps } = config;
  const hd = dModel / nHeads;
  if (caches.length !== tokens.length) throw InvalidArgumentError.format('tokens', `expected ${caches.length} rows (one per cache), got ${tokens.length}`);
  if (caches.length === 0) throw InvalidArgumentError.format('caches', 'expected at least one row');
  const offsets = new Int32Array(caches.length + 1);
  caches.forEach((cache, r) => {
    const { shape } = cache;
    if (cache.rows !== 1) throw InvalidArgumentError.format(`caches[${r}]`, `expected a one-row cache, got ${cache.rows} rows`);
    if (shape.nLayers !== nLayers || shape.nHeads !== nHeads || shape.headDim !== hd) {
      throw InvalidArgumentError.format(`caches[${r}]`, `shape ${JSON.stringify(shape)} does not match the model`);
    }
    const ids = tokens[r];
    if (ids.length === 0) throw InvalidArgumentError.format(`tokens[${r}]`, 'expected at least one new token');
    for (const id of ids) if (id < 0 || id >= vocabSize) throw InvalidArgumentError.format(`tokens[${r}]`, `id ${id} outside [0, ${vocabSize})`);
    const last = cache.nextPositions[0] + ids.length - 1;
    if (last >= maxContext) throw InvalidArgumentError.format(`tokens[${r}]`, `position ${last} exceeds maxContext ${maxContext}`);
    offsets[r + 1] = offsets[r] + ids.length;
  });
  const n = offsets[caches.length];
  const ids = new Int32Array(n); // [n] packed
  const positions = new Int32Array(n);
  const pastLength = new Int32Array(caches.length);
  caches.forEach((cache, r) => {
    ids.set(tokens[r], offsets[r]);
    for (let j = 0; j < tokens[r].length; j++) positions[offsets[r] + j] = cache.nextPositions[0] + j;
    pastLength[r] = cache.length;
    cache.reserve(tokens[r].length);
  });
  const shape = { heads: nHeads, headDim: hd, offsets };
  const masks: Array<Float32Array | undefined> = []; // per group, shared by the layers
  const groups = attentionGroups(pastLength, offsets, options.groupRatio ?? DEFAULT_GROUP_RATIO, nHeads, options.maxScores ?? DEFAULT_MAX_SCORES);
  const logits = tf.tidy(() => {
    let x = weights.embed(ids); // [n, d]
    for (let layer = 0; layer < nLayers; layer++) {
      const block = weights.block(layer);
      const h = rmsNorm(x, block.inputNorm, eps);
      // A copy (wasm readSync copies; on cpu the array backs a tensor nothing else reads).
      const qkv = tf.matMul(h, weights.fusedQkv(layer)).dataSync() as Float32Array; // [n, 3d]
      ropePackedInPlace(qkv, positions, weights.rope, nHeads, hd);
      writePackedKv(caches, layer, qkv, shape); // first: grouped attention reads new keys from the caches
      const context = new Float32Array(n * dModel); // [n, d]
      attendGroups(qkv, caches, pastLength, layer, shape, groups, masks, context);
      x = mlpResidual(x, tf.tensor2d(context, [n, dModel]), block, eps);
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
