/**
 * Zero-copy `Identity` for the tfjs wasm backend.
 *
 * Why: with gradients on, tfjs saves every kernel input for the backward pass through
 * `tf.clone`, i.e. the `Identity` kernel, and the stock wasm kernel copies the whole buffer each
 * time (185 copies per training step of the default policy, ~3 % of the step). The cpu backend's
 * Identity instead shares the input's data and bumps its reference count, exactly as the wasm
 * `Reshape` kernel already does. That is sound because tfjs never writes into an existing
 * buffer: kernels write fresh outputs and `Variable.assign` swaps the dataId. Sharing also lets
 * the BatchMatMul shim recognise one activation saved for several matmuls (its transpose cache).
 */
import { tf } from './tf.js';

const KERNEL = 'Identity';

type KernelArgs = { inputs: Record<string, tf.TensorInfo>; backend: unknown; attrs?: tf.NamedAttrMap };
type Kernel = (args: KernelArgs) => tf.TensorInfo;

let stock: Kernel | null = null;

function identityShared(args: KernelArgs): tf.TensorInfo {
  const { x } = args.inputs;
  if (x.dtype === 'string') return stock!(args);
  (args.backend as { incRef(dataId: object): void }).incRef(x.dataId);
  return { dataId: x.dataId, shape: x.shape, dtype: x.dtype };
}

/**
 * Replaces the wasm `Identity` kernel with the sharing one. Idempotent.
 * @returns true when this call installed it.
 * @example installWasmIdentityShim(); // then tf.clone(x) on wasm copies nothing
 */
export function installWasmIdentityShim(): boolean {
  if (stock !== null) return false;
  const config = tf.getKernel(KERNEL, 'wasm');
  if (config == null) throw new Error("wasm backend kernel 'Identity' is not registered; import '@tensorflow/tfjs-backend-wasm' first");
  stock = config.kernelFunc as unknown as Kernel;
  tf.unregisterKernel(KERNEL, 'wasm');
  tf.registerKernel({ ...config, kernelFunc: identityShared as unknown as tf.KernelFunc });
  return true;
}
