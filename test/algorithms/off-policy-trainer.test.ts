/**
 * The off-policy corrections wired into PolicyTrainer: decoupled PPO recomputes the proximal
 * log-probs with the learner's weights before the update, so its importance weight is
 * min(π_prox/μ, C) of the recorded behaviour log-probs μ.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.js';
import type { Trajectory, Turn } from '../../src/core/types.js';
import { tf } from '../../src/backend/tf.js';
import type { TrainBatch } from '../../src/models/train-batch.js';
import { type NamedWeights, PolicyTrainer, type TrainableModel } from '../../src/learner/trainer.js';

beforeAll(async () => {
  await tf.setBackend('cpu');
});

const V = 5;

/** A bigram policy: logits of target n are row W[previous token]. */
class Bigram implements TrainableModel {
  readonly w: tf.Variable;
  constructor(seed: number) {
    const rng = Rng.fromSeed(seed);
    this.w = tf.variable(tf.tensor2d(Float32Array.from({ length: V * V }, () => rng.normal()), [V, V]));
  }
  forwardTrain(batch: TrainBatch): { logprobs: tf.Tensor1D; entropy: tf.Tensor1D } {
    return tf.tidy(() => {
      const prev = Int32Array.from(batch.targetPositions, (p) => batch.inputIds[p] as number);
      const logp = tf.logSoftmax(tf.gather(this.w, tf.tensor1d(prev, 'int32')));
      const logprobs = tf.sum(tf.mul(logp, tf.oneHot(tf.tensor1d(batch.targetIds, 'int32'), V)), 1) as tf.Tensor1D;
      const entropy = tf.neg(tf.sum(tf.mul(tf.exp(logp), logp), 1)) as tf.Tensor1D;
      return { logprobs, entropy };
    });
  }
  trainableVariables(): tf.Variable[] {
    return [this.w];
  }
  namedWeights(): NamedWeights {
    return new Map([['w', { shape: [V, V], data: (this.w.dataSync() as Float32Array).slice() }]]);
  }
  loadNamedWeights(): void {}
  logprob(prev: number, next: number): number {
    return tf.tidy(() => tf.logSoftmax(tf.gather(this.w, [prev])).dataSync()[next] as number);
  }
}

const disposables: { dispose(): void }[] = [];
afterEach(() => {
  for (const d of disposables.splice(0)) d.dispose();
});

/** Two one-turn episodes of one group (rewards 1 and 0), behaviour log-probs = the model's own + `shift`. */
function group(model: Bigram, shift: number): Trajectory[] {
  const episode = (id: string, prompt: number[], action: number[], reward: number): Trajectory => {
    const tokens = [...prompt, ...action];
    const turn: Turn = {
      index: 0,
      observationText: '',
      promptTokens: Int32Array.from(prompt),
      actionText: '',
      actionTokens: Int32Array.from(action),
      actionLogprobs: Float32Array.from(action, (a, j) => model.logprob(tokens[prompt.length + j - 1] as number, a) + shift),
      actionLossMask: Uint8Array.from(action, () => 1),
      constraint: null,
      policyVersion: 0,
      reward,
      invalidAction: false,
    };
    return { trajectoryId: id, taskId: 't_0', groupId: 'g', step: 0, turns: [turn], reward, outcome: reward > 0 ? 'success' : 'failure', horizon: 1, finalObservationText: '' };
  };
  return [episode('a', [1, 2], [3, 4], 1), episode('b', [2, 1], [0, 3], 0)];
}

describe('PolicyTrainer with off-policy corrections', () => {
  it('decoupled PPO weighs tokens by min(π_prox/μ, C) with π_prox recomputed from the current weights', async () => {
    const model = new Bigram(4);
    const trainer = new PolicyTrainer({ policy: model, lr: 0.01 });
    disposables.push(trainer, { dispose: () => model.w.dispose() });
    const onPolicy = await trainer.trainStep(group(model, 0), { offPolicy: { kind: 'decoupled', cap: 2 } });
    expect(onPolicy['offpolicy/isWeight']).toBeCloseTo(1, 4);
    expect(onPolicy['offpolicy/truncFrac']).toBe(0);
    // Behaviour 4x less likely than the proximal policy: raw weight 4, capped at 2 on every token.
    const stale = await trainer.trainStep(group(model, -Math.log(4)), { offPolicy: { kind: 'decoupled', cap: 2 } });
    expect(stale['offpolicy/isWeight']).toBeCloseTo(2, 4);
    expect(stale['offpolicy/truncFrac']).toBe(1);
    // Behaviour 2x more likely: weight 0.5, nothing truncated.
    const half = await trainer.trainStep(group(model, Math.log(2)), { offPolicy: { kind: 'decoupled', cap: 2 } });
    expect(half['offpolicy/isWeight']).toBeCloseTo(0.5, 4);
    expect(half['offpolicy/truncFrac']).toBe(0);
  });

  it('TIS reports its weights, and plain PPO reports no off-policy metrics', async () => {
    const model = new Bigram(5);
    const trainer = new PolicyTrainer({ policy: model, lr: 0.01 });
    disposables.push(trainer, { dispose: () => model.w.dispose() });
    const tis = await trainer.trainStep(group(model, -Math.log(3)), { offPolicy: { kind: 'tis', cap: 2 } });
    expect(tis['offpolicy/isWeight']).toBeCloseTo(2, 4);
    expect(tis['offpolicy/truncFrac']).toBe(1);
    const plain = await trainer.trainStep(group(model, 0));
    expect(plain['offpolicy/isWeight']).toBeUndefined();
  });
});
