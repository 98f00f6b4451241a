import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.js';
import type { Trajectory, Turn } from '../../src/core/types.js';
import { tf } from '../../src/backend/tf.js';
import { Critic, type HiddenModel } from '../../src/learner/critic.js';
import { learningRateAt } from '../../src/learner/lr-schedule.js';
import { AdamW } from '../../src/learner/optimizer.js';
import { packTrajectories } from '../../src/learner/pack.js';
import { tokenLayout } from '../../src/learner/token-layout.js';
import type { TrainBatch } from '../../src/models/train-batch.js';
import { CRITIC_STEP_METRICS, type NamedWeights, PolicyTrainer, TRAIN_STEP_METRICS, type TrainableModel } from '../../src/learner/trainer.js';

beforeAll(async () => {
  await tf.setBackend('cpu');
});

const V = 6;

/** Bigram policy whose "hidden state" at a target is the one-hot of the previous token ([N, V]). */
class Bigram implements TrainableModel, HiddenModel {
  readonly w: tf.Variable;
  constructor(seed: number) {
    const rng = Rng.fromSeed(seed);
    this.w = tf.variable(tf.tensor2d(Float32Array.from({ length: V * V }, () => 0.5 * rng.normal()), [V, V]));
  }
  forwardHidden(batch: TrainBatch): tf.Tensor2D {
    const prev = Int32Array.from(batch.targetPositions, (p) => batch.inputIds[p]);
    return tf.tidy(() => tf.cast(tf.oneHot(tf.tensor1d(prev, 'int32'), V), 'float32') as tf.Tensor2D);
  }
  forwardTrainWithHidden(batch: TrainBatch, temperature: number) {
    return tf.tidy(() => {
      const hidden = this.forwardHidden(batch);
      const logp = tf.logSoftmax(tf.div(tf.matMul(hidden, this.w), temperature));
      const logprobs = tf.sum(tf.mul(logp, tf.oneHot(tf.tensor1d(batch.targetIds, 'int32'), V)), 1) as tf.Tensor1D;
      const entropy = tf.neg(tf.sum(tf.mul(tf.exp(logp), logp), 1)) as tf.Tensor1D;
      return { logprobs, entropy, hidden };
    });
  }
  forwardTrain(batch: TrainBatch, temperature: number) {
    return tf.tidy(() => {
      const { logprobs, entropy } = this.forwardTrainWithHidden(batch, temperature);
      return { logprobs, entropy };
    });
  }
  trainableVariables(): tf.Variable[] {
    return [this.w];
  }
  namedWeights(): NamedWeights {
    return new Map([['w', { shape: [V, V], data: (this.w.dataSync() as Float32Array).slice() }]]);
  }
  loadNamedWeights(weights: NamedWeights): void {
    const w = weights.get('w');
    if (w === undefined) throw new Error('missing w');
    tf.tidy(() => this.w.assign(tf.tensor2d(w.data, [V, V])));
  }
  prob(prev: number, next: number): number {
    return tf.tidy(() => tf.softmax(tf.gather(this.w, [prev])).dataSync()[next]);
  }
  dispose(): void {
    this.w.dispose();
  }
}

const owned: { dispose(): void }[] = [];
function own<T extends { dispose(): void }>(x: T): T {
  owned.push(x);
  return x;
}
afterEach(() => {
  for (const x of owned.splice(0)) x.dispose();
});

/**
 * Multi-turn batch: `groups` groups of 4 trajectories with 1–3 turns of 1–2 action tokens; the
 * reward is 1 when the first action after context token 1 is 2. The last token of every
 * 2-token action is forced (loss mask 0), so the terminal reward must land on the token before it.
 */
function makeBatch(model: Bigram, seed: number, groups = 2): Trajectory[] {
  const rng = Rng.fromSeed(seed);
  const out: Trajectory[] = [];
  for (let g = 0; g < groups; g++) {
    for (let k = 0; k < 4; k++) {
      const turns: Turn[] = [];
      let reward = 0;
      const count = 1 + rng.int(3);
      for (let t = 0; t < count; t++) {
        const action = Array.from({ length: 1 + rng.int(2) }, () => rng.int(V));
        if (t === 0) action[0] = k < 2 ? 2 : 3;
        if (t === 0) reward = action[0] === 2 ? 1 : 0;
        turns.push({
          index: t,
          observationText: '',
          promptTokens: Int32Array.of(1 + rng.int(V - 1), 1),
          actionText: '',
          actionTokens: Int32Array.from(action),
          actionLogprobs: Float32Array.from(action, (a, j) => Math.log(model.prob(j === 0 ? 1 : action[j - 1], a))),
          actionLossMask: Uint8Array.from(action, (_, j) => (j === 1 ? 0 : 1)),
          constraint: null,
          policyVersion: 0,
          reward: 0,
          invalidAction: false,
        });
      }
      out.push({ trajectoryId: `g${g}k${k}`, taskId: `babyai_${g}`, groupId: `t${g}`, step: 0, turns, reward, outcome: reward > 0 ? 'success' : 'failure', horizon: 3, finalObservationText: '' });
    }
  }
  return out;
}

const gae = { name: 'gae', gamma: 1, lambda: 0.95, level: 'token', whiten: true } as const;

describe('tokenLayout', () => {
  it('puts the terminal reward on the last trained action token and numbers tokens like pack does', () => {
    const model = own(new Bigram(1));
    const batch = makeBatch(model, 3);
    const layout = tokenLayout(batch);
    batch.forEach((trajectory, b) => {
      const slots = Array.from({ length: layout.seqLen }, (_, t) => b * layout.seqLen + t);
      const trained = slots.filter((i) => layout.mask[i] === 1);
      expect(layout.rewards[trained.at(-1) as number]).toBe(trajectory.reward);
      expect(slots.filter((i) => layout.rewards[i] !== 0).length).toBe(trajectory.reward === 0 ? 0 : 1);
    });
    for (const { signal } of packTrajectories(batch, new Float32Array(batch.length), { maxTokensPerBatch: 64 })) {
      for (let k = 0; k < signal.tokenIndex.length; k++) {
        const slot = signal.trajectoryIndex[k] * layout.seqLen + signal.tokenIndex[k];
        expect(layout.mask[slot]).toBe(signal.lossMask[k]);
        expect(layout.oldLogprobs[slot]).toBe(signal.oldLogprobs[k]);
      }
    }
  });
});

describe('schedules and AdamW', () => {
  it('warms up linearly, then stays constant or decays along a cosine to the floor', () => {
    const s = { lr: 1, warmupSteps: 4, totalSteps: 14, minLrRatio: 0.1 };
    expect([0, 1, 3].map((i) => learningRateAt(i, { ...s, kind: 'constant' }))).toEqual([0.25, 0.5, 1]);
    expect(learningRateAt(50, { ...s, kind: 'constant' })).toBe(1);
    expect(learningRateAt(4, { ...s, kind: 'cosine' })).toBeCloseTo(1, 10);
    expect(learningRateAt(9, { ...s, kind: 'cosine' })).toBeCloseTo(0.1 + 0.9 * 0.5, 10); // half-way
    expect(learningRateAt(14, { ...s, kind: 'cosine' })).toBeCloseTo(0.1, 10);
  });

  it('AdamW decays weights by lr·λ per update, independently of the gradient', () => {
    const v = own(tf.variable(tf.tensor1d([2, -4])));
    const opt = own(new AdamW({ lr: 0.1, weightDecay: 0.5 }));
    const zero = tf.zeros([2]);
    opt.apply([v], [zero]); // zero gradient: Adam's step is 0, only the decay acts
    expect(Array.from(v.dataSync())).toEqual([Math.fround(2 * 0.95), Math.fround(-4 * 0.95)]);
    opt.setLearningRate(0.2);
    expect(opt.learningRate).toBe(0.2);
    zero.dispose();
  });
});

describe('PolicyTrainer with a critic', () => {
  it('trains PPO with a shared-trunk value head: reports critic metrics, values move to the returns', async () => {
    const model = own(new Bigram(2));
    const critic = own(new Critic({ trunk: 'shared', dModel: V }));
    const trainer = own(new PolicyTrainer({ policy: model, critic, lr: 0.05, criticLr: 0.1 }));
    const batch = makeBatch(model, 4, 3);
    const before = Array.from(model.w.dataSync());
    const first = await trainer.trainStep(batch, { estimator: gae });
    expect(Object.keys(first).sort()).toEqual([...TRAIN_STEP_METRICS, ...CRITIC_STEP_METRICS].sort());
    expect(first['critic/explainedVariance']).toBeCloseTo(0, 6); // V ≡ 0 before the first update
    let last = first;
    for (let i = 0; i < 15; i++) last = await trainer.trainStep(batch, { estimator: gae });
    // The toy state (previous token) cannot tell winners from losers before they act, so the critic
    // can only learn the mean return: the value loss falls and the mean value approaches it.
    const gap = (m: typeof first): number => Math.abs((m['critic/valueMean'] ?? Number.NaN) - m['return/mean']);
    expect(last['loss/value']).toBeLessThan(first['loss/value'] ?? Number.NaN);
    expect(gap(last)).toBeLessThan(gap(first) / 2);
    expect(Array.from(model.w.dataSync())).not.toEqual(before);
  });

  it('critic warm-up trains the critic only; afterwards the actor learns too', async () => {
    const model = own(new Bigram(3));
    const critic = own(new Critic({ trunk: 'separate', model: new Bigram(30), dModel: V }));
    const trainer = own(new PolicyTrainer({ policy: model, critic, lr: 0.05 }));
    const batch = makeBatch(model, 5);
    const weights = Array.from(model.w.dataSync());
    const options = { estimator: gae, criticWarmupSteps: 2 };
    const m = await trainer.trainStep(batch, options);
    await trainer.trainStep(batch, options);
    expect(Array.from(model.w.dataSync())).toEqual(weights);
    expect(m['optim/criticGradNorm']).toBeGreaterThan(0);
    expect(m['optim/gradNorm']).toBe(0);
    await trainer.trainStep(batch, options);
    expect(Array.from(model.w.dataSync())).not.toEqual(weights);
  });

  it('gives the same actor gradient for small and large micro-batches under seq-mean-token-mean with a critic', async () => {
    const model = own(new Bigram(4));
    const trainer = own(new PolicyTrainer({ policy: model, critic: own(new Critic({ trunk: 'shared', dModel: V })), lr: 0.05 }));
    const batch = makeBatch(model, 6, 3);
    const options = { estimator: gae, lossAggregation: 'seq-mean-token-mean', entropyCoef: 0.01 } as const;
    const small = await trainer.computeGradients(batch, { ...options, maxTokensPerBatch: 6 });
    const large = await trainer.computeGradients(batch, { ...options, maxTokensPerBatch: 10_000 });
    expect(small.norm).toBeGreaterThan(0);
    expect(Math.abs(small.norm - large.norm)).toBeLessThan(1e-5);
  });

  it('resumes exactly with critic weights, both Adam states, the running baseline and an adaptive KL', async () => {
    const run = async (policy: Bigram, critic: Critic, reference: Bigram) =>
      own(new PolicyTrainer({ policy, critic, reference, lr: 0.05, weightDecay: 0.01, klTarget: 0.01, klHorizon: 50, schedule: { warmupSteps: 1, kind: 'cosine', totalSteps: 4, minLrRatio: 0 } }));
    const options = { estimator: gae, klCoef: 0.05, klPlacement: 'reward', epochs: 2, miniBatches: 2 } as const;
    const a = own(new Bigram(5));
    const ta = await run(a, own(new Critic({ trunk: 'shared', dModel: V })), own(new Bigram(6)));
    const batches = [makeBatch(a, 7), makeBatch(a, 8), makeBatch(a, 9)];
    await ta.trainStep(batches[0], options);
    await ta.trainStep(batches[1], options);
    const saved = await ta.getState();
    const weights = a.namedWeights();
    const m = await ta.trainStep(batches[2], options);
    expect(m['kl/reward']).toBeGreaterThan(0);
    expect(m['kl/coef']).not.toBe(0.05); // adapted

    const b = own(new Bigram(5));
    const tb = await run(b, own(new Critic({ trunk: 'shared', dModel: V })), own(new Bigram(6)));
    b.loadNamedWeights(weights);
    await tb.setState(saved);
    const mb = await tb.trainStep(batches[2], options);
    expect(Array.from(b.w.dataSync())).toEqual(Array.from(a.w.dataSync()));
    expect(mb['loss/value']).toBe(m['loss/value']);
    expect(mb['kl/coef']).toBe(m['kl/coef']);
    expect(await tb.getState()).toEqual(await ta.getState());
    expect(saved.optimizer.map((x) => x.name)).toContain('critic/adam/iterations');
    expect(saved.optimizer.map((x) => x.name)).toContain('kl/coef');
  });

  it('keeps the REINFORCE running baseline across steps and in its state', async () => {
    const model = own(new Bigram(8));
    const trainer = own(new PolicyTrainer({ policy: model, lr: 0.05 }));
    const options = { estimator: { name: 'reinforce', gamma: 1, baselineMomentum: 0.5 } } as const;
    await trainer.trainStep(makeBatch(model, 10), options);
    const state = await trainer.getState();
    expect(state.optimizer.find((x) => x.name === 'estimator/batches')?.data[0]).toBe(1);
    expect(state.optimizer.find((x) => x.name === 'estimator/runningBaseline')?.data[0]).toBeGreaterThan(0);
  });

  it('rejects GAE without a critic', async () => {
    const model = own(new Bigram(9));
    const trainer = own(new PolicyTrainer({ policy: model, lr: 0.05 }));
    await expect(trainer.trainStep(makeBatch(model, 11), { estimator: gae })).rejects.toThrow(/'critic'.*needs critic values/);
  });
});
