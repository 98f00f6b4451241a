/**
 * One Adam step of one variable as a single wasm-backend kernel on the native addon
 * (`native/adam.c`, issue #20): tfjs' `AdamOptimizer` runs about thirteen kernels per variable
 * (each a full pass over the weights, plus its dispatch); this is one pass, AVX-512 where the CPU
 * has it, and bit for bit the same float32 results (same operations, same order, no FMA).
 * Used by `AdamW` (src/learner/optimizer.ts) on wasm with the addon; elsewhere tfjs' own update runs.
 */
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import type { NativeBlas } from './native-blas.js';
import { tf } from './tf.js';
import { nativeKernels } from './native.js';

const KERNEL = 'TurnwiseAdamStep';

type KernelArgs = { inputs: Record<string, tf.TensorInfo>; backend: unknown; attrs?: tf.NamedAttrMap };

/** The scalars of one step, as tfjs rounds them (float32). */
export interface AdamScalars {
  readonly beta1: number;
  readonly beta2: number;
  readonly epsilon: number;
  readonly learningRate: number;
  /** `1 - beta1^t` and `1 - beta2^t` as tfjs keeps them (`1 - accBeta`, float32). */
  readonly oneMinusAccBeta1: number;
  readonly oneMinusAccBeta2: number;
}

let registered = false;
let calls = 0;

/**
 * Variables updated natively since start-up (tests, benchmarks).
 * @example const before = nativeAdamCalls(); optimizer.apply(vars, grads); // + vars.length on wasm with the addon
 */
export function nativeAdamCalls(): number {
  return calls;
}

function register(blas: NativeBlas): void {
  if (registered) return;
  registered = true;
  tf.registerKernel({
    kernelName: KERNEL,
    backendName: 'wasm',
    kernelFunc: ((args: KernelArgs) => {
      const backend = args.backend as BackendWasm;
      const { w, m, v, g } = args.inputs as Record<'w' | 'm' | 'v' | 'g', tf.TensorInfo>;
      const a = args.attrs as Record<'b1' | 'c1' | 'b2' | 'c2' | 'omab1' | 'omab2' | 'eps' | 'negLr', number>;
      const outs = [backend.makeOutput(w.shape, 'float32'), backend.makeOutput(w.shape, 'float32'), backend.makeOutput(w.shape, 'float32')];
      // Views after the allocations: an allocation may grow the heap and detach older views.
      const view = (t: tf.TensorInfo) => backend.typedArrayFromHeap(t) as Float32Array;
      const [wOut, mOut, vOut] = outs.map(view) as [Float32Array, Float32Array, Float32Array];
      blas.adamStep(view(w), view(m), view(v), view(g), wOut, mOut, vOut, a.b1, a.c1, a.b2, a.c2, a.omab1, a.omab2, a.eps, a.negLr);
      return outs;
    }) as unknown as tf.KernelFunc,
  });
}

/**
 * Whether {@link nativeAdamStep} runs here (wasm backend with the native addon on).
 * @example if (nativeAdamAvailable()) { ... }
 */
export function nativeAdamAvailable(): boolean {
  return nativeKernels() !== null;
}

/**
 * `[w', m', v']` after one Adam step of variable `w` with moments `m`, `v` and gradient `g`, or
 * null when the current backend is not wasm with the native addon (the caller runs tfjs' update).
 * @example const next = nativeAdamStep(w, m, v, g, scalars); if (next) { w.assign(next[0]); m.assign(next[1]); v.assign(next[2]); }
 */
export function nativeAdamStep(w: tf.Tensor, m: tf.Tensor, v: tf.Tensor, g: tf.Tensor, s: AdamScalars): [tf.Tensor, tf.Tensor, tf.Tensor] | null {
  const blas = nativeKernels();
  if (blas === null || [w, m, v, g].some((t) => t.dtype !== 'float32' || t.size !== w.size)) return null;
  register(blas);
  calls++;
  return tf.engine().runKernel(KERNEL, { w, m, v, g }, adamAttrs(s)) as [tf.Tensor, tf.Tensor, tf.Tensor];
}

const HOST_KERNEL = 'TurnwiseAdamStepHost';
let hostRegistered = false;

/** Adam's two moments of one variable, kept outside the wasm heap (plain `Float32Array`s). */
export interface HostMoments {
  readonly m: Float32Array;
  readonly v: Float32Array;
}

function registerHost(blas: NativeBlas): void {
  if (hostRegistered) return;
  hostRegistered = true;
  tf.registerKernel({
    kernelName: HOST_KERNEL,
    backendName: 'wasm',
    kernelFunc: ((args: KernelArgs) => {
      const backend = args.backend as BackendWasm;
      const { w, g } = args.inputs as Record<'w' | 'g', tf.TensorInfo>;
      const a = args.attrs as unknown as Record<'scale' | 'b1' | 'c1' | 'b2' | 'c2' | 'omab1' | 'omab2' | 'eps' | 'negLr', number> & { moments: HostMoments };
      const out = backend.makeOutput(w.shape, 'float32');
      // Views after the allocation: an allocation may grow the heap and detach older views.
      const view = (t: tf.TensorInfo) => backend.typedArrayFromHeap(t) as Float32Array;
      blas.adamStepHost(view(w), view(g), view(out), a.moments.m, a.moments.v, a.scale, a.b1, a.c1, a.b2, a.c2, a.omab1, a.omab2, a.eps, a.negLr);
      return out;
    }) as unknown as tf.KernelFunc,
  });
}

/**
 * `w'` after one Adam step of variable `w` on the gradient `g * scale` (the global-norm clip folded
 * in), its moments updated in place outside the wasm heap; null when the current backend is not
 * wasm with the native addon. The same bits as {@link nativeAdamStep} on `mul(g, scale)`.
 * @example const next = nativeAdamHostStep(w, g, moments, scale, scalars); if (next) w.assign(next);
 */
export function nativeAdamHostStep(w: tf.Tensor, g: tf.Tensor, moments: HostMoments, scale: number, s: AdamScalars): tf.Tensor | null {
  const blas = nativeKernels();
  if (blas === null || [w, g].some((t) => t.dtype !== 'float32' || t.size !== w.size)) return null;
  if (moments.m.length !== w.size || moments.v.length !== w.size) return null;
  registerHost(blas);
  calls++;
  const attrs = { moments, scale: Math.fround(scale), ...adamAttrs(s) };
  return tf.engine().runKernel(HOST_KERNEL, { w, g }, attrs as unknown as tf.NamedAttrMap) as tf.Tensor;
}

/** The step's scalars as the float32 values the C kernels take (both kernels round them the same way). */
function adamAttrs(s: AdamScalars): Record<'b1' | 'c1' | 'b2' | 'c2' | 'omab1' | 'omab2' | 'eps' | 'negLr', number> {
  const f = Math.fround;
  return {
    b1: f(s.beta1),
    c1: f(1 - s.beta1),
    b2: f(s.beta2),
    c2: f(1 - s.beta2),
    omab1: f(s.oneMinusAccBeta1),
    omab2: f(s.oneMinusAccBeta2),
    eps: f(s.epsilon),
    negLr: f(-s.learningRate),
  };
}
