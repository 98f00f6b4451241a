/**
 * Masked multi-head attention of a few new queries over a CPU-held KV cache: natively with the
 * addon on wasm (native/decode_attention.c, at any batch size), else in plain JS (small steps only).
 *
 * Why: a decode step feeds 1–3 tokens per row. On the wasm backend, attention through tfjs then
 * means uploading every layer's whole key and value cache (`[rows, heads, capacity, headDim]`, a
 * memcpy each) and five kernel dispatches (scale, QKᵀ, mask add, softmax, PV) for a few thousand
 * multiply-adds per row; the cache already lives in JS memory (see `KvCache`), so reading it in
 * place is cheaper and removes those dispatches. Prefill chunks keep the tfjs path (their QKᵀ is
 * large enough for XNNPACK).
 *
 * Same semantics as `attend` + `attentionMask`: query `i` of row `b` sees cached slot `j < past`
 * when `pastMask[b, j] = 1`, and new slot `past + j` when `j <= i` and `newMask[b, j] = 1`.
 */

import { InvalidArgumentError } from '../../core/errors.js';
import type { NativeBlas } from '../../backend/native-blas.js';
import { nativeKernels } from '../../backend/native.js';

let maxQueries = 4;

/**
 * Chunks of at most this many new tokens per row over a non-empty cache attend on the CPU; 0
 * turns the CPU path off (benchmarks compare both in one process). Default 4.
 * @example setCpuAttentionMaxQueries(0); // every chunk attends through tfjs
 */
export function setCpuAttentionMaxQueries(n: number): void {
  if (!(Number.isInteger(n) && n >= 0)) throw InvalidArgumentError.format('maxQueries', `expected an integer >= 0, got ${n}`);
  maxQueries = n;
}

/**
 * The current limit set by {@link setCpuAttentionMaxQueries}: the packed path (grouped-attention.ts)
 * attends every group at most this wide in JS, whatever its size, because there tfjs would first
 * copy each row's keys and values into a padded block (measured: 64 rows x 1 token over 200 slots
 * 33 ms in JS vs 51 ms through tfjs per call; 90-token prefills stay ~8x faster through tfjs).
 * @example if (group.width <= cpuAttentionMaxQueries()) packedAttention(...);
 */
export function cpuAttentionMaxQueries(): number {
  return maxQueries;
}

/**
 * Above this many query·key multiply-adds the tfjs path wins even with the cache upload: measured
 * on the default model (4 heads × 16), a 1-token step over 200 cached slots took 1.0–1.2 ms here
 * vs 1.3–3.1 ms through tfjs at 1 row, but 26–35 ms vs 19–21 ms at 64 rows (and 127–147 ms vs
 * 40–88 ms at 64 rows over 800 slots), on a loaded 2-core machine.
 */
const MAX_CPU_MACS = 262_144;

/**
 * Whether a chunk of `queries` new tokens per row over `keySlots` cache slots attends on the CPU.
 * @example useCpuAttention(1, 4, 1, 241, 16) // true: one row, one new token
 */
export function useCpuAttention(rows: number, heads: number, queries: number, keySlots: number, headDim: number): boolean {
  // Natively, any decode-sized chunk: no upload of the cache, one call per layer (native/decode_attention.c).
  return queries <= maxQueries && (nativeAttention() !== null || rows * heads * queries * keySlots * headDim <= MAX_CPU_MACS);
}

/** The addon when attention runs natively (wasm backend, native kernels on), else null. */
function nativeAttention(): NativeBlas | null {
  return nativeKernels();
}

/** Shapes of one {@link cpuAttention} call. */
export interface CpuAttentionShape {
  readonly rows: number;
  readonly heads: number;
  /** Key/value heads of the cache (grouped-query attention); default `heads`. */
  readonly kvHeads?: number;
  /** New queries per row (already written to the cache at slots `[past, past + queries)`). */
  readonly queries: number;
  readonly headDim: number;
  /** Cached slots before the new ones. */
  readonly past: number;
  /** Time size of the cache buffers. */
  readonly capacity: number;
}

/**
 * `softmax(q·kᵀ/√hd + mask)·v` per row and head, reading keys/values from the cache buffers.
 * A query that sees no key (a padding query) gets zeros.
 * @example
 * const ctx = cpuAttention(q, cache.layerBuffers(0).key, cache.layerBuffers(0).value, cache.keyMask, newMask, shape);
 * // q: [rows, heads, queries, headDim]; keys/values: [rows, kvHeads, capacity, headDim] -> [rows, heads, queries, headDim]
 */
export function cpuAttention(
  q: Float32Array,
  keys: Float32Array,
  values: Float32Array,
  pastMask: Uint8Array,
  newMask: Uint8Array,
  shape: CpuAttentionShape,
): Float32Array {
  const { rows, heads, queries: t, headDim: hd, past, capacity: cap } = shape;
  const kvHeadCount = shape.kvHeads ?? heads;
  const out = new Float32Array(rows * heads * t * hd);
  const blas = nativeAttention();
  if (blas !== null) {
    blas.decodeAttention(q, keys, values, pastMask, newMask, out, rows, heads, kvHeadCount, t, hd, past, cap);
    return out;
  }
  return cpuAttentionJs(q, keys, values, pastMask, newMask, shape, out);
}

/**
 * {@link cpuAttention} in plain JS (float64 sums) into `out`: the path without the addon, and the
 * reference the native kernel is tested against.
 * @example cpuAttentionJs(q, keys, values, cache.keyMask, newMask, shape, new Float32Array(q.length))
 */
export function cpuAttentionJs(
  q: Float32Array,
  keys: Float32Array,
  values: Float32Array,
  pastMask: Uint8Array,
  newMask: Uint8Array,
  shape: CpuAttentionShape,
  out: Float32Array,
): Float32Array {
  const { rows, heads, queries: t, headDim: hd, past, capacity: cap } = shape;
  const kvHeadCount = shape.kvHeads ?? heads;
  const group = heads / kvHeadCount;
  const scale = 1 / Math.sqrt(hd);
  const scores = new Float32Array(past + t);
  const visible = new Int32Array(past + t); // key offsets (in floats, within a head block) this query sees
  const acc = new Float32Array(hd);
  for (let b = 0; b < rows; b++) {
    for (let i = 0; i < t; i++) {
      let n = 0;
      for (let j = 0; j < past; j++) if (pastMask[b * cap + j] === 1) visible[n++] = j * hd;
      for (let j = 0; j <= i; j++) if (newMask[b * t + j] === 1) visible[n++] = (past + j) * hd;
      if (n === 0) continue;
      for (let h = 0; h < heads; h++) {
        const qOff = ((b * heads + h) * t + i) * hd;
        const block = (b * kvHeadCount + Math.floor(h / group)) * cap * hd;
        let max = Number.NEGATIVE_INFINITY;
        for (let k = 0; k < n; k++) {
          const kOff = block + visible[k];
          let dot = 0;
          for (let d = 0; d < hd; d++) dot += q[qOff + d] * keys[kOff + d];
          const s = dot * scale;
          scores[k] = s;
          if (s > max) max = s;
        }
        let sum = 0;
        acc.fill(0);
        for (let k = 0; k < n; k++) {
          const w = Math.exp(scores[k] - max);
          sum += w;
          const vOff = block + visible[k];
          for (let d = 0; d < hd; d++) acc[d] += w * values[vOff + d];
        }
        const inv = 1 / sum;
        for (let d = 0; d < hd; d++) out[qOff + d] = acc[d] * inv;
      }
    }
  }
  return out;
}
