/**
 * Learning-rate schedules, per training step: linear warm-up, then constant or cosine decay
 * (verl `warmup_style: constant | cosine`, `lr_warmup_steps`, `min_lr_ratio`).
 */
import { InvalidArgumentError } from '../core/errors.js';

/** A schedule. */
export interface LrSchedule {
  /** Peak learning rate. */
  readonly lr: number;
  /** Steps of linear warm-up: step s < warmupSteps uses lr·(s + 1)/warmupSteps. */
  readonly warmupSteps: number;
  /** After warm-up: `constant`, or `cosine` decay to lr·minLrRatio at `totalSteps`. */
  readonly kind: 'constant' | 'cosine';
  /** Steps of the whole run (cosine only). */
  readonly totalSteps: number;
  /** Floor of the cosine decay as a share of lr. */
  readonly minLrRatio: number;
}

/**
 * Cosine decay: Loshchilov & Hutter 2017, SGDR, arXiv:1608.03983; warm-up: Goyal et al. 2017, arXiv:1706.02677.
 * Shape: step index (0-based) → learning rate.
 * @example
 * learningRateAt(0, { lr: 1, warmupSteps: 2, kind: 'cosine', totalSteps: 4, minLrRatio: 0 }); // 0.5
 * learningRateAt(3, { lr: 1, warmupSteps: 2, kind: 'cosine', totalSteps: 4, minLrRatio: 0 }); // 0.5 (half-way down)
 */
export function learningRateAt(step: number, schedule: LrSchedule): number {
  const { lr, warmupSteps, kind, totalSteps, minLrRatio } = schedule;
  if (!(lr > 0)) throw InvalidArgumentError.format('lr', `expected > 0, got ${lr}`);
  if (!(Number.isInteger(warmupSteps) && warmupSteps >= 0)) throw InvalidArgumentError.format('warmupSteps', `expected an integer ≥ 0, got ${warmupSteps}`);
  if (!(minLrRatio >= 0 && minLrRatio <= 1)) throw InvalidArgumentError.format('minLrRatio', `expected a number in [0, 1], got ${minLrRatio}`);
  if (step < warmupSteps) return (lr * (step + 1)) / warmupSteps;
  if (kind === 'constant') return lr;
  const span = Math.max(1, totalSteps - warmupSteps);
  const progress = Math.min(1, (step - warmupSteps) / span);
  return lr * (minLrRatio + (1 - minLrRatio) * 0.5 * (1 + Math.cos(Math.PI * progress)));
}
