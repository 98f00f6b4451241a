import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LossAggregation } from '../../src/algorithms/aggregation.js';
import { Rng } from '../../src/core/rng.js';
import type { Trajectory, Turn } from '../../src/core/types.js';
import { selectBackend } from '../../src/backend/select.js';
import type { tf } from '../../src/backend/tf.js';
import { Critic } from '../../src/learner/critic.js';
import { GradientPool, type ReplicaSpec } from '../../src/learner/data-parallel/gradient-pool.js';
import { PolicyTrainer, type TrainStepOptions } from '../../src/learner/trainer.js';
import { TransformerModel, type TransformerConfig } from '../../src/models/transformer/model.js';

// Data-parallel learner (issue #10): 2 real gradient worker threads (piscina, each with its own
// wasm backend) against the single-process trainer on the same batch and seed. The workers take
// whole micro-batches and the gradients are added in micro-batch order, so every figure must be
// bit-identical, not merely close.

const SHAPE: TransformerConfig = { vocabSize: 24, dModel: 16, nLayers: 1, nHeads: 2, ffnHidden: 24, maxContext: 48, ropeTheta: 10000, rmsNormEps: 1e-5, tieEmbeddings: false };
const CRITIC_SHAPE: TransformerConfig = { ...SHAPE, dModel: 8, nHeads: 2, ffnHidden: 12 };

beforeAll(async () => {
  await selectBackend('wasm');
});

/** `groups` GRPO groups of 4 trajectories, 1–3 turns, prompts of 3–12 tokens, actions of 1–3 tokens (the last of 3 forced). */
function makeBatch(seed: number, groups = 3): Trajectory[] {
  const rng = Rng.fromSeed(seed);
  const out: Trajectory[] = [];
  for (let g = 0; g < groups; g++) {
    for (let k = 0; k < 4; k++) {
      const turns: Turn[] = [];
      const count = 1 + rng.int(3);
      for (let t = 0; t < count; t++) {
        const action = Int32Array.from({ length: 1 + rng.int(3) }, () => 1 + rng.int(SHAPE.vocabSize - 1));
        turns.push({
          index: t,
          observationText: '',
          promptTokens: Int32Array.from({ length: 3 + rng.int(10) }, () => 1 + rng.int(SHAPE.vocabSize - 1)),
          actionText: '',
          actionTokens: action,
          actionLogprobs: Float32Array.from(action, () => -Math.log(SHAPE.vocabSize) + 0.3 * rng.normal()),
          actionLossMask: Uint8Array.from(action, (_, j) => (j === 2 ? 0 : 1)),
          constraint: null,
          policyVersion: 0,
          reward: 0,
          invalidAction: false,
        });
      }
      const reward = rng.next() < 0.5 ? 1 : 0;
      out.push({ trajectoryId: `g${g}k${k}`, taskId: `t_${g}`, groupId: `t${g}`, step: 0, turns, reward, outcome: reward > 0 ? 'success' : 'failure', horizon: 3, finalObservationText: '' });
    }
  }
  return out;
}

function weightsOf(variables: tf.Variable[]): Float32Array[] {
  return variables.map((v) => (v.dataSync() as Float32Array).slice());
}

/** Largest |a - b| over all arrays, and the largest |a| (for a relative reading). */
function compare(a: Float32Array[], b: Float32Array[]): { diff: number; scale: number } {
  expect(a.map((x) => x.length)).toEqual(b.map((x) => x.length));
  let diff = 0;
  let scale = 0;
  a.forEach((x, i) => {
    for (let j = 0; j < x.length; j++) {
      diff = Math.max(diff, Math.abs(x[j] - b[i][j]));
      scale = Math.max(scale, Math.abs(x[j]));
    }
  });
  return { diff, scale };
}

type CriticKind = 'none' | 'shared' | 'separate';

function buildCritic(kind: CriticKind): { critic: Critic | null; spec: ReplicaSpec['critic'] } {
  if (kind === 'none') return { critic: null, spec: null };
  if (kind === 'shared') return { critic: new Critic({ trunk: 'shared', dModel: SHAPE.dModel }), spec: { trunk: 'shared', dModel: SHAPE.dModel } };
  const model = new TransformerModel(CRITIC_SHAPE, Rng.fromSeed(77));
  return { critic: new Critic({ trunk: 'separate', model, dModel: CRITIC_SHAPE.dModel }), spec: { trunk: 'separate', dModel: CRITIC_SHAPE.dModel, model: CRITIC_SHAPE } };
}

/** A single-process trainer and a data-parallel one (2 workers) over identical models. */
function twins(kind: CriticKind): { single: PolicyTrainer; parallel: PolicyTrainer; pool: GradientPool; models: { single: TransformerModel; parallel: TransformerModel; criticSingle: Critic | null; criticParallel: Critic | null }; dispose(): Promise<void> } {
  const a = new TransformerModel(SHAPE, Rng.fromSeed(3));
  const b = new TransformerModel(SHAPE, Rng.fromSeed(3));
  const ca = buildCritic(kind);
  const cb = buildCritic(kind);
  const pool = new GradientPool({ workers: 2, spec: { policy: SHAPE, critic: cb.spec }, policy: b, critic: cb.critic });
  const single = new PolicyTrainer({ policy: a, critic: ca.critic, lr: 1e-2 });
  const parallel = new PolicyTrainer({ policy: b, critic: cb.critic, lr: 1e-2, gradientPool: pool });
  return {
    single,
    parallel,
    pool,
    models: { single: a, parallel: b, criticSingle: ca.critic, criticParallel: cb.critic },
    async dispose() {
      await pool.close();
      single.dispose();
      parallel.dispose();
      for (const x of [a, b, ca.critic, cb.critic]) x?.dispose();
    },
  };
}

describe('data-parallel learner (2 gradient workers)', () => {
  let grpo: ReturnType<typeof twins>;
  beforeAll(() => {
    grpo = twins('none');
  });
  afterAll(async () => {
    await grpo.dispose();
  });

  it.each(['token-mean', 'seq-mean-token-sum', 'seq-mean-token-mean'] as const)('gives the single-process gradient under %s', async (mode: LossAggregation) => {
    const batch = makeBatch(11);
    // Small micro-batches, so the mini-batch has several and both workers take some.
    const options: Partial<TrainStepOptions> = { lossAggregation: mode, maxTokensPerBatch: 40, entropyCoef: 0.01 };
    const one = await grpo.single.computeGradients(batch, options);
    const before = grpo.pool.tasksCompleted;
    const two = await grpo.parallel.computeGradients(batch, options);
    // One task per micro-batch, more than the ring has slots (2 per worker): slots are reused within the round.
    expect(grpo.pool.tasksCompleted - before).toBeGreaterThan(4);
    expect(two.tokenCount).toBe(one.tokenCount);
    const { diff, scale } = compare(one.gradients, two.gradients);
    expect(scale).toBeGreaterThan(1e-3); // a real gradient, not zeros on both sides
    expect(diff).toBe(0);
    expect(two.gradients).toEqual(one.gradients);
    expect(two.norm).toBe(one.norm);
  });

  it.each(['token-mean', 'seq-mean-token-sum', 'seq-mean-token-mean'] as const)('takes the same optimizer steps under %s (two mini-batches, two epochs) and reports the same losses', async (mode: LossAggregation) => {
    const options: Partial<TrainStepOptions> = { lossAggregation: mode, maxTokensPerBatch: 60, miniBatches: 2, epochs: 2 };
    for (const seed of [21, 22]) {
      const batch = makeBatch(seed);
      const m1 = await grpo.single.trainStep(batch, options);
      const m2 = await grpo.parallel.trainStep(batch, options);
      // Every metric but the wall-clock throughput, to the last bit.
      const { 'throughput/trainTokensPerSec': _t1, ...rest1 } = m1;
      const { 'throughput/trainTokensPerSec': _t2, ...rest2 } = m2;
      expect(rest2).toEqual(rest1);
    }
    const { diff, scale } = compare(weightsOf(grpo.models.single.trainableVariables()), weightsOf(grpo.models.parallel.trainableVariables()));
    expect(scale).toBeGreaterThan(0.01);
    expect(diff).toBe(0);
    expect(grpo.parallel.version).toBe(grpo.single.version);
  });

  it.each(['shared', 'separate'] as const)('trains PPO with a %s-trunk critic like the single process', async (kind) => {
    const t = twins(kind);
    try {
      const gae = { name: 'gae', gamma: 1, lambda: 0.95, level: 'token', whiten: true } as const;
      const options: Partial<TrainStepOptions> = { estimator: gae, maxTokensPerBatch: 50, miniBatches: 2 };
      for (const seed of [31, 32]) {
        const m1 = await t.single.trainStep(makeBatch(seed), options);
        const m2 = await t.parallel.trainStep(makeBatch(seed), options);
        expect(m2['loss/value']).toBe(m1['loss/value']);
        expect(m2['optim/criticGradNorm']).toBe(m1['optim/criticGradNorm']);
      }
      const policy = compare(weightsOf(t.models.single.trainableVariables()), weightsOf(t.models.parallel.trainableVariables()));
      expect(policy.scale).toBeGreaterThan(0.01);
      expect(policy.diff).toBe(0);
      const critic = compare(weightsOf(t.models.criticSingle?.trainableVariables() ?? []), weightsOf(t.models.criticParallel?.trainableVariables() ?? []));
      expect(critic.scale).toBeGreaterThan(1e-3); // the zero-initialised head has moved
      expect(critic.diff).toBe(0);
    } finally {
      await t.dispose();
    }
  });

  it('stops every worker thread on close', async () => {
    const model = new TransformerModel(SHAPE, Rng.fromSeed(5));
    const pool = new GradientPool({ workers: 2, spec: { policy: SHAPE, critic: null }, policy: model, critic: null });
    const trainer = new PolicyTrainer({ policy: model, lr: 1e-2, gradientPool: pool });
    await trainer.trainStep(makeBatch(41), { maxTokensPerBatch: 60 }); // the workers have started and worked
    const threads = [...pool.threads];
    expect(threads).toHaveLength(2);
    const exited = threads.map((w) => new Promise<number>((resolve) => w.once('exit', resolve)));
    await pool.close();
    await Promise.all(exited);
    expect(pool.threads).toHaveLength(0);
    await expect(trainer.trainStep(makeBatch(41))).rejects.toThrow(/after close/);
    trainer.dispose();
    model.dispose();
  });
});
