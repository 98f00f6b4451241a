/**
 * The loss head's target log-probs and entropies on the native addon (`native/log_softmax.c`),
 * as two wasm-backend kernels working on views of the wasm heap, made differentiable with
 * `tf.customGrad`. Why: the same math in tfjs is about a dozen broadcast kernels over the [N, V]
 * logits, a third of a training step on wasm; natively it is one pass forward and one backward.
 * Used by `targetLogProbsAndEntropy` (src/models/transformer/layers.ts) when the wasm backend
 * has the native addon; otherwise that function runs its tfjs form (same math, tested equal).
 */
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import type { NativeBlas } from './native-blas.js';
import { tf } from './tf.js';
import { nativeMatmul } from './native.js';

const FORWARD = 'TurnwiseLogSoftmaxStats';
const BACKWARD = 'TurnwiseLogSoftmaxStatsGrad';

type KernelArgs = { inputs: Record<string, tf.TensorInfo>; backend: unknown; attrs?: tf.NamedAttrMap };

let registered = false;
let calls = 0;

/**
 * How many loss-head calls ran natively since start-up (tests, benchmarks).
 * @example const before = nativeLossHeadCalls(); targetLogProbsAndEntropy(logits, ids); // +1 on wasm with the addon
 */
export function nativeLossHeadCalls(): number {
  return calls;
}

function heap<T extends Float32Array | Int32Array>(backend: BackendWasm, t: tf.TensorInfo): T {
  return backend.typedArrayFromHeap(t) as T;
}

function register(blas: NativeBlas): void {
  if (registered) return;
  registered = true;
  tf.registerKernel({
    kernelName: FORWARD,
    backendName: 'wasm',
    kernelFunc: ((args: KernelArgs) => {
      const backend = args.backend as BackendWasm;
      const { z, targets } = args.inputs as { z: tf.TensorInfo; targets: tf.TensorInfo };
      const [n, v] = z.shape as [number, number];
      const stats = backend.makeOutput([2, n], 'float32');
      const lse = backend.makeOutput([n], 'float32');
      const probs = backend.makeOutput([n, v], 'float32');
      // Views after the allocations: an allocation may grow the heap and detach older views.
      blas.logSoftmaxStats(heap(backend, z), heap(backend, targets), heap(backend, stats), heap(backend, lse), heap(backend, probs), n, v);
      return [stats, lse, probs];
    }) as unknown as tf.KernelFunc,
  });
  tf.registerKernel({
    kernelName: BACKWARD,
    backendName: 'wasm',
    kernelFunc: ((args: KernelArgs) => {
      const backend = args.backend as BackendWasm;
      const { dy, z, targets, stats, lse, probs } = args.inputs as Record<'dy' | 'z' | 'targets' | 'stats' | 'lse' | 'probs', tf.TensorInfo>;
      const [n, v] = z.shape as [number, number];
      const dz = backend.makeOutput([n, v], 'float32');
      blas.logSoftmaxStatsGrad(heap(backend, dy), heap(backend, z), heap(backend, targets), heap(backend, stats), heap(backend, lse), heap(backend, probs), heap(backend, dz), n, v);
      return dz;
    }) as unknown as tf.KernelFunc,
  });
}

/**
 * `[2, N]`: row 0 the log-prob of each row's target under softmax(logits), row 1 the entropy —
 * natively, or null when the current backend is not wasm with the native addon (the caller then
 * runs the tfjs form).
 * @example const both = nativeTargetLogProbsAndEntropy(logits, targetIds) ?? tfjsForm(logits, targetIds);
 */
export function nativeTargetLogProbsAndEntropy(logits: tf.Tensor2D, targetIds: Int32Array): tf.Tensor2D | null {
  const blas = nativeMatmul();
  if (blas === null || tf.getBackend() !== 'wasm' || logits.dtype !== 'float32') return null;
  register(blas);
  calls++;
  const targets = tf.tensor1d(targetIds, 'int32');
  const op = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const [z, save] = args as [tf.Tensor2D, tf.GradSaveFunc];
    const [stats, lse, probs] = tf.engine().runKernel(FORWARD, { z, targets }) as [tf.Tensor, tf.Tensor, tf.Tensor];
    // `targets` is saved too: the forward's tidy would otherwise free it before the backward pass.
    save([z, targets, stats, lse, probs]);
    return {
      value: stats as tf.Tensor2D,
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
        const [zs, ts, ss, ls, ps] = saved as [tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor];
        return [tf.engine().runKernel(BACKWARD, { dy, z: zs, targets: ts, stats: ss, lse: ls, probs: ps }) as tf.Tensor];
      },
    };
  });
  return op(logits) as tf.Tensor2D;
}

/**
 * The gradient of {@link nativeTargetLogProbsAndEntropy} with respect to the logits `z` `[N, V]`,
 * given the upstream `dy` `[2, N]`, recomputing the forward (a chunked loss head keeps no logits
 * between its passes: transformer/chunked-head.ts); null off the native path.
 * @example const dz = nativeLossHeadGradient(z, targetIds, dy); // [N, V]
 */
export function nativeLossHeadGradient(z: tf.Tensor2D, targetIds: Int32Array, dy: tf.Tensor2D): tf.Tensor2D | null {
  const blas = nativeMatmul();
  if (blas === null || tf.getBackend() !== 'wasm' || z.dtype !== 'float32') return null;
  register(blas);
  return tf.tidy(() => {
    const targets = tf.tensor1d(targetIds, 'int32');
    const [stats, lse, probs] = tf.engine().runKernel(FORWARD, { z, targets }) as [tf.Tensor, tf.Tensor, tf.Tensor];
    return tf.engine().runKernel(BACKWARD, { dy, z, targets, stats, lse, probs }) as tf.Tensor2D;
  });
}
