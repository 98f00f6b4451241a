/**
 * AdamW exactly as optax's `adamw` applies it (what SkyRL tx and hosted Tinker run), on plain
 * typed arrays: global-norm clipping first (when asked), then with t counting this model's steps
 *
 *     m ← b1·m + (1−b1)·g        v ← b2·v + (1−b2)·g²
 *     p ← p − lr·( m/(1−b1^t) / (sqrt(v/(1−b2^t)) + eps) + wd·p )
 *
 * eps sits outside the square root and the bias corrections apply to m and v (tfjs' Adam folds
 * them into the learning rate, which moves eps: a different update at eps 1e-12), and the decay is
 * decoupled. Moments are kept in float32 as optax keeps them; the arithmetic runs in float64.
 */
import { InvalidArgumentError } from '../../core/errors.js';
import type { AdamParams } from '../engine.js';

/** Optimizer state of one model: the step count and the two moments per parameter array. */
export interface AdamWState {
  /** Optimizer steps taken (t of the last update). */
  step: number;
  readonly m: Float32Array[];
  readonly v: Float32Array[];
}

/**
 * A fresh state for parameters of these sizes.
 * @example const state = initialAdamWState([p0.length, p1.length]);
 */
export function initialAdamWState(sizes: readonly number[]): AdamWState {
  return { step: 0, m: sizes.map((n) => new Float32Array(n)), v: sizes.map((n) => new Float32Array(n)) };
}

/**
 * Global L2 norm of a list of gradient arrays.
 * @example globalNorm([Float32Array.of(3), Float32Array.of(4)]) // 5
 */
export function globalNorm(grads: readonly Float32Array[]): number {
  let sum = 0;
  for (const g of grads) for (let i = 0; i < g.length; i++) sum += (g[i] as number) * (g[i] as number);
  return Math.sqrt(sum);
}

/**
 * Checks Adam settings (betas in [0, 1), non-negative rate, eps, decay and clip), naming the field.
 * @example checkAdamParams({ learningRate: 1e-4, beta1: 1, beta2: 0.95, eps: 1e-12, weightDecay: 0, gradClipNorm: 0 }) // throws adam_params.beta1
 */
export function checkAdamParams(a: AdamParams): void {
  const fields: Array<[string, number, boolean]> = [
    ['learning_rate', a.learningRate, a.learningRate >= 0],
    ['beta1', a.beta1, a.beta1 >= 0 && a.beta1 < 1],
    ['beta2', a.beta2, a.beta2 >= 0 && a.beta2 < 1],
    ['eps', a.eps, a.eps >= 0],
    ['weight_decay', a.weightDecay, a.weightDecay >= 0],
    ['grad_clip_norm', a.gradClipNorm, a.gradClipNorm >= 0],
  ];
  for (const [name, value, ok] of fields) if (!(ok && Number.isFinite(value))) throw InvalidArgumentError.format(`adam_params.${name}`, `out of range: ${value}`);
}

/**
 * One AdamW step in place on `params` with `grads` (same order and sizes as the state); returns the
 * gradient's global norm before clipping.
 * @example const gradNorm = adamWStep(params, grads, state, adam);
 */
export function adamWStep(params: readonly Float32Array[], grads: readonly Float32Array[], state: AdamWState, a: AdamParams): number {
  checkAdamParams(a);
  if (params.length !== grads.length || params.length !== state.m.length) throw InvalidArgumentError.format('grads', `expected ${state.m.length} arrays, got ${params.length} parameters and ${grads.length} gradients`);
  const norm = globalNorm(grads);
  const clip = a.gradClipNorm > 0 && norm > a.gradClipNorm ? a.gradClipNorm / norm : 1;
  const t = state.step + 1;
  const c1 = 1 - a.beta1 ** t;
  const c2 = 1 - a.beta2 ** t;
  params.forEach((p, k) => {
    const g = grads[k] as Float32Array;
    const m = state.m[k] as Float32Array;
    const v = state.v[k] as Float32Array;
    if (g.length !== p.length || m.length !== p.length) throw InvalidArgumentError.format(`grads[${k}]`, `expected ${p.length} values, got ${g.length}`);
    for (let i = 0; i < p.length; i++) {
      const gi = (g[i] as number) * clip;
      m[i] = a.beta1 * (m[i] as number) + (1 - a.beta1) * gi;
      v[i] = a.beta2 * (v[i] as number) + (1 - a.beta2) * gi * gi;
      const update = (m[i] as number) / c1 / (Math.sqrt((v[i] as number) / c2) + a.eps) + a.weightDecay * (p[i] as number);
      p[i] = (p[i] as number) - a.learningRate * update;
    }
  });
  state.step = t;
  return norm;
}
