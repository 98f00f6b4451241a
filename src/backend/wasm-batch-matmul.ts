/**
 * `BatchMatMul` rerouting for the tfjs wasm backend.
 *
 * First choice (issue #10): the native addon (`native-blas.ts`), when loaded and not turned off
 * (`model.matmul`, through the switch in `native.ts`), runs every float32 product — any
 * transposes, batch shapes and broadcasts — as OpenBLAS `sgemm` calls on views of the wasm heap.
 * Otherwise, the XNNPACK rerouting below.
 *
 * Why: the stock wasm kernel uses XNNPACK only for an untransposed matmul with batch 1; every
 * other case (`transposeA`, `transposeB`, rank 3/4, i.e. all of backprop and attention) runs a
 * naive triple loop that is 10-25x slower (`bench/matmul-gflops.ts` measures both). This wrapper:
 * - keeps the stock kernel for the fast case and for tiny products (< 32 768 multiply-adds per
 *   batch item, where building an XNNPACK operator per call costs more than it saves);
 * - otherwise materialises transposes with the wasm `Transpose` kernel, then
 *   - if `b` is not batched, flattens `a` to `[1, batch*M, K]` and makes one XNNPACK call;
 *   - else runs each batch item through the stock kernel's XNNPACK path (NN, batch 1), copying
 *     slices through views on the wasm heap that are re-fetched after every allocation (an
 *     allocation may grow the heap and detach old views) and disposing every temporary.
 *
 * It relies on wasm backend internals (`makeOutput`, `typedArrayFromHeap`, `disposeData`,
 * `dataIdMap`), so tfjs is pinned to exactly 4.22.0 and `test/backend` compares it to cpu.
 * Batch broadcasting follows the stock kernel (batch item i uses `a[i % batchA]`, `b[i % batchB]`).
 */
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import { nativeMatmul } from './native.js';
import type { NativeBlas } from './native-blas.js';
import { tf } from './tf.js';

const KERNEL = 'BatchMatMul';

/** Below this many multiply-adds per batch item the stock kernel is faster (measured, §1.3). */
export const SHIM_MIN_MACS_PER_ITEM = 32_768;

type KernelArgs = { inputs: Record<string, tf.TensorInfo>; backend: unknown; attrs?: tf.NamedAttrMap };
type Kernel = (args: KernelArgs) => tf.TensorInfo;

/** The stock kernel, captured before we replace it; null until installed. */
let stock: Kernel | null = null;
let transposeKernel: Kernel | null = null;
let enabled = true;
let reroutedCalls = 0;
let nativeCalls = 0;

/**
 * How many `BatchMatMul` calls ran on the native BLAS since start-up (tests, benchmarks).
 * @example const before = nativeBatchMatMulCalls(); tf.matMul(a, b); // +1 with native BLAS
 */
export function nativeBatchMatMulCalls(): number {
  return nativeCalls;
}

/**
 * Turns the rerouting on or off at run time (the stock kernel runs when off). Used by the
 * micro-benchmark to compare both paths in one process; training leaves it on.
 * @example
 * setBatchMatMulShimEnabled(false); // measure stock
 */
export function setBatchMatMulShimEnabled(on: boolean): void {
  enabled = on;
}

/**
 * How many `BatchMatMul` calls the wrapper has rerouted (not handed to the stock kernel) since
 * it was installed; lets tests and benchmarks check which path ran.
 * @example
 * const before = reroutedBatchMatMulCalls(); tf.matMul(a, b, false, true); // +1 if large enough
 */
export function reroutedBatchMatMulCalls(): number {
  return reroutedCalls;
}

/**
 * Whether the rerouting is installed and enabled.
 * @example
 * if (!isBatchMatMulShimActive()) console.warn('slow wasm matmuls');
 */
export function isBatchMatMulShimActive(): boolean {
  return stock !== null && enabled;
}

function product(dims: readonly number[]): number {
  let p = 1;
  for (const d of dims) p *= d;
  return p;
}

/**
 * Transposes of un-batched `a` operands, keyed by the source's dataId. Why: in backprop every
 * weight gradient is `x^T · dy`, and one activation feeds several projections (q, k and v share
 * their normed input; gate and up share theirs), so the same `x^T` was materialised 2-3 times per
 * layer with the (slow, ~10 ns per element) wasm Transpose kernel. Tensors are immutable and a
 * dataId object is never reused while held here, so a hit is always current (the [k, m] view is
 * part of the key: a reshape shares its source's dataId). A copy lives exactly as long as its
 * source: the backend's `disposeData` is wrapped to free it when the source's data is freed.
 */
const transposeCache = new Map<object, { readonly k: number; readonly m: number; readonly transposed: tf.TensorInfo }>();
const TRANSPOSE_CACHE_MAX = 8;

/** How many transposes the cache has saved since start-up (tests and benchmarks). */
let transposeCacheHits = 0;

/**
 * Transposes of `a` operands the shim reused instead of recomputing.
 * @example const before = batchMatMulTransposeCacheHits(); // ... backprop ... > before
 */
export function batchMatMulTransposeCacheHits(): number {
  return transposeCacheHits;
}

/** Internal map of the wasm backend (pinned tfjs 4.22.0, see the file comment). */
function liveIds(backend: BackendWasm): { has(id: object): boolean } {
  return (backend as unknown as { dataIdMap: { has(id: object): boolean } }).dataIdMap;
}

/** Frees one cached transpose (if its backend still holds it). */
function dropCached(backend: BackendWasm, source: object): void {
  const entry = transposeCache.get(source);
  if (entry === undefined) return;
  transposeCache.delete(source);
  if (liveIds(backend).has(entry.transposed.dataId)) backend.disposeData(entry.transposed.dataId, true);
}

const wrappedBackends = new WeakSet<object>();

/** Makes `backend.disposeData` free a source's cached transpose together with the source. */
function tieToSources(backend: BackendWasm): void {
  if (wrappedBackends.has(backend)) return;
  wrappedBackends.add(backend);
  const original = backend.disposeData.bind(backend);
  backend.disposeData = (dataId: object, force?: boolean): boolean => {
    const freed = original(dataId, force);
    if (transposeCache.has(dataId) && !liveIds(backend).has(dataId)) dropCached(backend, dataId);
    return freed;
  };
}

/** Keeps the cache under its cap (oldest first) and drops entries of sources no longer held. */
function pruneTransposeCache(backend: BackendWasm): void {
  const live = liveIds(backend);
  for (const source of [...transposeCache.keys()]) {
    if (!live.has(source) || transposeCache.size >= TRANSPOSE_CACHE_MAX) dropCached(backend, source);
  }
}

/** `a` [1, k, m] transposed to [1, m, k], from the cache when this source was transposed before. */
function cachedTransposeA(backend: BackendWasm, a: tf.TensorInfo, k: number, m: number): tf.TensorInfo {
  const hit = transposeCache.get(a.dataId);
  if (hit !== undefined && hit.k === k && hit.m === m) {
    transposeCacheHits++;
    return hit.transposed;
  }
  tieToSources(backend);
  pruneTransposeCache(backend);
  dropCached(backend, a.dataId); // the same data seen before as another [k, m]: replace it
  const transposed = transpose3d(backend, a, [1, k, m]);
  transposeCache.set(a.dataId, { k, m, transposed });
  return transposed;
}

function transpose3d(backend: BackendWasm, x: tf.TensorInfo, shape: [number, number, number]): tf.TensorInfo {
  const view: tf.TensorInfo = { dataId: x.dataId, shape, dtype: x.dtype };
  return transposeKernel!({ inputs: { x: view }, backend, attrs: { perm: [0, 2, 1] } });
}

function batchMatMulShim(args: KernelArgs): tf.TensorInfo {
  const { a, b } = args.inputs;
  const transposeA = Boolean(args.attrs?.transposeA);
  const transposeB = Boolean(args.attrs?.transposeB);
  const backend = args.backend as BackendWasm;
  const aRank = a.shape.length;
  const bRank = b.shape.length;
  if (!enabled || a.dtype !== 'float32' || b.dtype !== 'float32' || aRank < 2 || bRank < 2) return stock!(args);
  const m = transposeA ? a.shape[aRank - 1] : a.shape[aRank - 2];
  const k = transposeA ? a.shape[aRank - 2] : a.shape[aRank - 1];
  const kB = transposeB ? b.shape[bRank - 1] : b.shape[bRank - 2];
  const n = transposeB ? b.shape[bRank - 2] : b.shape[bRank - 1];
  const batchA = product(a.shape.slice(0, -2));
  const batchB = product(b.shape.slice(0, -2));
  const batch = Math.max(batchA, batchB);
  const fast = !transposeA && !transposeB && batch === 1;
  // Shape errors and unusual broadcasts are left to the stock kernel, which reports them.
  const plainBroadcast = batchA === batchB || batchA === 1 || batchB === 1;
  const blas = k === kB && plainBroadcast && m * n * k > 0 ? nativeMatmul() : null;
  if (blas !== null) return nativeProduct(blas, backend, a, b, { batchA, batchB, batch, m, n, k, transposeA, transposeB });
  if (fast || k !== kB || !plainBroadcast || m * n * k < SHIM_MIN_MACS_PER_ITEM || m * n * k === 0) {
    return stock!(args);
  }
  reroutedCalls++;
  const outShape = [...tf.broadcast_util.assertAndGetBroadcastShape(a.shape.slice(0, -2), b.shape.slice(0, -2)), m, n];

  const temps: tf.TensorInfo[] = [];
  // [batchA, M, K] and [batchB, K, N], materialised only when transposed.
  let aN: tf.TensorInfo = { dataId: a.dataId, shape: [batchA, m, k], dtype: 'float32' };
  if (transposeA && batchA === 1) {
    aN = cachedTransposeA(backend, a, k, m); // owned by the cache, not a temp
  } else if (transposeA) {
    aN = transpose3d(backend, a, [batchA, k, m]);
    temps.push(aN);
  }
  let bN: tf.TensorInfo = { dataId: b.dataId, shape: [batchB, k, n], dtype: 'float32' };
  if (transposeB) {
    bN = transpose3d(backend, b, [batchB, n, k]);
    temps.push(bN);
  }
  const nn = { transposeA: false, transposeB: false };
  try {
    if (batchB === 1) {
      // One XNNPACK call for all of a: [1, batchA*M, K] x [1, K, N]. When b is untransposed it
      // keeps its own id, so XNNPACK's packed-weights cache (keyed on b's id) is reused.
      const aFlat: tf.TensorInfo = { dataId: aN.dataId, shape: [1, batchA * m, k], dtype: 'float32' };
      const bOne: tf.TensorInfo = { dataId: bN.dataId, shape: [1, k, n], dtype: 'float32' };
      const out = stock!({ inputs: { a: aFlat, b: bOne }, backend, attrs: nn });
      out.shape = outShape;
      return out;
    }
    return perItem(backend, aN, bN, batchA, batchB, batch, m, k, n, outShape);
  } finally {
    for (const t of temps) backend.disposeData(t.dataId);
  }
}

/** Product dimensions, as the shim read them from the shapes and attributes. */
interface Dims {
  readonly batchA: number;
  readonly batchB: number;
  readonly batch: number;
  readonly m: number;
  readonly n: number;
  readonly k: number;
  readonly transposeA: boolean;
  readonly transposeB: boolean;
}

/** The whole product in one native call on views of the wasm heap (no copies, no transposes). */
function nativeProduct(blas: NativeBlas, backend: BackendWasm, a: tf.TensorInfo, b: tf.TensorInfo, d: Dims): tf.TensorInfo {
  nativeCalls++;
  const outShape = [...tf.broadcast_util.assertAndGetBroadcastShape(a.shape.slice(0, -2), b.shape.slice(0, -2)), d.m, d.n];
  const out = backend.makeOutput(outShape, 'float32');
  // Views taken after makeOutput: an allocation may grow the heap and detach older views.
  const av = backend.typedArrayFromHeap(a) as Float32Array;
  const bv = backend.typedArrayFromHeap(b) as Float32Array;
  const cv = backend.typedArrayFromHeap(out) as Float32Array;
  blas.sgemmBatch(av, bv, cv, d.batchA, d.batchB, d.batch, d.m, d.n, d.k, d.transposeA, d.transposeB);
  return out;
}

/** Loops over batch items, each an NN batch-1 stock call; see the file comment. */
function perItem(
  backend: BackendWasm,
  aN: tf.TensorInfo,
  bN: tf.TensorInfo,
  batchA: number,
  batchB: number,
  batch: number,
  m: number,
  k: number,
  n: number,
  outShape: number[],
): tf.TensorInfo {
  const out = backend.makeOutput([batch, m, n], 'float32');
  const nn = { transposeA: false, transposeB: false };
  // a is never cached by XNNPACK, so one scratch item is reused; a shared a (batchA 1) is passed as is.
  const aScratch = batchA === 1 ? null : backend.makeOutput([1, m, k], 'float32');
  try {
    for (let i = 0; i < batch; i++) {
      let aItem: tf.TensorInfo = { dataId: aN.dataId, shape: [1, m, k], dtype: 'float32' };
      if (aScratch !== null) {
        const src = backend.typedArrayFromHeap(aN) as Float32Array;
        const dst = backend.typedArrayFromHeap(aScratch) as Float32Array;
        const off = (i % batchA) * m * k;
        dst.set(src.subarray(off, off + m * k));
        aItem = aScratch;
      }
      // b must be a fresh tensor per item: XNNPACK caches packed weights by b's id, so reusing
      // one scratch id with new contents would multiply by stale weights.
      const bItem = backend.makeOutput([1, k, n], 'float32');
      const outItem = (() => {
        try {
          const src = backend.typedArrayFromHeap(bN) as Float32Array; // views re-fetched after makeOutput
          const off = (i % batchB) * k * n;
          (backend.typedArrayFromHeap(bItem) as Float32Array).set(src.subarray(off, off + k * n));
          return stock!({ inputs: { a: aItem, b: bItem }, backend, attrs: nn });
        } finally {
          backend.disposeData(bItem.dataId);
        }
      })();
      const res = backend.typedArrayFromHeap(outItem) as Float32Array;
      (backend.typedArrayFromHeap(out) as Float32Array).set(res, i * m * n);
      backend.disposeData(outItem.dataId);
    }
  } catch (err) {
    backend.disposeData(out.dataId);
    throw err;
  } finally {
    if (aScratch !== null) backend.disposeData(aScratch.dataId);
  }
  out.shape = outShape;
  return out;
}

/**
 * Replaces the wasm `BatchMatMul` kernel with the rerouting wrapper (keeping the stock setup
 * function, so a later backend re-initialisation still sets the stock kernel up). Idempotent.
 * @returns true when this call installed it.
 * @example
 * installWasmBatchMatMulShim(); // before or after tf.setBackend('wasm')
 */
export function installWasmBatchMatMulShim(): boolean {
  if (stock !== null) return false;
  const config = tf.getKernel(KERNEL, 'wasm');
  const transpose = tf.getKernel('Transpose', 'wasm');
  if (config == null || transpose == null) {
    throw new Error("wasm backend kernels 'BatchMatMul'/'Transpose' are not registered; import '@tensorflow/tfjs-backend-wasm' first");
  }
  stock = config.kernelFunc as unknown as Kernel;
  transposeKernel = transpose.kernelFunc as unknown as Kernel;
  tf.unregisterKernel(KERNEL, 'wasm');
  tf.registerKernel({
    kernelName: KERNEL,
    backendName: 'wasm',
    setupFunc: config.setupFunc,
    disposeFunc: config.disposeFunc,
    kernelFunc: batchMatMulShim as unknown as tf.KernelFunc,
  });
  return true;
}
