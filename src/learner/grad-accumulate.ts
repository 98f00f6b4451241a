/**
 * The gradient half of a learner update, shared by the single-process trainer and the
 * data-parallel gradient workers (`src/learner/data-parallel/`): for each micro-batch, the model's
 * training forward, the PPO-clip (or off-policy) actor loss and the clipped value loss, weighted
 * by aggregation weights computed over the WHOLE mini-batch, differentiated, and summed.
 *
 * Why the sum is exact under sharding: every per-target weight (`MicroBatch.weights`,
 * `tokenWeights`, `tokenCount`) is normalised over the whole mini-batch before it is cut
 * (`prepareStep`), so any partition of the micro-batches into shards, each summed on its own and
 * then added, gives the gradient of the mini-batch aggregate (up to float rounding order).
 */
import { valueLoss } from '../algorithms/losses.js';
import { type PolicyLossEntry, policyLossRegistry } from '../algorithms/policy-loss-registry.js';
import { offPolicyLoss } from '../algorithms/off-policy.js';
import { TurnwiseError } from '../core/errors.js';
import { tf } from '../backend/tf.js';
import type { Critic } from './critic.js';
import type { TrainStepOptions } from './train-options.js';
import type { MicroBatch, TrainableModel } from './train-contract.js';

/** Loss metric ← stats vector index, in the order {@link accumulateGradients} stacks them. */
export const STATS = ['loss/total', 'loss/policy', 'loss/klRef', 'loss/entropy', 'loss/clipFrac', 'loss/dualClipFrac', 'loss/approxKl', 'loss/value', 'loss/valueClipFrac', 'offpolicy/isWeight', 'offpolicy/truncFrac'] as const;
/** One loss statistic's metric name. */
export type StatName = (typeof STATS)[number];

/** The per-step settings the gradient reads (a subset of {@link TrainStepOptions}, plain data). */
export type GradientOptions = Pick<TrainStepOptions, 'temperature' | 'clipRatio' | 'entropyCoef' | 'dualClip' | 'klEstimator' | 'offPolicy' | 'valueClip' | 'valueCoef' | 'policyLoss'> & {
  /** KL coefficient in force this step. */
  readonly klCoef: number;
  /** Critic warm-up: only the critic learns, so no actor gradient is computed. */
  readonly warmingUp: boolean;
};

/** Picks the gradient settings out of a step's options. */
export function gradientOptionsOf(o: TrainStepOptions, klCoef: number, warmingUp: boolean): GradientOptions {
  const { temperature, clipRatio, entropyCoef, dualClip, klEstimator, offPolicy, valueClip, valueCoef, policyLoss } = o;
  return { temperature, clipRatio, entropyCoef, dualClip, klEstimator, offPolicy, valueClip, valueCoef, klCoef, warmingUp, ...(policyLoss ? { policyLoss } : {}) };
}

/** The registered policy loss the options name (default `ppo-clip`). */
function policyLossOf(o: GradientOptions): PolicyLossEntry {
  return policyLossRegistry.get(o.policyLoss?.name ?? 'ppo-clip');
}

/** The models a gradient is taken of. */
export interface GradientModels {
  readonly policy: TrainableModel;
  readonly critic: Critic | null;
}

/** Summed gradients (tensors the caller disposes) and summed loss statistics ([STATS.length]). */
export interface AccumulatedGradients {
  /** One per policy variable in `trainableVariables()` order; empty while the critic warms up. */
  readonly actorGrads: tf.Tensor[];
  /** One per critic variable; empty without a critic. */
  readonly criticGrads: tf.Tensor[];
  readonly stats: number[];
}

/**
 * PPO: Schulman et al. 2017, arXiv:1707.06347. Shape: micro-batches with per-target arrays [N] →
 * one gradient per variable. `proximalOf` gives a micro-batch's proximal log-probs (decoupled PPO).
 * @example
 * const { actorGrads, stats } = accumulateGradients({ policy, critic: null }, chunk, gradientOptionsOf(o, 0, false), () => undefined);
 */
export function accumulateGradients(
  models: GradientModels,
  chunk: readonly MicroBatch[],
  o: GradientOptions,
  proximalOf: (micro: MicroBatch) => Float32Array | undefined,
): AccumulatedGradients {
  if (chunk.length === 0 || chunk[0].tokenCount === 0) throw new TurnwiseError('accumulate: no trained tokens in this mini-batch');
  const { policy, critic } = models;
  const actorVars = o.warmingUp ? [] : policy.trainableVariables();
  const vars = [...actorVars, ...(critic?.trainableVariables() ?? [])];
  let acc: tf.Tensor[] | null = null;
  let statsAcc: tf.Tensor1D | null = null;
  for (const micro of chunk) {
    const held: { stats?: tf.Tensor1D } = {};
    const grads = tf.tidy(() => {
      const { grads: named } = tf.variableGrads(() => {
        const out =
          critic?.usesPolicyHidden === true
            ? (policy.forwardTrainWithHidden as NonNullable<TrainableModel['forwardTrainWithHidden']>)(micro.batch, o.temperature)
            : { ...policy.forwardTrain(micro.batch, o.temperature), hidden: null };
        const lossInput = {
          logprobs: out.logprobs,
          entropy: out.entropy,
          oldLogprobs: tf.tensor1d(micro.oldLogprobs),
          advantages: tf.tensor1d(micro.advantages),
          lossMask: tf.tensor1d(micro.lossMask),
          refLogprobs: micro.refLogprobs === null ? null : tf.tensor1d(micro.refLogprobs),
          weights: tf.tensor1d(micro.weights),
        };
        const lossOptions = { clipRatio: o.clipRatio, klCoef: o.klCoef, entropyCoef: o.entropyCoef, tokenCount: micro.tokenCount, dualClip: o.dualClip, klEstimator: o.klEstimator };
        const prox = proximalOf(micro);
        const terms =
          o.offPolicy.kind === 'none'
            ? { ...policyLossOf(o).loss(lossInput, lossOptions, o.policyLoss?.settings), isWeight: tf.scalar(0), truncFrac: tf.scalar(0) }
            : offPolicyLoss({ ...lossInput, proxLogprobs: prox === undefined ? null : tf.tensor1d(prox) }, lossOptions, o.offPolicy);
        let total: tf.Scalar = o.warmingUp ? tf.scalar(0) : terms.total;
        let value = { loss: tf.scalar(0), clipFrac: tf.scalar(0) };
        if (critic !== null && micro.oldValues !== null) {
          value = valueLoss(
            {
              values: critic.values(micro.batch, out.hidden),
              oldValues: tf.tensor1d(micro.oldValues),
              returns: tf.tensor1d(micro.returns),
              weights: tf.tensor1d(micro.weights),
              tokenWeights: tf.tensor1d(micro.tokenWeights),
            },
            { valueClip: o.valueClip },
          );
          total = tf.add(total, tf.mul(value.loss, critic.usesPolicyHidden ? o.valueCoef : 1)) as tf.Scalar;
        }
        const stats = [terms.total, terms.policy, terms.klRef, terms.entropy, terms.clipFrac, terms.dualClipFrac, terms.approxKl, value.loss, value.clipFrac, terms.isWeight, terms.truncFrac];
        held.stats = tf.keep(tf.stack(stats) as tf.Tensor1D);
        return total;
      }, vars);
      return vars.map((v) => named[v.name] ?? tf.zerosLike(v));
    });
    const stats = held.stats as tf.Tensor1D;
    if (acc === null) acc = grads;
    else {
      // One variable at a time, each addend freed at once: two copies of the gradients at most
      // (the sum so far and this micro-batch's), not three (memory-estimate.ts counts two).
      for (let i = 0; i < acc.length; i++) {
        const sum = tf.add(acc[i] as tf.Tensor, grads[i] as tf.Tensor);
        tf.dispose([acc[i] as tf.Tensor, grads[i] as tf.Tensor]);
        acc[i] = sum;
      }
    }
    const nextStats: tf.Tensor1D = statsAcc === null ? stats : tf.add(statsAcc, stats);
    if (statsAcc !== null) tf.dispose([statsAcc, stats]);
    statsAcc = nextStats;
  }
  const finalStats = statsAcc as tf.Tensor1D | null;
  const stats = finalStats === null ? [] : Array.from(finalStats.dataSync());
  finalStats?.dispose();
  const all = acc ?? [];
  return { actorGrads: all.slice(0, actorVars.length), criticGrads: all.slice(actorVars.length), stats };
}
