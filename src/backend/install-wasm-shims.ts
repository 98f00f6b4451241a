/**
 * Installs the project shims the tfjs wasm backend needs for training:
 * a JS `UnsortedSegmentSum` kernel (gradient of `tf.gather`), the `BatchMatMul` rerouting onto
 * XNNPACK, and a zero-copy `Identity` (`src/backend/wasm-identity.ts`). Both are kernel-registry changes, so they work whether or not the wasm backend has been
 * initialised yet.
 */
import './tfjs-wasm.js'; // registers the wasm backend and its kernels
import { installWasmBatchMatMulShim } from './wasm-batch-matmul.js';
import { installWasmIdentityShim } from './wasm-identity.js';
import { registerWasmUnsortedSegmentSum } from './wasm-unsorted-segment-sum.js';

/** Which shims this call installed (false: already there). */
export interface WasmShimsInstalled {
  readonly unsortedSegmentSum: boolean;
  readonly batchMatMul: boolean;
  /** Zero-copy `Identity` (issue #10: tfjs clones every saved input for backprop). */
  readonly identity: boolean;
}

/**
 * Installs the wasm shims. Idempotent: a second call installs nothing and reports `false`s.
 * @example
 * installWasmShims();
 * await tf.setBackend('wasm');
 */
export function installWasmShims(): WasmShimsInstalled {
  return { unsortedSegmentSum: registerWasmUnsortedSegmentSum(), batchMatMul: installWasmBatchMatMulShim(), identity: installWasmIdentityShim() };
}
