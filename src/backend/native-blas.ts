/**
 * The optional native matmul path (issue #10): a small N-API addon (`native/blas.c`, built by
 * `npm run build` when a C compiler is there) that runs a whole `BatchMatMul` as CBLAS `sgemm`
 * calls — OpenBLAS on Debian (`libopenblas0-pthread`, the BLAS PyTorch uses on this machine) —
 * straight on views of the tfjs wasm heap: no transposes, no per-item copies, no per-item
 * XNNPACK operator. Why not tfjs-node: its install downloads libtensorflow, which this kind of
 * machine cannot fetch; OpenBLAS comes from Debian's packages.
 *
 * Loaded lazily and at most once; `nativeBlas()` says why not when it is not available, so the
 * backend line can tell the user (`matmul: wasm (native BLAS: addon not built)`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openblasCoreType } from './openblas-core-type.js';

/** The addon's functions (see `native/blas.c`). */
export interface NativeBlasAddon {
  /** Opens the first CBLAS library that loads; `coreType` (when not '') is set as `OPENBLAS_CORETYPE` first unless the environment already has one. */
  open(candidates: readonly string[], coreType?: string): string;
  sgemmBatch(a: Float32Array, b: Float32Array, c: Float32Array, batchA: number, batchB: number, batch: number, m: number, n: number, k: number, transA: boolean, transB: boolean): void;
  setThreads(n: number): void;
  threads(): number;
  /** The BLAS kernel family in use (OpenBLAS's core name, e.g. `SkylakeX` for its AVX-512 kernels), or '' when unknown. */
  kernels(): string;
  /** Per row of z [n, v]: stats [2, n] (target log-prob, entropy), lse [n] and probs [n, v] (`native/log_softmax.c`). */
  logSoftmaxStats(z: Float32Array, targets: Int32Array, stats: Float32Array, lse: Float32Array, probs: Float32Array, n: number, v: number): void;
  /** One Adam step of one variable into fresh arrays (`native/adam.c`; outputs must not overlap inputs). */
  adamStep(w: Float32Array, m: Float32Array, v: Float32Array, g: Float32Array, wOut: Float32Array, mOut: Float32Array, vOut: Float32Array, b1: number, c1: number, b2: number, c2: number, oneMinusAccB1: number, oneMinusAccB2: number, eps: number, negLr: number): void;
  /** One Adam step of one variable on `g * scale` into `wOut`, the moments `m` and `v` updated in place (`native/adam.c`). */
  adamStepHost(w: Float32Array, g: Float32Array, wOut: Float32Array, m: Float32Array, v: Float32Array, scale: number, b1: number, c1: number, b2: number, c2: number, oneMinusAccB1: number, oneMinusAccB2: number, eps: number, negLr: number): void;
  /** y = x·w + scale·(xa·a)·b and the adapter's hidden t = xa·a (`native/lora.c`); x, xa [n, in] (xa: x after LoRA dropout, or x), w [in, out], a [in, r], b [r, out]. */
  loraForward(x: Float32Array, xa: Float32Array, w: Float32Array, a: Float32Array, b: Float32Array, y: Float32Array, t: Float32Array, n: number, inFeatures: number, outFeatures: number, rank: number, scale: number): void;
  /** The adapter's gradients of {@link NativeBlasAddon.loraForward}: g = scale·dy·bᵀ [n, r], da = xᵀ·g, db = scale·tᵀ·dy. */
  loraAdapterGrads(dy: Float32Array, x: Float32Array, b: Float32Array, t: Float32Array, g: Float32Array, da: Float32Array, db: Float32Array, n: number, inFeatures: number, outFeatures: number, rank: number, scale: number): void;
  /** The input's gradient of {@link NativeBlasAddon.loraForward}: dx = dy·wᵀ + g·aᵀ. */
  loraInputGrad(dy: Float32Array, w: Float32Array, a: Float32Array, g: Float32Array, dx: Float32Array, n: number, inFeatures: number, outFeatures: number, rank: number): void;
  /** RMSNorm over rows of x [rows, d] with gain w [d]: y [rows, d] and the inverse norms inv [rows] (`native/layers.c`). */
  rmsNormForward(x: Float32Array, w: Float32Array, y: Float32Array, inv: Float32Array, rows: number, d: number, eps: number): void;
  /** Gradients of {@link NativeBlasAddon.rmsNormForward}: dx [rows, d], dw [d]. */
  rmsNormBackward(dy: Float32Array, x: Float32Array, w: Float32Array, inv: Float32Array, dx: Float32Array, dw: Float32Array, rows: number, d: number): void;
  /** h = silu(g) * u, elementwise. */
  swiGluForward(g: Float32Array, u: Float32Array, h: Float32Array): void;
  /** Gradients of {@link NativeBlasAddon.swiGluForward}. */
  swiGluBackward(dh: Float32Array, g: Float32Array, u: Float32Array, dg: Float32Array, du: Float32Array): void;
  /** RoPE on x [b, h, t, hd] with cos/sin [b, t, hd]; `transpose` applies the backward (transposed rotation). */
  rope(x: Float32Array, cos: Float32Array, sin: Float32Array, y: Float32Array, b: number, h: number, t: number, hd: number, transpose: boolean): void;
  /**
   * Attention of whole sequences (`native/attention.c`): probs = softmax(scale·q·kᵀ + mask) [b, h, tq, tk] (not written when `probs` is empty), out = probs·v;
   * q, out [b, h, tq, hd], k, v [b, kvh, tk, hd], mask [b, mh, tq, tk] (mh = 1 or h); mask values ≤ -1e8 block their key.
   */
  attentionForward(q: Float32Array, k: Float32Array, v: Float32Array, mask: Float32Array, out: Float32Array, probs: Float32Array, b: number, h: number, kvh: number, tq: number, tk: number, hd: number, mh: number, scale: number): void;
  /** Gradients of {@link NativeBlasAddon.attentionForward} given dout [b, h, tq, hd] and its probs: dq, dk, dv. */
  attentionBackward(
    dout: Float32Array,
    q: Float32Array,
    k: Float32Array,
    v: Float32Array,
    mask: Float32Array,
    probs: Float32Array,
    dq: Float32Array,
    dk: Float32Array,
    dv: Float32Array,
    b: number,
    h: number,
    kvh: number,
    tq: number,
    tk: number,
    hd: number,
    mh: number,
    scale: number,
  ): void;
  /** Per row of z [n, v], over its first `count` columns: the argmax ids [n] (ties: lower id) and stats [2, n] (its log-prob, the entropy) (`native/greedy.c`). */
  greedyRows(z: Float32Array, n: number, v: number, count: number, ids: Int32Array, stats: Float32Array): void;
  /** `cpuAttention` natively: q [rows, heads, queries, headDim] over keys/values [rows, kvHeads, capacity, headDim] into out (`native/decode_attention.c`). */
  decodeAttention(
    q: Float32Array,
    keys: Float32Array,
    values: Float32Array,
    pastMask: Uint8Array,
    newMask: Uint8Array,
    out: Float32Array,
    rows: number,
    heads: number,
    kvHeads: number,
    queries: number,
    headDim: number,
    past: number,
    capacity: number,
  ): void;
  /** This core's measured float32 FMA peak: GFLOP/s per CPU-second of the calling thread at the widest vector width (`lanes` floats; 0 when the CPU has no FMA) (`native/fma_peak.c`). */
  fmaPeak(seconds: number): { gflops: number; lanes: number; cpuSeconds: number };
  /** `count` blocks of `width` floats, `src[srcOffset + i * srcStride ...]` to `dst[dstOffset + i * dstStride ...]` (`native/packed.c`). */
  stridedCopy(src: Float32Array, srcOffset: number, srcStride: number, dst: Float32Array, dstOffset: number, dstStride: number, count: number, width: number): void;
  /** RoPE in place on the q and k heads of fused rows qkv [positions.length, (heads + 2 kvHeads) hd], in double as the JS form (`native/packed.c`). */
  ropePacked(qkv: Float32Array, positions: Int32Array, cos: Float32Array, sin: Float32Array, heads: number, kvHeads: number, hd: number): void;
  /** The sum of the squares of every value of every array, accumulated in double (`native/sum_squares.c`). */
  sumSquares(arrays: readonly Float32Array[]): number;
  /** The gradient of {@link NativeBlasAddon.logSoftmaxStats} with respect to z, given dy [2, n]. */
  logSoftmaxStatsGrad(dy: Float32Array, z: Float32Array, targets: Int32Array, stats: Float32Array, lse: Float32Array, probs: Float32Array, dz: Float32Array, n: number, v: number): void;
}

/** A loaded native BLAS. */
export interface NativeBlas extends NativeBlasAddon {
  /** The shared library that provided `cblas_sgemm`, e.g. `libopenblas.so.0`. */
  readonly library: string;
}

/** Libraries tried in order: OpenBLAS (threaded), then any CBLAS Debian's alternatives provide. */
export const BLAS_CANDIDATES = ['libopenblas.so.0', 'libopenblas.so', 'libcblas.so.3', 'libblas.so.3'] as const;

/** Where `npm run build` puts the addon, relative to the package root. */
export const ADDON_PATH = 'native/build/turnwise_blas.node';

/** /proc/cpuinfo, or '' where there is none (not Linux). */
function cpuInfo(): string {
  try {
    return readFileSync('/proc/cpuinfo', 'utf8');
  } catch {
    return '';
  }
}

let loaded: { blas: NativeBlas | null; why: string } | null = null;

function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) return dir;
    dir = up;
  }
  return dir;
}

/**
 * The native BLAS, or null with the reason (addon not built, no CBLAS library, turned off by
 * `TURNWISE_NATIVE_BLAS=off`). Loads once per thread.
 * @example
 * const { blas, why } = nativeBlas();
 * console.log(blas === null ? `wasm matmuls (${why})` : `matmuls: ${blas.library}`);
 */
export function nativeBlas(): { readonly blas: NativeBlas | null; readonly why: string } {
  if (loaded !== null) return loaded;
  if (process.env.TURNWISE_NATIVE_BLAS === 'off') {
    loaded = { blas: null, why: 'turned off by TURNWISE_NATIVE_BLAS=off' };
    return loaded;
  }
  const file = join(packageRoot(), ADDON_PATH);
  if (!existsSync(file)) {
    loaded = { blas: null, why: `addon not built (${ADDON_PATH}; \`npm run build\` builds it when a C compiler is present)` };
    return loaded;
  }
  try {
    const addon = createRequire(import.meta.url)(file) as NativeBlasAddon;
    const library = addon.open(BLAS_CANDIDATES, openblasCoreType(cpuInfo(), process.env) ?? '');
    // The addon's functions are non-enumerable (napi_default), so a spread would copy none: inherit them.
    loaded = { blas: Object.create(addon, { library: { value: library, enumerable: true } }) as NativeBlas, why: '' };
  } catch (err) {
    loaded = { blas: null, why: (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? 'failed to load' };
  }
  return loaded;
}
