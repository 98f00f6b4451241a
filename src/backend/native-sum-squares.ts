/**
 * The global gradient norm's sum of squares on the native addon (`native/sum_squares.c`): one pass
 * over views of the wasm heap, in double, instead of a square and a sum kernel per tensor (two
 * passes and a full-size temporary each, ~3 % of a d512 L4 training step on one thread).
 */
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import { nativeKernels } from './native.js';
import { tf } from './tf.js';

/**
 * `Σ x²` over every value of `tensors` (float32, on wasm with the addon), or null (caller runs tfjs).
 * @example const norm = Math.sqrt(nativeSumSquares(grads) ?? tfjsSumSquares(grads));
 */
export function nativeSumSquares(tensors: readonly tf.Tensor[]): number | null {
  const blas = nativeKernels();
  if (blas === null || typeof blas.sumSquares !== 'function' || tensors.some((t) => t.dtype !== 'float32')) return null;
  const backend = tf.backend() as BackendWasm;
  // Views taken together and used at once: nothing allocates in the heap in between.
  return blas.sumSquares(tensors.map((t) => backend.typedArrayFromHeap(t) as Float32Array));
}
