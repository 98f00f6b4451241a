/**
 * The decoder's non-matmul layers on the native addon (`native/layers.c`, issue #20): RMSNorm, the
 * SwiGLU gate `silu(g) * u` and rotary embeddings, each one wasm-backend
 * kernel forward and one backward (registered like `native-log-softmax.ts`, made differentiable with
 * `tf.customGrad`) instead of several tfjs broadcast kernels each way. The public layer functions in
 * `transformer/layers.ts` call these on wasm with the addon and run their tfjs forms elsewhere (same
 * math; tested equal, values and gradients).
 *
 * Constants a layer reads but is not differentiated by (RoPE's cos/sin) are saved
 * with the inputs: the forward's `tidy` would otherwise free them before the backward pass.
 */
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import type { NativeBlas } from './native-blas.js';
import { tf } from './tf.js';
import { nativeKernels } from './native.js';

type KernelArgs = { inputs: Record<string, tf.TensorInfo>; backend: unknown; attrs?: tf.NamedAttrMap };
type Kernel = (blas: NativeBlas, backend: BackendWasm, inputs: Record<string, tf.TensorInfo>, attrs: Record<string, unknown>) => tf.TensorInfo | tf.TensorInfo[];

const counts = { rmsNorm: 0, swiGlu: 0, rope: 0 };

/**
 * How many calls of each layer ran natively since start-up (tests, benchmarks).
 * @example const before = nativeLayerCalls().rmsNorm; rmsNorm(x, w, 1e-5); // +1 on wasm with the addon
 */
export function nativeLayerCalls(): Readonly<typeof counts> {
  return { ...counts };
}

let registered: NativeBlas | null = null;

/** A heap view of a tensor (taken after every allocation: growing the heap detaches older views). */
function view(backend: BackendWasm, t: tf.TensorInfo): Float32Array {
  return backend.typedArrayFromHeap(t) as Float32Array;
}

const kernels: Record<string, Kernel> = {
  TurnwiseRmsNorm(blas, backend, { x, w }, { eps }) {
    const d = (w as tf.TensorInfo).shape[0] as number;
    const rows = (x as tf.TensorInfo).shape.reduce((a, b) => a * b, 1) / d;
    const y = backend.makeOutput((x as tf.TensorInfo).shape, 'float32');
    const inv = backend.makeOutput([rows], 'float32');
    blas.rmsNormForward(view(backend, x as tf.TensorInfo), view(backend, w as tf.TensorInfo), view(backend, y), view(backend, inv), rows, d, eps as number);
    return [y, inv];
  },
  TurnwiseRmsNormGrad(blas, backend, { dy, x, w, inv }) {
    const d = (w as tf.TensorInfo).shape[0] as number;
    const rows = (inv as tf.TensorInfo).shape[0] as number;
    const dx = backend.makeOutput((x as tf.TensorInfo).shape, 'float32');
    const dw = backend.makeOutput([d], 'float32');
    const v = (t: tf.TensorInfo | undefined) => view(backend, t as tf.TensorInfo);
    blas.rmsNormBackward(v(dy), v(x), v(w), v(inv), v(dx), v(dw), rows, d);
    return [dx, dw];
  },
  TurnwiseSwiGlu(blas, backend, { g, u }) {
    const h = backend.makeOutput((g as tf.TensorInfo).shape, 'float32');
    blas.swiGluForward(view(backend, g as tf.TensorInfo), view(backend, u as tf.TensorInfo), view(backend, h));
    return h;
  },
  TurnwiseSwiGluGrad(blas, backend, { dh, g, u }) {
    const dg = backend.makeOutput((g as tf.TensorInfo).shape, 'float32');
    const du = backend.makeOutput((g as tf.TensorInfo).shape, 'float32');
    const v = (t: tf.TensorInfo | undefined) => view(backend, t as tf.TensorInfo);
    blas.swiGluBackward(v(dh), v(g), v(u), v(dg), v(du));
    return [dg, du];
  },
  TurnwiseRope(blas, backend, { x, cos, sin }, { transpose }) {
    const [b, h, t, hd] = (x as tf.TensorInfo).shape as [number, number, number, number];
    const y = backend.makeOutput([b, h, t, hd], 'float32');
    const v = (s: tf.TensorInfo | undefined) => view(backend, s as tf.TensorInfo);
    blas.rope(v(x), v(cos), v(sin), v(y), b, h, t, hd, transpose === true);
    return y;
  },
};

/** The addon when these kernels can run on the current backend (registering them once), else null. */
function ready(...tensors: tf.Tensor[]): NativeBlas | null {
  const blas = nativeKernels();
  if (blas === null || tensors.some((t) => t.dtype !== 'float32' || t.size === 0)) return null;
  if (registered === null) {
    registered = blas;
    for (const [kernelName, kernel] of Object.entries(kernels)) {
      tf.registerKernel({
        kernelName,
        backendName: 'wasm',
        kernelFunc: ((args: KernelArgs) => kernel(registered as NativeBlas, args.backend as BackendWasm, args.inputs, (args.attrs ?? {}) as Record<string, unknown>)) as unknown as tf.KernelFunc,
      });
    }
  }
  return blas;
}

const run = <T>(name: string, inputs: Record<string, tf.Tensor>, attrs: tf.NamedAttrMap = {}): T => tf.engine().runKernel(name, inputs, attrs) as T;

/**
 * RMSNorm `x / sqrt(mean(x²) + eps) * w` over the last axis, natively, or null (caller runs tfjs).
 * @example nativeRmsNorm(x, w, 1e-5) ?? tfjsForm(x, w, 1e-5) // x [..., d], w [d]
 */
export function nativeRmsNorm<T extends tf.Tensor>(x: T, weight: tf.Tensor1D, eps: number): T | null {
  if (ready(x, weight) === null || x.shape[x.rank - 1] !== weight.shape[0]) return null;
  counts.rmsNorm++;
  const op = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const [xs, w, save] = args as [tf.Tensor, tf.Tensor1D, tf.GradSaveFunc];
    const [y, inv] = run<[tf.Tensor, tf.Tensor]>('TurnwiseRmsNorm', { x: xs, w }, { eps });
    save([xs, w, inv]);
    return {
      value: y,
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
        const [xSaved, wSaved, invSaved] = saved as [tf.Tensor, tf.Tensor, tf.Tensor];
        return run<[tf.Tensor, tf.Tensor]>('TurnwiseRmsNormGrad', { dy, x: xSaved, w: wSaved, inv: invSaved });
      },
    };
  });
  return op(x, weight) as T;
}

/**
 * The SwiGLU gate `silu(g) * u` (elementwise), natively, or null.
 * @example nativeSwiGluGate(xGate, xUp) // [n, f], [n, f] -> [n, f]
 */
export function nativeSwiGluGate(g: tf.Tensor2D, u: tf.Tensor2D): tf.Tensor2D | null {
  if (ready(g, u) === null || g.size !== u.size) return null;
  counts.swiGlu++;
  const op = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const [gs, us, save] = args as [tf.Tensor, tf.Tensor, tf.GradSaveFunc];
    save([gs, us]);
    return {
      value: run<tf.Tensor>('TurnwiseSwiGlu', { g: gs, u: us }),
      gradFunc: (dh: tf.Tensor, saved: tf.Tensor[]) => run<[tf.Tensor, tf.Tensor]>('TurnwiseSwiGluGrad', { dh, g: saved[0] as tf.Tensor, u: saved[1] as tf.Tensor }),
    };
  });
  return op(g, u) as tf.Tensor2D;
}

/**
 * RoPE `x * cos + rotate_half(x) * sin`, natively, or null.
 * @example nativeApplyRope(q, cos, sin) // q [b, h, t, hd]; cos, sin [b, 1, t, hd]
 */
export function nativeApplyRope(x: tf.Tensor4D, cos: tf.Tensor4D, sin: tf.Tensor4D): tf.Tensor4D | null {
  const [b, , t, hd] = x.shape;
  const factorsFit = (f: tf.Tensor4D) => f.shape[0] === b && f.shape[1] === 1 && f.shape[2] === t && f.shape[3] === hd;
  if (ready(x, cos, sin) === null || !factorsFit(cos) || !factorsFit(sin) || hd % 2 !== 0) return null;
  counts.rope++;
  const op = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const [xs, save] = args as [tf.Tensor, tf.GradSaveFunc];
    save([cos, sin]);
    return {
      value: run<tf.Tensor>('TurnwiseRope', { x: xs, cos, sin }, { transpose: false }),
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => [run<tf.Tensor>('TurnwiseRope', { x: dy, cos: saved[0] as tf.Tensor, sin: saved[1] as tf.Tensor }, { transpose: true })],
    };
  });
  return op(x) as tf.Tensor4D;
}
