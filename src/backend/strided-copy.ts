/**
 * Copies of equal-width blocks at fixed strides: how the packed forward stages a group's queries
 * out of the fused q/k/v rows, scatters attention's result into the context
 * (transformer/grouped-attention.ts) and writes new keys and values into a cache (kv-cache.ts).
 * Natively (`native/packed.c`, a memcpy a block) when the addon runs and the copy is large; the JS
 * loop ran at ~4 ns a float, 5 % of a 256-token SmolLM2-135M prefill. Both copy the same floats.
 */
import { nativeHostKernels } from './native.js';

/** Below this many floats the JS loop wins (a call into the addon costs ~0.1-0.2 µs: a decode step's few floats a head). */
const NATIVE_FROM_FLOATS = 2048;

/**
 * `count` blocks of `width` floats: `src[srcOffset + i * srcStride + e]` to `dst[dstOffset + i * dstStride + e]`.
 * @example stridedCopy(qkv, head * hd, stride, q, head * n * hd, hd, n, hd) // one head's queries, token-major to head-major
 */
export function stridedCopy(src: Float32Array, srcOffset: number, srcStride: number, dst: Float32Array, dstOffset: number, dstStride: number, count: number, width: number): void {
  const blas = count * width >= NATIVE_FROM_FLOATS ? nativeHostKernels() : null;
  if (blas !== null) {
    blas.stridedCopy(src, srcOffset, srcStride, dst, dstOffset, dstStride, count, width);
    return;
  }
  stridedCopyReference(src, srcOffset, srcStride, dst, dstOffset, dstStride, count, width);
}

/**
 * {@link stridedCopy} in plain JS (element loops: no subarray views to allocate).
 * @example stridedCopyReference(qkv, 0, 12, q, 0, 4, 3, 4)
 */
export function stridedCopyReference(src: Float32Array, srcOffset: number, srcStride: number, dst: Float32Array, dstOffset: number, dstStride: number, count: number, width: number): void {
  for (let i = 0; i < count; i++) {
    const from = srcOffset + i * srcStride;
    const to = dstOffset + i * dstStride;
    for (let e = 0; e < width; e++) dst[to + e] = src[from + e];
  }
}
