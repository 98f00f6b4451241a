/**
 * The size of this thread's wasm heap, where the wasm backend keeps every tensor. The heap only
 * grows (WebAssembly memory cannot shrink), so its size is the high-water mark of the tensor
 * memory plus the allocator's fragmentation: what a memory estimate is checked against.
 */
import { tf } from './tf.js';

/**
 * Bytes of the wasm heap, or null when the current backend is not wasm.
 * @example tensorHeapBytes() // 1215299584 after a SmolLM2-135M LoRA step
 */
export function tensorHeapBytes(): number | null {
  if (tf.getBackend() !== 'wasm') return null;
  const wasm = (tf.backend() as unknown as { wasm?: { HEAPU8?: Uint8Array } }).wasm;
  return wasm?.HEAPU8?.length ?? null;
}
