/**
 * RoPE and causal multi-head attention in plain JS over a *packed* ("varlen") batch: the new
 * tokens of every row laid end to end, `[sumNew, ...]`, with no padding, each row attending over
 * its own one-row KV cache plus its own new tokens.
 *
 * Why: the fused projection's output `[sumNew, 3 * d]` is already `[token, (q|k|v), head,
 * headDim]`, so RoPE and the cache writes need no head transpose kernels, and attention in JS
 * reads each row's cache in place at exactly its real (query, key) pairs: no padding, uploads or
 * dispatches. It is slow per pair, though (~100 ns per query·key·head on this machine, ~8x
 * XNNPACK's rate), so grouped-attention.ts uses it only for narrow chunks (decode-sized).
 *
 * Same semantics as `applyRope` + `attend` + `attentionMask`: query `i` of a row sees every real
 * cached slot of that row (`keyMask` 1) and new keys `j <= i`.
 */
import { InvalidArgumentError } from '../../core/errors.js';
import { nativeHostKernels } from '../../backend/native.js';
import type { KvCache } from '../kv-cache.js';

/** Sizes of a packed call. */
export interface PackedShape {
  /** Query heads. */
  readonly heads: number;
  /** Key/value heads (grouped-query attention: query head h reads kv head h / (heads / kvHeads)). */
  readonly kvHeads: number;
  readonly headDim: number;
  /** [rows + 1] start of each row's new tokens in the packed order; the last entry is sumNew. */
  readonly offsets: Int32Array;
}

/**
 * Applies RoPE in place to the q and k parts of a fused projection `[n, (heads + 2 * kvHeads) * hd]`
 * (HF layout: `x * cos + rotate_half(x) * sin`, `rotate_half(x) = cat(-x[half:], x[:half])`).
 * @example ropePackedInPlace(qkv, positions, ropeTable(1024, 16, 1e4), 4, 16) // qkv: [n, 3 * 64]
 */
export function ropePackedInPlace(
  qkv: Float32Array,
  positions: Int32Array,
  table: { readonly cos: Float32Array; readonly sin: Float32Array },
  heads: number,
  headDim: number,
  kvHeads = heads,
): void {
  const stride = (heads + 2 * kvHeads) * headDim;
  const n = positions.length;
  if (qkv.length !== n * stride) throw InvalidArgumentError.format('qkv', `expected ${n * stride} values ([${n}, ${stride}]), got ${qkv.length}`);
  // The native form computes in double as the loop below does: the same bits, ~7x faster.
  const blas = nativeHostKernels();
  if (blas !== null) blas.ropePacked(qkv, positions, table.cos, table.sin, heads, kvHeads, headDim);
  else ropePackedReference(qkv, positions, table, heads, headDim, kvHeads);
}

/**
 * {@link ropePackedInPlace} in plain JS (float64 arithmetic, rounded to float32 on store).
 * @example ropePackedReference(qkv, positions, ropeTable(1024, 16, 1e4), 4, 16, 4)
 */
export function ropePackedReference(
  qkv: Float32Array,
  positions: Int32Array,
  table: { readonly cos: Float32Array; readonly sin: Float32Array },
  heads: number,
  headDim: number,
  kvHeads: number,
): void {
  const stride = (heads + 2 * kvHeads) * headDim;
  const half = headDim / 2;
  const n = positions.length;
  const { cos, sin } = table;
  for (let t = 0; t < n; t++) {
    const angle = positions[t] * headDim;
    // q (heads 0..H-1) and k (heads H..H+Hkv-1) are contiguous head vectors per token.
    for (let hv = 0; hv < heads + kvHeads; hv++) {
      const base = t * stride + hv * headDim;
      for (let i = 0; i < half; i++) {
        const a = qkv[base + i];
        const b = qkv[base + i + half];
        qkv[base + i] = a * cos[angle + i] - b * sin[angle + i];
        qkv[base + i + half] = b * cos[angle + i + half] + a * sin[angle + i + half];
      }
    }
  }
}

/**
 * Writes the new keys and values of one layer (the k and v parts of the roped fused
 * projection) into each row's cache, at slots `[length, length + new)`. Call for every layer,
 * then `advance` each cache.
 * @example writePackedKv(caches, 0, qkv, shape)
 */
export function writePackedKv(caches: readonly KvCache[], layer: number, qkv: Float32Array, shape: PackedShape): void {
  const { heads: h, kvHeads: hkv, headDim: hd, offsets } = shape;
  const stride = (h + 2 * hkv) * hd;
  for (let r = 0; r < caches.length; r++) {
    caches[r].writeTokenMajor(layer, qkv, offsets[r] * stride, stride, h * hd, (h + hkv) * hd, offsets[r + 1] - offsets[r]);
  }
}

/**
 * `softmax(q·kᵀ/√hd + mask)·v` for every new token of the given rows, heads merged, written into
 * `out` (the context `[sumNew, d]`, the o-projection's input). Keys/values of cached slots come
 * from each row's cache (`[0, pastLength[r])`, as before this call's writes), new ones from `qkv`.
 * Plain JS costs ~100 ns per (query, key, head) here, ~8x XNNPACK's rate: worth it only for small
 * work (decode steps), where it saves the kernel dispatches and uploads.
 * @example packedAttention(qkv, caches, pastLength, 0, shape, [0, 1], ctx); // ctx: [n, d]
 */
export function packedAttention(
  qkv: Float32Array,
  caches: readonly KvCache[],
  pastLength: Int32Array,
  layer: number,
  shape: PackedShape,
  rows: readonly number[],
  out: Float32Array,
): void {
  const { heads: h, kvHeads: hkv, headDim: hd, offsets } = shape;
  const d = h * hd; // context width
  const stride = (h + 2 * hkv) * hd;
  const group = h / hkv;
  const scale = 1 / Math.sqrt(hd);
  let maxKeys = 1;
  for (const r of rows) maxKeys = Math.max(maxKeys, pastLength[r] + offsets[r + 1] - offsets[r]);
  const scores = new Float64Array(maxKeys);
  const q = new Float64Array(hd);
  const acc = new Float64Array(hd);
  for (const r of rows) {
    const cache = caches[r];
    if (cache.rows !== 1) throw InvalidArgumentError.format('caches', `expected one-row caches, row ${r} has ${cache.rows}`);
    const past = pastLength[r];
    const cap = cache.capacity;
    const keyMask = cache.keyMask;
    const { key: kc, value: vc } = cache.layerBuffers(layer);
    const start = offsets[r];
    const added = offsets[r + 1] - start;
    for (let head = 0; head < h; head++) {
      const kvHead = Math.floor(head / group);
      const block = kvHead * cap * hd; // this kv head's [capacity, headDim] block of the row's cache
      for (let i = 0; i < added; i++) {
        const qOff = (start + i) * stride + head * hd;
        for (let e = 0; e < hd; e++) q[e] = qkv[qOff + e] * scale;
        let max = Number.NEGATIVE_INFINITY;
        for (let j = 0; j < past; j++) {
          if (keyMask[j] !== 1) {
            scores[j] = Number.NEGATIVE_INFINITY;
            continue;
          }
          const kOff = block + j * hd;
          let dot = 0;
          for (let e = 0; e < hd; e++) dot += q[e] * kc[kOff + e];
          scores[j] = dot;
          if (dot > max) max = dot;
        }
        for (let j = 0; j <= i; j++) {
          const kOff = (start + j) * stride + (h + kvHead) * hd;
          let dot = 0;
          for (let e = 0; e < hd; e++) dot += q[e] * qkv[kOff + e];
          scores[past + j] = dot;
          if (dot > max) max = dot;
        }
        let sum = 0;
        acc.fill(0);
        for (let j = 0; j < past; j++) {
          if (keyMask[j] !== 1) continue;
          const w = Math.exp(scores[j] - max);
          sum += w;
          const vOff = block + j * hd;
          for (let e = 0; e < hd; e++) acc[e] += w * vc[vOff + e];
        }
        for (let j = 0; j <= i; j++) {
          const w = Math.exp(scores[past + j] - max);
          sum += w;
          const vOff = (start + j) * stride + (h + hkv + kvHead) * hd;
          for (let e = 0; e < hd; e++) acc[e] += w * qkv[vOff + e];
        }
        const inv = 1 / sum;
        const oOff = (start + i) * d + head * hd;
        for (let e = 0; e < hd; e++) out[oOff + e] = acc[e] * inv;
      }
    }
  }
}
