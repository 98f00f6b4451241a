/**
 * Copies of equal-width blocks at fixed strides: how the packed forward stages a group's queries
 * out of the fused q/k/v rows and scatters attention's result into the context (grouped-attention.ts).
 * Natively (`native/packed.c`, a memcpy a block) when the addon runs; the JS loop otherwise ran at
 * ~4 ns a float, 4 % of a 256-token SmolLM2-135M prefill. Both copy the same floats.
 */
import { nativeHostKernels } from '../../backend/native.js';

/**
 * `count` blocks of `width` floats: `src[srcOffset + i * srcStride + e]` to `dst[dstOffset + i * dstStride + e]`.
 * @example stridedCopy(qkv, head * hd, stride, q, head * n * hd, hd, n, hd) // one head's queries, token-major to head-major
 */
export function stridedCopy(src: Float32Array, srcOffset: number, srcStride: number, dst: Float32Array, dstOffset: number, dstStride: number, count: number, width: number): void {
  const blas = nativeHostKernels();
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
