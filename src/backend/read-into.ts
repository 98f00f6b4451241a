/**
 * Reads a float32 tensor's values without the copy `dataSync` allocates on wasm.
 *
 * Why: on the wasm backend `dataSync` slices the heap into a new array each time; the packed
 * forward reads two such tensors a layer, and those arrays (external memory to V8) started major
 * collections (transformer/scratch.ts). Here the heap view is copied into a buffer the caller keeps.
 */
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import { InvalidArgumentError } from '../core/errors.js';
import { tf } from './tf.js';

/**
 * The values of `t` (float32): on wasm copied into `out` (which must hold exactly `t.size`
 * floats) and `out` returned; elsewhere `dataSync()`'s array, which on the cpu backend is the
 * tensor's own (no copy either). Either way the caller may write to the result: on cpu that
 * changes `t`, so only pass tensors nothing else reads.
 * @example const qkv = readFloatsInto(projected, pool.take('qkv', projected.size));
 */
export function readFloatsInto(t: tf.Tensor, out: Float32Array): Float32Array {
  if (t.dtype !== 'float32') throw InvalidArgumentError.format('t', `expected a float32 tensor, got ${t.dtype}`);
  if (tf.getBackend() !== 'wasm') return t.dataSync() as Float32Array;
  if (out.length !== t.size) throw InvalidArgumentError.format('out', `expected ${t.size} floats, got ${out.length}`);
  // A view is valid until the heap next grows; it is used at once.
  out.set((tf.backend() as BackendWasm).typedArrayFromHeap(t) as Float32Array);
  return out;
}

/**
 * The values of `t` (float32) written into `out` on every backend: on wasm straight from the
 * tensor's memory, elsewhere from `dataSync()`'s array.
 * @example copyFloatsInto(gradient, reply.subarray(offset, offset + gradient.size));
 */
export function copyFloatsInto(t: tf.Tensor, out: Float32Array): void {
  const values = readFloatsInto(t, out);
  if (values !== out) out.set(values);
}
