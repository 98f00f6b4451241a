/**
 * A LoRA projection `x·W + scale·(x·A)·B` as one wasm-backend kernel on the native addon
 * (`native/lora.c`, issue #31), instead of tfjs's three products, a scale and an add forward and
 * about ten kernels backward. The adapter's product is accumulated onto the base product by sgemm
 * (`alpha = scale`, `beta = 1`): no pass over [n, out] for the scale or the sum, no temporaries.
 *
 * The gradient is registered (`tf.registerGradient`) rather than given through `tf.customGrad`
 * because a registered gradient is one lazy function per input: the tape calls only those on the
 * path to a trainable variable. The base weight is frozen under LoRA, so `dW = xᵀ·dy` (the largest
 * product) never runs, and a first layer's `dx` (its input comes from the frozen embedding) neither;
 * `customGrad` would compute every input's gradient. If the base weight is trainable, `dW` is taken
 * as in tfjs.
 *
 * With LoRA dropout the adapter reads another input than the base (x after dropout): a second
 * kernel name takes it, and x and that input get their gradients apart. Results agree with the tfjs
 * form to float rounding (the scale is applied inside sgemm, before the sum, not after the product
 * as a separate multiply).
 */
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import type { NativeBlas } from './native-blas.js';
import { nativeKernels } from './native.js';
import { tf } from './tf.js';

type KernelArgs = { inputs: Record<string, tf.TensorInfo>; backend: unknown; attrs?: tf.NamedAttrMap };

const FORWARD = 'TurnwiseLoraProject';
/** The same with the adapter's own input `xa` (LoRA dropout). */
const FORWARD_DROPPED = 'TurnwiseLoraProjectDropped';
const ADAPTER_GRADS = 'TurnwiseLoraAdapterGrads';
const INPUT_GRAD = 'TurnwiseLoraInputGrad';

let calls = 0;

/**
 * How many LoRA projections ran natively since start-up (tests, benchmarks).
 * @example const before = nativeLoraCalls(); project(x, adapted); // +1 on wasm with the addon
 */
export function nativeLoraCalls(): number {
  return calls;
}

/** A heap view of a tensor (taken after every allocation: growing the heap detaches older views). */
function view(backend: BackendWasm, t: tf.TensorInfo | undefined): Float32Array {
  return backend.typedArrayFromHeap(t as tf.TensorInfo) as Float32Array;
}

/** [n, in, out, r] of a projection from x [n, in] and b [r, out]. */
function dims(x: tf.TensorInfo | undefined, b: tf.TensorInfo | undefined): [number, number, number, number] {
  const [n, inFeatures] = (x as tf.TensorInfo).shape as [number, number];
  const [rank, outFeatures] = (b as tf.TensorInfo).shape as [number, number];
  return [n, inFeatures, outFeatures, rank];
}

function forward(blas: NativeBlas, backend: BackendWasm, { x, xa, w, a, b }: Record<string, tf.TensorInfo>, scale: number): tf.TensorInfo[] {
  const [n, inFeatures, outFeatures, rank] = dims(x, b);
  const y = backend.makeOutput([n, outFeatures], 'float32');
  const t = backend.makeOutput([n, rank], 'float32');
  const v = (s: tf.TensorInfo | undefined) => view(backend, s);
  blas.loraForward(v(x), v(xa ?? x), v(w), v(a), v(b), v(y), v(t), n, inFeatures, outFeatures, rank, scale);
  return [y, t];
}

function adapterGrads(blas: NativeBlas, backend: BackendWasm, { dy, x, b, t }: Record<string, tf.TensorInfo>, scale: number): tf.TensorInfo[] {
  const [n, inFeatures, outFeatures, rank] = dims(x, b);
  const g = backend.makeOutput([n, rank], 'float32');
  const da = backend.makeOutput([inFeatures, rank], 'float32');
  const db = backend.makeOutput([rank, outFeatures], 'float32');
  const v = (s: tf.TensorInfo | undefined) => view(backend, s);
  blas.loraAdapterGrads(v(dy), v(x), v(b), v(t), v(g), v(da), v(db), n, inFeatures, outFeatures, rank, scale);
  return [g, da, db];
}

function inputGrad(blas: NativeBlas, backend: BackendWasm, { dy, w, a, g }: Record<string, tf.TensorInfo>): tf.TensorInfo {
  const [n, outFeatures] = (dy as tf.TensorInfo).shape as [number, number];
  const [inFeatures, rank] = (a as tf.TensorInfo).shape as [number, number];
  const dx = backend.makeOutput([n, inFeatures], 'float32');
  const v = (s: tf.TensorInfo | undefined) => view(backend, s);
  blas.loraInputGrad(v(dy), v(w), v(a), v(g), v(dx), n, inFeatures, outFeatures, rank);
  return dx;
}

const run = <T>(name: string, inputs: Record<string, tf.Tensor>, attrs: tf.NamedAttrMap = {}): T => tf.engine().runKernel(name, inputs, attrs) as T;

/** The gradient of {@link FORWARD}: saved [x, w, a, b] then the output t; one lazy function per input. */
function gradient(dys: tf.Tensor | tf.Tensor[], saved: tf.Tensor[], attrs: tf.NamedAttrMap): Record<string, () => tf.Tensor> {
  const dy = (Array.isArray(dys) ? dys[0] : dys) as tf.Tensor2D;
  const [x, w, a, b, t] = saved as [tf.Tensor2D, tf.Tensor2D, tf.Tensor2D, tf.Tensor2D, tf.Tensor2D];
  // Made here, not in a function below: dx and dA both read g, and each function runs in its own tidy.
  const [g, da, db] = run<[tf.Tensor2D, tf.Tensor2D, tf.Tensor2D]>(ADAPTER_GRADS, { dy, x, b, t }, { scale: attrs.scale as number });
  return {
    x: () => run<tf.Tensor2D>(INPUT_GRAD, { dy, w, a, g }),
    w: () => tf.matMul(x, dy, true, false),
    a: () => da,
    b: () => db,
  };
}

/** The gradient of {@link FORWARD_DROPPED}: saved [x, xa, w, a, b] then t; x and the adapter's input xa apart. */
function gradientDropped(dys: tf.Tensor | tf.Tensor[], saved: tf.Tensor[], attrs: tf.NamedAttrMap): Record<string, () => tf.Tensor> {
  const dy = (Array.isArray(dys) ? dys[0] : dys) as tf.Tensor2D;
  const [x, xa, w, a, b, t] = saved as [tf.Tensor2D, tf.Tensor2D, tf.Tensor2D, tf.Tensor2D, tf.Tensor2D, tf.Tensor2D];
  const [g, da, db] = run<[tf.Tensor2D, tf.Tensor2D, tf.Tensor2D]>(ADAPTER_GRADS, { dy, x: xa, b, t }, { scale: attrs.scale as number });
  return {
    x: () => tf.matMul(dy, w, false, true),
    xa: () => tf.matMul(g, a, false, true),
    w: () => tf.matMul(x, dy, true, false),
    a: () => da,
    b: () => db,
  };
}

let registered: NativeBlas | null = null;

/** The addon when these kernels can run on the current backend (registering them once), else null. */
function ready(...tensors: tf.Tensor[]): NativeBlas | null {
  const blas = nativeKernels();
  if (blas === null || tensors.some((t) => t.dtype !== 'float32' || t.size === 0)) return null;
  if (registered === null) {
    registered = blas;
    const backendOf = (args: KernelArgs) => args.backend as BackendWasm;
    const register = (kernelName: string, f: (args: KernelArgs) => tf.TensorInfo | tf.TensorInfo[]) =>
      tf.registerKernel({ kernelName, backendName: 'wasm', kernelFunc: f as unknown as tf.KernelFunc });
    register(FORWARD, (args) => forward(registered as NativeBlas, backendOf(args), args.inputs, args.attrs?.scale as number));
    register(FORWARD_DROPPED, (args) => forward(registered as NativeBlas, backendOf(args), args.inputs, args.attrs?.scale as number));
    register(ADAPTER_GRADS, (args) => adapterGrads(registered as NativeBlas, backendOf(args), args.inputs, args.attrs?.scale as number));
    register(INPUT_GRAD, (args) => inputGrad(registered as NativeBlas, backendOf(args), args.inputs));
    type GradFunc = Parameters<typeof tf.registerGradient>[0]['gradFunc'];
    tf.registerGradient({ kernelName: FORWARD, inputsToSave: ['x', 'w', 'a', 'b'], outputsToSave: [false, true], gradFunc: gradient as unknown as GradFunc });
    tf.registerGradient({ kernelName: FORWARD_DROPPED, inputsToSave: ['x', 'xa', 'w', 'a', 'b'], outputsToSave: [false, true], gradFunc: gradientDropped as unknown as GradFunc });
  }
  return blas;
}

/**
 * `x·w + scale·(xa·a)·b` natively, or null (the caller runs the tfjs form); `adapterInput` (xa) is x
 * after LoRA dropout, x itself when absent.
 * @example nativeLoraProject(x, weight, lora.a, lora.b, lora.scale) ?? tfjsForm() // x [n, in] -> [n, out]
 */
export function nativeLoraProject(x: tf.Tensor2D, weight: tf.Tensor2D, a: tf.Tensor2D, b: tf.Tensor2D, scale: number, adapterInput?: tf.Tensor2D): tf.Tensor2D | null {
  const [inFeatures, outFeatures] = weight.shape;
  const fits =
    x.rank === 2 &&
    x.shape[1] === inFeatures &&
    a.shape[0] === inFeatures &&
    b.shape[1] === outFeatures &&
    a.shape[1] === b.shape[0] &&
    (adapterInput === undefined || (adapterInput.shape[0] === x.shape[0] && adapterInput.shape[1] === inFeatures));
  if (!fits || ready(x, weight, a, b, ...(adapterInput === undefined ? [] : [adapterInput])) === null) return null;
  calls++;
  const inputs = { x, w: weight, a, b, ...(adapterInput === undefined ? {} : { xa: adapterInput }) };
  const [y, hidden] = run<[tf.Tensor2D, tf.Tensor2D]>(adapterInput === undefined ? FORWARD : FORWARD_DROPPED, inputs, { scale });
  hidden.dispose(); // the tape keeps its own copy for the backward
  return y;
}
