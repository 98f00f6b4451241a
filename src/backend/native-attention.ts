/**
 * Attention of whole sequences, `softmax(q·kᵀ/√hd + mask)·v`, as one wasm-backend kernel each way
 * on the native addon (`native/attention.c`, issue #31): the training forward and backward and the
 * sampler's prefill. Through tfjs it was a scale, two batched sgemms and the masked softmax
 * forward, and four batched sgemms and the softmax's backward in the gradient, one tiny
 * [tq, hd] x [hd, tk] product per head each; here query rows make one pass over the keys they can
 * see, and keys the mask blocks (the causal upper triangle, padding) are skipped.
 *
 * Grouped-query attention as `attend` (transformer/layers.ts): query head h reads kv head
 * h / (heads / kvHeads), and a kv head's gradients sum over the query heads that read it. The
 * probabilities are the one `[b, h, tq, tk]` map kept for the backward (tfjs kept the scores too
 * and made two more maps in the gradient); inference keeps none. The mask is not differentiated; it
 * is saved with the inputs (the forward's `tidy` would free it otherwise).
 */
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import type { NativeBlas } from './native-blas.js';
import { nativeKernels } from './native.js';
import { tf } from './tf.js';

type KernelArgs = { inputs: Record<string, tf.TensorInfo>; backend: unknown; attrs?: tf.NamedAttrMap };

/** Context and probabilities (kept for the backward). */
const FORWARD = 'TurnwiseAttention';
/** Context alone (inference: no gradient, no probabilities kept). */
const FORWARD_ONLY = 'TurnwiseAttentionInference';
const BACKWARD = 'TurnwiseAttentionGrad';

let calls = 0;

/**
 * How many attention calls ran natively since start-up (tests, benchmarks).
 * @example const before = nativeAttentionCalls(); attend(q, k, v, mask); // +1 on wasm with the addon
 */
export function nativeAttentionCalls(): number {
  return calls;
}

/** A heap view of a tensor (taken after every allocation: growing the heap detaches older views). */
function view(backend: BackendWasm, t: tf.TensorInfo | undefined): Float32Array {
  return backend.typedArrayFromHeap(t as tf.TensorInfo) as Float32Array;
}

/** The addon's shape arguments (b, h, kvh, tq, tk, hd, mh, scale) from q [b, h, tq, hd], k [b, kvh, tk, hd] and mask [b, mh, tq, tk]. */
function dims(q: tf.TensorInfo | undefined, k: tf.TensorInfo | undefined, mask: tf.TensorInfo | undefined): [number, number, number, number, number, number, number, number] {
  const [b, h, tq, hd] = (q as tf.TensorInfo).shape as [number, number, number, number];
  const [, kvh, tk] = (k as tf.TensorInfo).shape as [number, number, number, number];
  return [b, h, kvh, tq, tk, hd, (mask as tf.TensorInfo).shape[1] as number, 1 / Math.sqrt(hd)];
}

function forward(blas: NativeBlas, backend: BackendWasm, { q, k, v, mask }: Record<string, tf.TensorInfo>, keepProbs: boolean): tf.TensorInfo | tf.TensorInfo[] {
  const shape = dims(q, k, mask);
  const [b, h, , tq, tk, hd] = shape;
  const out = backend.makeOutput([b, h, tq, hd], 'float32');
  const probs = keepProbs ? backend.makeOutput([b, h, tq, tk], 'float32') : null;
  const w = (s: tf.TensorInfo | undefined) => view(backend, s);
  blas.attentionForward(w(q), w(k), w(v), w(mask), w(out), probs === null ? new Float32Array(0) : w(probs), ...shape);
  return probs === null ? out : [out, probs];
}

function backward(blas: NativeBlas, backend: BackendWasm, { dout, q, k, v, mask, probs }: Record<string, tf.TensorInfo>): tf.TensorInfo[] {
  const shape = dims(q, k, mask);
  const dq = backend.makeOutput((q as tf.TensorInfo).shape, 'float32');
  const dk = backend.makeOutput((k as tf.TensorInfo).shape, 'float32');
  const dv = backend.makeOutput((k as tf.TensorInfo).shape, 'float32');
  const w = (s: tf.TensorInfo | undefined) => view(backend, s);
  blas.attentionBackward(w(dout), w(q), w(k), w(v), w(mask), w(probs), w(dq), w(dk), w(dv), ...shape);
  return [dq, dk, dv];
}

let registered: NativeBlas | null = null;

/** The addon when the kernels can run on these tensors (registering them once), else null. */
function ready(tensors: readonly tf.Tensor[]): NativeBlas | null {
  const blas = nativeKernels();
  if (blas === null || tensors.some((t) => t.dtype !== 'float32' || t.size === 0)) return null;
  if (registered === null) {
    registered = blas;
    const register = (kernelName: string, f: (blas: NativeBlas, backend: BackendWasm, inputs: Record<string, tf.TensorInfo>) => tf.TensorInfo | tf.TensorInfo[]) =>
      tf.registerKernel({ kernelName, backendName: 'wasm', kernelFunc: ((args: KernelArgs) => f(registered as NativeBlas, args.backend as BackendWasm, args.inputs)) as unknown as tf.KernelFunc });
    register(FORWARD, (b, w, inputs) => forward(b, w, inputs, true));
    register(FORWARD_ONLY, (b, w, inputs) => forward(b, w, inputs, false));
    register(BACKWARD, backward);
  }
  return blas;
}

const run = <T>(name: string, inputs: Record<string, tf.Tensor>): T => tf.engine().runKernel(name, inputs, {}) as T;

/** Shapes `attend` accepts: k and v alike, heads a multiple of kv heads, the mask per row (1 or h heads). */
function shapesFit(q: tf.Tensor4D, k: tf.Tensor4D, v: tf.Tensor4D, mask: tf.Tensor4D): boolean {
  const [b, h, tq, hd] = q.shape;
  const [kb, kvh, tk, khd] = k.shape;
  const [mb, mh, mq, mk] = mask.shape;
  return kb === b && khd === hd && h % kvh === 0 && v.shape.every((n, i) => n === k.shape[i]) && mb === b && (mh === 1 || mh === h) && mq === tq && mk === tk;
}

/**
 * `softmax(q·kᵀ/√hd + mask)·v` natively, differentiable in q, k and v, or null (the caller runs the
 * tfjs form): on wasm with the addon, float32 inputs of shapes that fit.
 * @example nativeAttention(q, k, v, mask) ?? tfjsForm(q, k, v, mask) // q [b, h, tq, hd], k/v [b, kvh, tk, hd], mask [b, 1 or h, tq, tk]
 */
export function nativeAttention(q: tf.Tensor4D, k: tf.Tensor4D, v: tf.Tensor4D, mask: tf.Tensor4D): tf.Tensor4D | null {
  if (!shapesFit(q, k, v, mask) || ready([q, k, v, mask]) === null) return null;
  calls++;
  const op = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const [qs, ks, vs, save] = args as [tf.Tensor, tf.Tensor, tf.Tensor, tf.GradSaveFunc];
    const [out, probs] = run<[tf.Tensor, tf.Tensor]>(FORWARD, { q: qs, k: ks, v: vs, mask });
    save([qs, ks, vs, mask, probs]);
    return {
      value: out,
      gradFunc: (dout: tf.Tensor, saved: tf.Tensor[]) => {
        const [sq, sk, sv, smask, sprobs] = saved as [tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor];
        return run<[tf.Tensor, tf.Tensor, tf.Tensor]>(BACKWARD, { dout, q: sq, k: sk, v: sv, mask: smask, probs: sprobs });
      },
    };
  });
  return op(q, k, v) as tf.Tensor4D;
}

/**
 * The same value for inference, or null: no probabilities kept and no gradient (a backward pass
 * through it fails: tfjs has no gradient for the kernel).
 * @example nativeAttentionInference(q, k, v, mask) // a prefill's attention
 */
export function nativeAttentionInference(q: tf.Tensor4D, k: tf.Tensor4D, v: tf.Tensor4D, mask: tf.Tensor4D): tf.Tensor4D | null {
  if (!shapesFit(q, k, v, mask) || ready([q, k, v, mask]) === null) return null;
  calls++;
  return run<tf.Tensor4D>(FORWARD_ONLY, { q, k, v, mask });
}
