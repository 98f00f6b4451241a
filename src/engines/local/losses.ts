/**
 * The per-token losses of the Tinker API, as the local engine computes them. With w the weights,
 * lp the current model's log-probs of the targets, old the sampling log-probs, A the advantages and
 * r = exp(lp − old):
 *
 *     cross_entropy         −w·lp
 *     importance_sampling   −w·r·A
 *     ppo                   −w·min(r·A, clip(r, lo, hi)·A)          lo, hi from loss_fn_config (0.8, 1.2)
 *     cispo                 −w·stop_grad(clip(r, lo, hi))·lp·A
 *
 * A token of weight 0 contributes exactly 0 (not 0·NaN) whatever its inputs. Two forms of each:
 * {@link elementwiseLossValues} on plain arrays (what a forward reports, and the reference the tests
 * check against recorded values) and {@link elementwiseLossTensor} in tfjs (what gradients flow
 * through). `dro` is a Tinker loss this engine does not implement; it is refused by name.
 */
import { InvalidArgumentError } from '../../core/errors.js';
import { tf } from '../../backend/tf.js';
import type { EngineDatum, EngineLossConfig, EngineLossName } from '../engine.js';

/** The losses the local engine implements. */
export const LOCAL_LOSSES = ['cross_entropy', 'importance_sampling', 'ppo', 'cispo'] as const satisfies readonly EngineLossName[];
export type LocalLossName = (typeof LOCAL_LOSSES)[number];

/** Clip bounds of the ratio losses when `loss_fn_config` does not give them (SkyRL's and Tinker's defaults). */
export const DEFAULT_CLIP_LOW = 0.8;
export const DEFAULT_CLIP_HIGH = 1.2;

/** A loss with its settings resolved. */
export interface ResolvedLoss {
  readonly name: LocalLossName;
  readonly clipLow: number;
  readonly clipHigh: number;
}

/**
 * Checks a loss name and its config: refuses a loss this engine does not implement and config
 * keys the loss does not take, naming them; fills the clip defaults.
 * @example resolveLoss('ppo', { clip_low_threshold: 0.9 }) // { name: 'ppo', clipLow: 0.9, clipHigh: 1.2 }
 */
export function resolveLoss(name: string, config: EngineLossConfig | undefined): ResolvedLoss {
  if (!(LOCAL_LOSSES as readonly string[]).includes(name)) {
    throw InvalidArgumentError.format('loss_fn', `loss '${name}' is not supported by turnwise's local engine (supported: ${LOCAL_LOSSES.join(', ')})`);
  }
  const loss = name as LocalLossName;
  const takesClip = loss === 'ppo' || loss === 'cispo';
  const keys = Object.keys(config ?? {});
  const allowed = takesClip ? ['clip_low_threshold', 'clip_high_threshold'] : [];
  const unknown = keys.filter((k) => !allowed.includes(k));
  if (unknown.length > 0) throw InvalidArgumentError.format('loss_fn_config', `loss '${loss}' ${allowed.length === 0 ? 'takes no config keys' : `takes only ${allowed.join(', ')}`}; got ${unknown.join(', ')}`);
  const clipLow = config?.clip_low_threshold ?? DEFAULT_CLIP_LOW;
  const clipHigh = config?.clip_high_threshold ?? DEFAULT_CLIP_HIGH;
  if (!(Number.isFinite(clipLow) && Number.isFinite(clipHigh) && clipLow <= clipHigh)) {
    throw InvalidArgumentError.format('loss_fn_config', `expected clip_low_threshold <= clip_high_threshold, got ${clipLow} and ${clipHigh}`);
  }
  return { name: loss, clipLow, clipHigh };
}

/**
 * Checks that a datum carries what its loss reads (sampling log-probs and advantages for the ratio losses).
 * @example requireLossInputs(datum, resolved, 'data[2]')
 */
export function requireLossInputs(d: EngineDatum, loss: ResolvedLoss, field: string): void {
  if (loss.name === 'cross_entropy') return;
  if (d.samplingLogprobs === undefined) throw InvalidArgumentError.format(`${field}.loss_fn_inputs.logprobs`, `required by loss '${loss.name}'`);
  if (d.advantages === undefined) throw InvalidArgumentError.format(`${field}.loss_fn_inputs.advantages`, `required by loss '${loss.name}'`);
}

/**
 * [n] per-token losses of one datum given the current log-probs `lp` (module comment).
 * @example elementwiseLossValues({ name: 'cross_entropy', clipLow: 0.8, clipHigh: 1.2 }, lp, datum)
 */
export function elementwiseLossValues(loss: ResolvedLoss, lp: Float32Array, d: EngineDatum): Float32Array {
  const n = lp.length;
  const out = new Float32Array(n);
  for (let t = 0; t < n; t++) {
    const w = d.weights[t] as number;
    if (w === 0) {
      out[t] = -0;
      continue;
    }
    const l = lp[t] as number;
    if (loss.name === 'cross_entropy') {
      out[t] = -w * l;
      continue;
    }
    const a = (d.advantages as Float32Array)[t] as number;
    const r = Math.exp(l - ((d.samplingLogprobs as Float32Array)[t] as number));
    const clipped = Math.min(Math.max(r, loss.clipLow), loss.clipHigh);
    if (loss.name === 'importance_sampling') out[t] = -w * r * a;
    else if (loss.name === 'ppo') out[t] = -w * Math.min(r * a, clipped * a);
    else out[t] = -w * clipped * l * a;
  }
  return out;
}

/** [N] constants of a flat batch of targets (every datum's tokens one after another). */
export interface LossConstants {
  readonly weights: Float32Array;
  readonly samplingLogprobs: Float32Array | null;
  readonly advantages: Float32Array | null;
}

/**
 * [N] per-token losses in tfjs, differentiable in `lp` (the ratio's clip in cispo is held constant).
 * @example const loss = elementwiseLossTensor(resolved, logprobs, constants); // [N]
 */
export function elementwiseLossTensor(loss: ResolvedLoss, lp: tf.Tensor1D, c: LossConstants): tf.Tensor1D {
  return tf.tidy(() => {
    const w = tf.tensor1d(c.weights);
    if (loss.name === 'cross_entropy') return masked(tf.neg(tf.mul(w, lp)), c.weights);
    const old = tf.tensor1d(c.samplingLogprobs as Float32Array);
    const adv = tf.tensor1d(c.advantages as Float32Array);
    const ratio = tf.exp(tf.sub(lp, old));
    const clipped = tf.clipByValue(ratio, loss.clipLow, loss.clipHigh);
    let objective: tf.Tensor1D;
    if (loss.name === 'importance_sampling') objective = tf.mul(ratio, adv);
    else if (loss.name === 'ppo') objective = tf.minimum(tf.mul(ratio, adv), tf.mul(clipped, adv));
    // tfjs has no stop_gradient: the clipped ratio re-enters as a constant read off the tape
    else objective = tf.mul(tf.mul(tf.tensor1d(clipped.dataSync() as Float32Array), lp), adv);
    return masked(tf.neg(tf.mul(w, objective)), c.weights);
  });
}

/** Zero where the weight is 0, so a masked token's NaN or infinity cannot reach the gradient. */
function masked(values: tf.Tensor1D, weights: Float32Array): tf.Tensor1D {
  if (weights.every((w) => w !== 0)) return values;
  return tf.where(tf.tensor1d(Uint8Array.from(weights, (w) => (w !== 0 ? 1 : 0)), 'bool'), values, tf.zerosLike(values));
}
