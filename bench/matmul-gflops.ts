/**
 * Matmul micro-benchmark on the wasm backend: the stock `BatchMatMul` kernel against the
 * rerouting shim, in GFLOP/s (2·M·N·K per batch item), for benchmarks and its test to call.
 * Method: `c = tf.matMul(a, b); c.dataSync()` in a loop for at least `minMs` per path after a
 * warm-up (`dataSync` so the time includes the work, not only its scheduling).
 */
import { selectBackend } from '../src/backend/select.js';
import { tf } from '../src/backend/tf.js';
import { nativeUse, setNativeUse } from '../src/backend/native.js';
import { reroutedBatchMatMulCalls, setBatchMatMulShimEnabled } from '../src/backend/wasm-batch-matmul.js';

/** One matmul to measure. */
export interface MatmulShape {
  /** Shown in results; default e.g. `[8,128,64]x[8,128,64] NT`. */
  readonly label?: string;
  readonly a: readonly number[];
  readonly b: readonly number[];
  readonly transposeA?: boolean;
  readonly transposeB?: boolean;
}

/** Result for one shape. */
export interface MatmulGflops {
  readonly label: string;
  /** Floating-point operations per call (2·batch·M·N·K). */
  readonly flopsPerCall: number;
  readonly stockGflops: number;
  readonly shimGflops: number;
  /** shim / stock. */
  readonly speedup: number;
  /** Whether the shim actually rerouted this shape (false: below threshold or NN batch 1). */
  readonly rerouted: boolean;
}

/** The shapes the platform notes quote: attention-like NT and TN, and a dense NN layer. */
export const DEFAULT_MATMUL_BENCH_SHAPES: readonly MatmulShape[] = [
  { a: [8, 128, 64], b: [8, 128, 64], transposeB: true, label: '[8,128,64]x[8,64,128] NT' },
  { a: [8, 64, 128], b: [8, 64, 128], transposeA: true, label: '[8,128,64]x[8,64,128] TN' },
  { a: [1024, 128], b: [128, 128], label: '[1024x128]x[128x128] NN' },
];

function flopsOf(s: MatmulShape): number {
  const ra = s.a.length;
  const rb = s.b.length;
  const m = s.transposeA ? s.a[ra - 1] : s.a[ra - 2];
  const k = s.transposeA ? s.a[ra - 2] : s.a[ra - 1];
  const n = s.transposeB ? s.b[rb - 2] : s.b[rb - 1];
  const batch = Math.max(
    s.a.slice(0, -2).reduce((p, d) => p * d, 1),
    s.b.slice(0, -2).reduce((p, d) => p * d, 1),
  );
  return 2 * batch * m * n * k;
}

function timeGflops(a: tf.Tensor, b: tf.Tensor, s: MatmulShape, flops: number, minMs: number): number {
  const once = () => {
    const c = tf.matMul(a, b, s.transposeA ?? false, s.transposeB ?? false);
    c.dataSync();
    c.dispose();
  };
  once();
  once();
  let calls = 0;
  const start = performance.now();
  let elapsed = 0;
  while (elapsed < minMs) {
    once();
    calls++;
    elapsed = performance.now() - start;
  }
  return (flops * calls) / (elapsed / 1000) / 1e9;
}

/**
 * Measures stock vs shim GFLOP/s on the wasm backend for each shape. Selects wasm if needed and
 * restores the previous backend afterwards; leaves the shim enabled.
 * @example
 * for (const r of await measureMatmulGflops(DEFAULT_MATMUL_BENCH_SHAPES)) {
 *   console.log(`${r.label}: stock ${r.stockGflops.toFixed(2)}, shim ${r.shimGflops.toFixed(2)} GFLOP/s`);
 * }
 */
export async function measureMatmulGflops(
  shapes: readonly MatmulShape[] = DEFAULT_MATMUL_BENCH_SHAPES,
  options: { minMs?: number } = {},
): Promise<MatmulGflops[]> {
  const minMs = options.minMs ?? 300;
  const previous = tf.getBackend();
  await selectBackend('wasm');
  // Stock vs the XNNPACK rerouting: the native BLAS path stays out (bench/scale measures it).
  const nativeWas = nativeUse();
  setNativeUse('off');
  const results: MatmulGflops[] = [];
  try {
    for (const s of shapes) {
      const label = s.label ?? `[${s.a}]x[${s.b}] ${s.transposeA ? 'T' : 'N'}${s.transposeB ? 'T' : 'N'}`;
      const flops = flopsOf(s);
      const a = tf.randomUniform([...s.a], -1, 1);
      const b = tf.randomUniform([...s.b], -1, 1);
      try {
        setBatchMatMulShimEnabled(false);
        const stockGflops = timeGflops(a, b, s, flops, minMs);
        setBatchMatMulShimEnabled(true);
        const before = reroutedBatchMatMulCalls();
        const shimGflops = timeGflops(a, b, s, flops, minMs);
        const rerouted = reroutedBatchMatMulCalls() > before;
        results.push({ label, flopsPerCall: flops, stockGflops, shimGflops, speedup: shimGflops / stockGflops, rerouted });
      } finally {
        setBatchMatMulShimEnabled(true);
        a.dispose();
        b.dispose();
      }
    }
  } finally {
    setNativeUse(nativeWas);
    if (previous !== 'wasm') await tf.setBackend(previous);
  }
  return results;
}
