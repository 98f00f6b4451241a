/**
 * Gradient clipping by global norm, as torch `clip_grad_norm_` (verl `actor.grad_clip`).
 */
import { nativeSumSquares } from '../backend/native-sum-squares.js';
import { tf } from '../backend/tf.js';

/**
 * Global-norm clipping: Pascanu et al. 2013, "On the difficulty of training RNNs", arXiv:1211.5063.
 * Shape: list of gradient tensors → same shapes; the norm is read back to the CPU (one sync).
 *
 * Scales gradients so their global L2 norm is at most `maxNorm` (as torch `clip_grad_norm_`:
 * factor `maxNorm / (norm + 1e-6)` when below 1). A non-finite norm is returned as is and the
 * gradients are left unscaled (the caller skips that update). Returns new tensors; the caller
 * disposes them.
 * @example
 * const { clipped, norm } = clipByGlobalNorm([tf.tensor1d([3, 4])], 1); // norm 5, clipped ≈ [0.6, 0.8]
 */
export function clipByGlobalNorm(grads: readonly tf.Tensor[], maxNorm: number): { clipped: tf.Tensor[]; norm: number } {
  const { norm, scale } = globalNormScale(grads, maxNorm);
  const clipped = grads.map((g) => (scale < 1 ? tf.mul(g, scale) : tf.clone(g)));
  return { clipped, norm };
}

/**
 * The global norm and the factor {@link clipByGlobalNorm} would scale by, without the scaled copies:
 * for an optimizer that folds the scale into its update (`AdamW.apply(vars, grads, scale)`), which
 * saves a copy of every gradient (0.5 GiB for a 135M model). Same arithmetic, same bits.
 * On wasm with the addon the squares are summed natively in double (within float32 rounding of
 * the tfjs form's norm, and more accurate).
 * @example
 * const { norm, scale } = globalNormScale([tf.tensor1d([3, 4])], 1); // norm 5, scale ≈ 0.2
 */
export function globalNormScale(grads: readonly tf.Tensor[], maxNorm: number): { norm: number; scale: number } {
  // Natively (one pass, in double) on wasm with the addon; the tfjs form sums in float32.
  const native = nativeSumSquares(grads);
  const norm = native !== null ? Math.sqrt(native) : tf.tidy(() => tf.sqrt(tf.addN(grads.map((g) => tf.sum(tf.square(g))))).dataSync()[0] as number);
  const scale = Number.isFinite(norm) ? Math.min(1, maxNorm / (norm + 1e-6)) : 1;
  return { norm, scale };
}
