/**
 * The learner's data preparation for one step, before any weight changes: the per-token layout,
 * the pre-update forward passes (reference log-probs for the KL, critic values for GAE and value
 * clipping), the KL penalty in the reward, the advantages, and finally the packed micro-batches of
 * each mini-batch with every per-target signal (advantages, returns, old values, reference
 * log-probs, aggregation weights) gathered from the layout by (trajectory, tokenIndex).
 */
import type { AdvantageOutput, EstimatorState } from '../algorithms/advantage-input.js';
import { computeAdvantages } from '../algorithms/advantages.js';
import { aggregationWeights } from '../algorithms/aggregation.js';
import { klPenalizedRewards } from '../algorithms/kl.js';
import type { Trajectory } from '../core/types.js';
import { tf } from '../backend/tf.js';
import type { Critic } from './critic.js';
import { packTrajectories } from './pack.js';
import { type TokenLayout, tokenLayout } from './token-layout.js';
import type { TargetSignal } from '../models/train-batch.js';
import { packOptionsOf, type TrainStepOptions } from './train-options.js';
import type { MicroBatch, TrainableModel } from './train-contract.js';

/** What a step trains on, plus the per-token arrays its metrics are computed from. */
export interface PreparedStep {
  readonly layout: TokenLayout;
  readonly output: AdvantageOutput;
  readonly oldValues: Float32Array | null;
  /** Token-mean KL subtracted from the reward (0 unless the KL sits in the reward). */
  readonly klReward: number;
  /** Mini-batches (each a list of micro-batches) with at least one trained token. */
  readonly chunks: MicroBatch[][];
}

/** The models a step reads before updating. */
export interface StepModels {
  readonly policy: TrainableModel;
  readonly reference: TrainableModel | null;
  readonly critic: Critic | null;
}

/** Writes `data[k]` at (trajectory, tokenIndex) of each target into a [B·T] array. */
function scatter(into: Float32Array, seqLen: number, signal: TargetSignal, data: Float32Array | Int32Array | Uint8Array): void {
  for (let k = 0; k < signal.tokenIndex.length; k++) into[signal.trajectoryIndex[k] * seqLen + signal.tokenIndex[k]] = data[k];
}

async function readAndDispose(t: tf.Tensor): Promise<Float32Array> {
  const data = ((await t.data()) as Float32Array).slice();
  t.dispose();
  return data;
}

/**
 * Runs `forward` (a pre-update pass: reference log-probs, critic values) over the trajectories
 * `indices` in micro-batches and writes its per-target outputs into `into` at (trajectory, token).
 */
async function forwardInto(
  into: Float32Array,
  trajectories: readonly Trajectory[],
  indices: readonly number[],
  seqLen: number,
  o: TrainStepOptions,
  forward: (batch: MicroBatch['batch']) => tf.Tensor,
): Promise<void> {
  const subset = indices.map((i) => trajectories[i] as Trajectory);
  for (const { batch, signal } of packTrajectories(subset, new Float32Array(subset.length), packOptionsOf(o))) {
    const values = await readAndDispose(tf.tidy(() => forward(batch)));
    const mapped: TargetSignal = { ...signal, trajectoryIndex: Int32Array.from(signal.trajectoryIndex, (k) => indices[k] as number) };
    scatter(into, seqLen, mapped, values);
  }
}

/**
 * Prepares one step. `klCoef` is the coefficient in force (fixed, or the adaptive controller's).
 * The packing never depends on the gradient workers (`train.dataParallel`): they take whole
 * micro-batches, so a run's numbers are the same with any number of them.
 * Shape: trajectories [B] → mini-batches of micro-batches with per-target arrays [N].
 * @example const { chunks, output } = await prepareStep(models, trajectories, options, 0, undefined);
 */
export async function prepareStep(
  models: StepModels,
  trajectories: readonly Trajectory[],
  o: TrainStepOptions,
  klCoef: number,
  state: EstimatorState | undefined,
): Promise<PreparedStep> {
  const layout = tokenLayout(trajectories, o.rewardMode ?? 'outcome');
  const { rows, seqLen: T } = layout;
  const { policy, reference, critic } = models;
  const refLogprobs = klCoef > 0 && reference !== null ? new Float32Array(rows * T) : null;
  const oldValues = critic !== null ? new Float32Array(rows * T) : null;
  // With the KL in the loss, advantages do not depend on the reference, so the groups are dropped
  // first and the reference scores only what trains (a step whose groups all drop costs nothing).
  const klInReward = o.klPlacement === 'reward';
  const all = trajectories.map((_, i) => i);
  if (oldValues !== null && critic !== null) {
    await forwardInto(oldValues, trajectories, all, T, o, (batch) => {
      const hidden = critic.usesPolicyHidden ? (policy.forwardTrainWithHidden?.(batch, o.temperature).hidden ?? null) : null;
      return critic.values(batch, hidden);
    });
  }
  if (refLogprobs !== null && reference !== null && klInReward) {
    await forwardInto(refLogprobs, trajectories, all, T, o, (batch) => reference.forwardTrain(batch, o.temperature).logprobs);
  }
  let rewards = layout.rewards;
  let klReward = 0;
  if (klInReward && refLogprobs !== null) {
    const penalized = klPenalizedRewards({ rewards, logprobs: layout.oldLogprobs, refLogprobs, mask: layout.mask, coef: klCoef, estimator: o.klEstimator });
    rewards = penalized.rewards;
    klReward = penalized.meanKl;
  }
  const output = computeAdvantages({
    rewards,
    mask: layout.mask,
    seqLen: T,
    groupIds: layout.groupIds,
    turnIds: layout.turnIds,
    ...(oldValues !== null ? { values: oldValues } : {}),
    ...(state !== undefined ? { state } : {}),
    options: o.estimator,
  });

  let kept = all;
  if (o.dropZeroAdvantage && critic === null) {
    kept = kept.filter((b) => {
      for (let t = 0; t < T; t++) if (layout.mask[b * T + t] === 1 && output.advantages[b * T + t] !== 0) return true;
      return false;
    });
  }
  if (refLogprobs !== null && reference !== null && !klInReward && kept.length > 0) {
    await forwardInto(refLogprobs, trajectories, kept, T, o, (batch) => reference.forwardTrain(batch, o.temperature).logprobs);
  }
  const lossRef = o.klPlacement === 'loss' ? refLogprobs : null;
  const chunks: MicroBatch[][] = [];
  for (let c = 0; c < o.miniBatches; c++) {
    const ids = kept.slice(Math.floor((c * kept.length) / o.miniBatches), Math.floor(((c + 1) * kept.length) / o.miniBatches));
    const packed = packTrajectories(ids.map((i) => trajectories[i]), new Float32Array(ids.length), packOptionsOf(o));
    // Aggregation weights over the whole mini-batch, so micro-batch sums add up to its aggregate.
    const allMask = Float32Array.from(packed.flatMap((p) => Array.from(p.signal.lossMask)));
    const allIds = Int32Array.from(packed.flatMap((p) => Array.from(p.signal.trajectoryIndex)));
    const tokenCount = allMask.reduce((a, m) => a + m, 0);
    if (tokenCount === 0) continue;
    const weights = aggregationWeights(allMask, allIds, o.lossAggregation);
    let offset = 0;
    chunks.push(
      packed.map(({ batch, signal }) => {
        const n = signal.lossMask.length;
        const slot = (k: number): number => ids[signal.trajectoryIndex[k]] * T + signal.tokenIndex[k];
        const gather = (from: Float32Array): Float32Array => Float32Array.from({ length: n }, (_, k) => from[slot(k)]);
        const micro: MicroBatch = {
          batch,
          lossMask: signal.lossMask,
          oldLogprobs: signal.oldLogprobs,
          advantages: gather(output.advantages),
          returns: gather(output.returns),
          oldValues: oldValues === null ? null : gather(oldValues),
          refLogprobs: lossRef === null ? null : gather(lossRef),
          weights: weights.slice(offset, offset + n),
          tokenWeights: Float32Array.from(signal.lossMask, (m) => m / tokenCount),
          tokenCount,
          tokens: batch.attentionMask.reduce((a, m) => a + m, 0),
        };
        offset += n;
        return micro;
      }),
    );
  }
  return { layout, output, oldValues, klReward, chunks };
}
