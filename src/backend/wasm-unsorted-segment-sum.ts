/**
 * A JavaScript `UnsortedSegmentSum` kernel for the tfjs wasm backend.
 *
 * Why: tfjs-backend-wasm 4.22.0 registers no `UnsortedSegmentSum`, and that kernel is the gradient
 * of `tf.gather`, so without it an embedding lookup cannot train on wasm. The sum is a single pass over the rows, cheap next to the matmuls around it.
 *
 * Semantics follow TensorFlow: `x` has shape `[...idsShape, ...inner]`, `segmentIds` has shape
 * `idsShape`, the output is `[numSegments, ...inner]`; ids outside `[0, numSegments)` are dropped
 * (the cpu backend drops them too).
 */
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import { tf } from './tf.js';

/** Kernel name in the tfjs registry (the `UnsortedSegmentSum` constant of tfjs-core). */
const KERNEL = 'UnsortedSegmentSum';

/**
 * Row-wise segment sum on plain arrays; the kernel's arithmetic, exported so it can be tested
 * and reused without a backend.
 *
 * Shapes: `x` is `[ids.length * inner]` row-major, the result is `[numSegments * inner]`.
 * @example
 * segmentSumRows(new Float32Array([1, 2, 3, 4]), new Int32Array([1, 1]), 2, 2) // [0, 0, 4, 6]
 */
export function segmentSumRows(
  x: Float32Array | Int32Array,
  ids: Int32Array,
  numSegments: number,
  inner: number,
): Float32Array | Int32Array {
  const out = x instanceof Int32Array ? new Int32Array(numSegments * inner) : new Float32Array(numSegments * inner);
  segmentSumRowsInto(x, ids, inner, out);
  return out;
}

/**
 * {@link segmentSumRows} added into `out` (`[numSegments * inner]`, zeroed by the caller).
 * @example segmentSumRowsInto(x, ids, 2, out.fill(0))
 */
export function segmentSumRowsInto(x: Float32Array | Int32Array, ids: Int32Array, inner: number, out: Float32Array | Int32Array): void {
  const numSegments = out.length / inner;
  for (let row = 0; row < ids.length; row++) {
    const seg = ids[row];
    if (seg < 0 || seg >= numSegments) continue; // dropped, as on cpu
    const src = row * inner;
    const dst = seg * inner;
    for (let j = 0; j < inner; j++) out[dst + j] += x[src + j];
  }
}

function unsortedSegmentSumWasm(args: {
  inputs: Record<string, tf.TensorInfo>;
  backend: unknown;
  attrs?: tf.NamedAttrMap;
}): tf.TensorInfo {
  const backend = args.backend as BackendWasm;
  const x = args.inputs.x;
  const segmentIds = args.inputs.segmentIds;
  const numSegments = Number(args.attrs?.numSegments);
  if (x.dtype !== 'float32' && x.dtype !== 'int32') {
    throw new Error(`UnsortedSegmentSum (wasm shim): x must be float32 or int32, got ${x.dtype}`);
  }
  const idsShape = segmentIds.shape;
  for (let i = 0; i < idsShape.length; i++) {
    if (x.shape[i] !== idsShape[i]) {
      throw new Error(`UnsortedSegmentSum (wasm shim): segmentIds shape [${idsShape}] is not a prefix of x shape [${x.shape}]`);
    }
  }
  const innerShape = x.shape.slice(idsShape.length);
  const inner = innerShape.reduce((p, d) => p * d, 1);
  const rawIds = backend.readSync(segmentIds.dataId); // small ([tokens]): a copy is fine
  const ids = rawIds instanceof Int32Array ? rawIds : Int32Array.from(rawIds as ArrayLike<number>);
  // Summed in place in the heap: no host-side [numSegments, inner] array (an embedding gradient,
  // 16 MB at vocab 8192 x 512, allocated and copied in every step, and counted by V8's collector).
  const out = backend.makeOutput([numSegments, ...innerShape], x.dtype);
  // Views taken after makeOutput (which may grow the heap, detaching older views); nothing below allocates.
  const outView = backend.typedArrayFromHeap(out) as Float32Array | Int32Array;
  outView.fill(0);
  segmentSumRowsInto(backend.typedArrayFromHeap(x) as Float32Array | Int32Array, ids, inner, outView);
  return out;
}

/**
 * Registers the shim kernel for `wasm` unless a `UnsortedSegmentSum` kernel is already there
 * (a later tfjs release may ship one; prefer it). Idempotent.
 * @returns true when this call registered the kernel.
 * @example
 * registerWasmUnsortedSegmentSum(); // then tf.grad(w => tf.gather(w, ids).sum()) works on wasm
 */
export function registerWasmUnsortedSegmentSum(): boolean {
  if (tf.getKernel(KERNEL, 'wasm') != null) return false;
  tf.registerKernel({
    kernelName: KERNEL,
    backendName: 'wasm',
    kernelFunc: unsortedSegmentSumWasm as unknown as tf.KernelFunc,
  });
  return true;
}
