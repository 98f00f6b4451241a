/**
 * Typed arrays as SQLite blobs: the raw bytes in platform order (little-endian on every platform
 * Node supports in practice), written without a copy and read back into fresh, aligned memory.
 */
import { CheckpointError } from '../core/errors.js';

/**
 * A Buffer view over the array's bytes (no copy).
 * @example toBlob(Int32Array.from([1, 2])).byteLength // 8
 */
export function toBlob(array: Int32Array | Float32Array | Uint8Array): Buffer {
  return Buffer.from(array.buffer, array.byteOffset, array.byteLength);
}

function copyBytes(blob: Uint8Array, bytesPerElement: number, column: string): ArrayBuffer {
  if (blob.byteLength % bytesPerElement !== 0) {
    throw new CheckpointError(column, `blob of ${blob.byteLength} bytes is not a multiple of ${bytesPerElement}`);
  }
  const out = new ArrayBuffer(blob.byteLength);
  new Uint8Array(out).set(blob);
  return out;
}

/** @example int32FromBlob(toBlob(Int32Array.from([7]))) // Int32Array [7] */
export function int32FromBlob(blob: Uint8Array, column = 'blob'): Int32Array {
  return new Int32Array(copyBytes(blob, 4, column));
}

/** @example float32FromBlob(toBlob(Float32Array.from([0.5]))) // Float32Array [0.5] */
export function float32FromBlob(blob: Uint8Array, column = 'blob'): Float32Array {
  return new Float32Array(copyBytes(blob, 4, column));
}

/** @example uint8FromBlob(toBlob(Uint8Array.from([1, 0]))) // Uint8Array [1, 0] */
export function uint8FromBlob(blob: Uint8Array, column = 'blob'): Uint8Array {
  return new Uint8Array(copyBytes(blob, 1, column));
}
