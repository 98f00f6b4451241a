/**
 * The one switch for native code (issue #28): which of the addon's kernels run. Besides the loader
 * (`native-blas.ts`, which `TURNWISE_NATIVE_BLAS=off` stops from loading the addon at all), this is
 * the only place that decides; every caller asks one of the accessors below and runs its tfjs (or
 * JS) form when it gets null.
 *
 * - `all` (the default): every native kernel — the matrix products and the loss head
 *   ({@link nativeMatmul}), and Adam, RMSNorm, SwiGLU, RoPE, the masked softmax, attention and the
 *   decode step ({@link nativeKernels}).
 * - `matmul`: only the products and the loss head; the other layers run their tfjs forms. How the
 *   bench tells the kernels' share apart, and a way to rule them out when chasing a difference.
 * - `off`: nothing native; products take the XNNPACK rerouting of `wasm-batch-matmul.ts`.
 *
 * `select.ts` sets it from `model.matmul` (`wasm` → `off`; `auto`/`native` with the addon loaded →
 * `all`, without it → `off`). Not to be confused with `setBatchMatMulShimEnabled`: that one turns
 * the XNNPACK rerouting of the *non-native* path on or off (stock kernel vs rerouted, a bench-only
 * comparison) and matters only when products are not native here.
 */
import { InvalidArgumentError } from '../core/errors.js';
import { type NativeBlas, nativeBlas } from './native-blas.js';
import { tf } from './tf.js';

/** Which native kernels run: all of them, only the products (and loss head), or none. */
export type NativeUse = 'all' | 'matmul' | 'off';

const USES: readonly NativeUse[] = ['all', 'matmul', 'off'];
let use: NativeUse = 'all';

/**
 * Sets which native kernels run from now on (they also need the addon loaded).
 * @throws InvalidArgumentError naming `field` for anything but `all`, `matmul` or `off`.
 * @example const was = nativeUse(); setNativeUse('matmul'); // ... setNativeUse(was);
 */
export function setNativeUse(next: NativeUse, field = 'nativeUse'): void {
  if (!USES.includes(next)) throw InvalidArgumentError.format(field, `expected one of ${USES.join(', ')}, got ${JSON.stringify(next)}`);
  use = next;
}

/**
 * Which native kernels are asked for now (whether the addon is loaded is {@link nativeMatmul}'s concern).
 * @example nativeUse() // 'all'
 */
export function nativeUse(): NativeUse {
  return use;
}

/**
 * The addon for the matrix products and the loss head, or null (state `off`, or not loaded).
 * @example nativeMatmul()?.library // 'libopenblas.so.0'
 */
export function nativeMatmul(): NativeBlas | null {
  return use === 'off' ? null : nativeBlas().blas;
}

/**
 * The addon for the kernels on tfjs wasm tensors beyond the products (Adam, RMSNorm, SwiGLU, RoPE,
 * softmax, attention, decode), or null: only with state `all`, the addon loaded and tfjs on `wasm`.
 * @example const blas = nativeKernels(); if (blas === null) return tfjsForm(x);
 */
export function nativeKernels(): NativeBlas | null {
  return tf.getBackend() === 'wasm' ? nativeHostKernels() : null;
}

/**
 * The addon for kernels on plain host arrays, whatever the tfjs backend (the greedy pick over a
 * logits row), or null: state `all` and the addon loaded.
 * @example nativeHostKernels()?.greedyRows(logits, 1, v, count, ids, stats)
 */
export function nativeHostKernels(): NativeBlas | null {
  return use === 'all' ? nativeBlas().blas : null;
}
