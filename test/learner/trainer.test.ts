import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/core/errors.js';
import { Rng } from '../../src/core/rng.js';
import type { Trajectory, Turn } from '../../src/core/types.js';
import { tf } from '../../src/backend/tf.js';
import { packTrajectories } from '../../src/learner/pack.js';
import type { TrainBatch } from '../../src/models/train-batch.js';
import { PolicyTrainer, type NamedWeights, TRAIN_STEP_METRICS, type TrainableModel } from '../../src/learner/trainer.js';
import { DEFAULT_TRAIN_STEP_OPTIONS } from '../../src/learner/train-options.js';
import { prepareStep } from '../../src/learner/train-signals.js';

beforeAll(async () => {
  await tf.setBackend('cpu');
});

const V = 6;

/**
 * Fake policy: a bigram table W [V, V] of logits. The distribution of target n is
 * softmax(W[inputIds[targetPositions[n]]] / T), masked to the target's allowed set.
 */
class Bigram implements TrainableModel {
  readonly w: tf.Variable;
  constructor(seed: number) {
    const rng = Rng.fromSeed(seed);
    this.w = tf.variable(tf.tensor2d(Float32Array.from({ length: V * V }, () => 0.5 * rng.normal()), [V, V]));
  }
  forwardTrain(batch: TrainBatch, temperature: number): { logprobs: tf.Tensor1D; entropy: tf.Tensor1D } {
    return tf.tidy(() => {
      const n = batch.targetIds.length;
      const prev = Int32Array.from(batch.targetPositions, (p) => batch.inputIds[p]);
      const mask = new Float32Array(n * V);
      if (batch.allowedOffsets !== null && batch.allowedIds !== null) {
        for (let k = 0; k < n; k++) {
          const [lo, hi] = [batch.allowedOffsets[k], batch.allowedOffsets[k + 1]];
          if (hi === lo) continue;
          mask.fill(-1e9, k * V, (k + 1) * V);
          for (let a = lo; a < hi; a++) mask[k * V + batch.allowedIds[a]] = 0;
        }
      }
      const logits = tf.add(tf.div(tf.gather(this.w, tf.tensor1d(prev, 'int32')), temperature), tf.tensor2d(mask, [n, V]));
      const logp = tf.logSoftmax(logits);
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

const models: Bigram[] = [];
const trainers: PolicyTrainer[] = [];
function bigram(seed: number): Bigram {
  const m = new Bigram(seed);
  models.push(m);
  return m;
}
function trainer(policy: Bigram, extra: Partial<ConstructorParameters<typeof PolicyTrainer>[0]> = {}): PolicyTrainer {
  const t = new PolicyTrainer({ policy, lr: 0.05, ...extra });
  trainers.push(t);
  return t;
}
afterEach(() => {
  for (const m of models.splice(0)) m.dispose();
  for (const t of trainers.splice(0)) t.dispose();
});

/**
 * A fixed GRPO batch: `groups` groups of 4 trajectories, 2 turns each. Every action is 1–2 tokens
 * sampled uniformly; the reward is 1 when the first action token after context token 1 is 2.
 * Behaviour logprobs are the model's own at construction (ratio 1 on the first pass).
 */
function makeBatch(model: Bigram, seed: number, groups = 2, version = 0): Trajectory[] {
  const rng = Rng.fromSeed(seed);
  const trajectories: Trajectory[] = [];
  for (let g = 0; g < groups; g++) {
    for (let k = 0; k < 4; k++) {
      const turns: Turn[] = [];
      let reward = 0;
      let history: number[] = [];
      for (let t = 0; t < 2; t++) {
        // Turn 1 of even groups keeps the history (chains), odd groups start afresh.
        const prompt = [...(g % 2 === 0 ? history : []), 1 + rng.int(V - 1), 1];
        const action = Array.from({ length: 1 + rng.int(2) }, () => rng.int(V));
        if (t === 0 && k < 2) action[0] = 2; // make each group mixed: two winners, two losers
        if (t === 0 && k >= 2 && action[0] === 2) action[0] = 3;
        if (t === 0) reward = action[0] === 2 ? 1 : 0;
        const logprobs = action.map((a, j) => Math.log(model.prob(j === 0 ? 1 : action[j - 1], a)));
        turns.push({
          index: t,
          observationText: '',
          promptTokens: Int32Array.from(prompt),
          actionText: '',
          actionTokens: Int32Array.from(action),
          actionLogprobs: Float32Array.from(logprobs),
          actionLossMask: Uint8Array.from(action, () => 1),
          constraint: null,
          policyVersion: version,
          reward: 0,
          invalidAction: false,
        });
        history = [...prompt, ...action];
      }
      trajectories.push({
        trajectoryId: `g${g}-k${k}`,
        taskId: `babyai_${g}`,
        groupId: `step0-task${g}`,
        step: 0,
        turns,
        reward,
        outcome: reward > 0 ? 'success' : 'failure',
        horizon: 2,
        finalObservationText: '',
      });
    }
  }
  return trajectories;
}

describe('PolicyTrainer', () => {
  it('raises the probability of positively-advantaged tokens and lowers the loss on a fixed batch', async () => {
    const model = bigram(1);
    const t = trainer(model);
    const batch = makeBatch(model, 7);
    const before = model.prob(1, 2);
    const first = await t.trainStep(batch);
    let last = first;
    for (let i = 0; i < 5; i++) last = await t.trainStep(batch);
    expect(model.prob(1, 2)).toBeGreaterThan(before + 0.05);
    expect(last['loss/policy']).toBeLessThan(first['loss/policy']);
    expect(first['loss/clipFrac']).toBe(0); // ratio 1 on the first pass
    expect(first['loss/approxKl']).toBeCloseTo(0, 6);
    expect(t.version).toBe(6);
    expect(last['policy/version']).toBe(6);
  });

  it('returns every metric it documents, with staleness and advantage stats', async () => {
    const model = bigram(2);
    const t = trainer(model, { initialVersion: 3 });
    let now = 0;
    const clocked = trainer(bigram(2), { clock: { now: () => (now += 250) } });
    const batch = makeBatch(model, 8, 2, 1);
    const m = await t.trainStep(batch);
    expect(Object.keys(m).sort()).toEqual([...TRAIN_STEP_METRICS].sort());
    expect(m['policy/staleness']).toBe(2); // learner version 3 − token version 1
    expect(m['advantage/mean']).not.toBe(0);
    expect(m['advantage/absMean']).toBeGreaterThan(0);
    expect(m['optim/lr']).toBe(0.05);
    expect(m['optim/gradNorm']).toBeGreaterThan(0);
    // Clock read twice, 250 ms apart: tokens / 0.25 s.
    const tokens = packTrajectories(batch, new Float32Array(batch.length).fill(1), { maxTokensPerBatch: 8192 }).reduce(
      (sum, p) => sum + p.batch.attentionMask.reduce((a, b) => a + b, 0),
      0,
    );
    expect((await clocked.trainStep(batch))['throughput/trainTokensPerSec']).toBeCloseTo(tokens / 0.25, 6);
  });

  it('gives the same gradients whether the step is cut into small or large micro-batches (KL and entropy on)', async () => {
    const model = bigram(3);
    const reference = bigram(4);
    const t = trainer(model, { reference });
    const batch = makeBatch(model, 9, 4);
    const options = { klCoef: 0.3, entropyCoef: 0.05 };
    expect(packTrajectories(batch, new Float32Array(batch.length).fill(1), { maxTokensPerBatch: 8 }).length).toBeGreaterThan(5);
    const small = await t.computeGradients(batch, { ...options, maxTokensPerBatch: 8 });
    const large = await t.computeGradients(batch, { ...options, maxTokensPerBatch: 100_000 });
    expect(small.tokenCount).toBe(large.tokenCount);
    expect(small.norm).toBeGreaterThan(0);
    expect(Math.abs(small.norm - large.norm)).toBeLessThan(1e-5);
    const maxDiff = Math.max(...Array.from(small.gradients[0], (g, i) => Math.abs(g - large.gradients[0][i])));
    expect(maxDiff).toBeLessThan(1e-5);
    // And trainStep reports that same pre-clip norm.
    const m = await t.trainStep(batch, { ...options, maxTokensPerBatch: 8 });
    expect(m['optim/gradNorm']).toBeCloseTo(large.norm, 5);
  });

  it('cuts each mini-batch into a multiple of microBatchMultiple micro-batches, with the same gradients', async () => {
    const model = bigram(3);
    const t = trainer(model);
    const batch = makeBatch(model, 9, 4);
    const chunksOf = async (microBatchMultiple: number) =>
      (await prepareStep({ policy: model, reference: null, critic: null }, batch, { ...DEFAULT_TRAIN_STEP_OPTIONS, microBatchMultiple }, 0, undefined)).chunks;
    expect((await chunksOf(1)).map((c) => c.length)).toEqual([1]); // every sequence fits 8,192 tokens
    expect((await chunksOf(4)).map((c) => c.length)).toEqual([4]);
    const one = await t.computeGradients(batch, { microBatchMultiple: 1 });
    const four = await t.computeGradients(batch, { microBatchMultiple: 4 });
    expect(four.tokenCount).toBe(one.tokenCount);
    expect(Math.abs(four.norm - one.norm)).toBeLessThan(1e-5);
    const maxDiff = Math.max(...Array.from(four.gradients[0], (g, i) => Math.abs(g - one.gradients[0][i])));
    expect(maxDiff).toBeLessThan(1e-5);
  });

  it('clips the gradient to the global norm before Adam', async () => {
    // Adam's first update is lr · g / (|g| + 1e-8) per element: ≈ lr when |g| ≫ 1e-8, but with the
    // gradient clipped to norm 1e-10 it is at most lr · 1e-10 / (1e-10 + 1e-8) < lr / 100.
    const change = async (gradClip: number): Promise<number> => {
      const model = bigram(5);
      const before = model.w.dataSync().slice();
      await trainer(model).trainStep(makeBatch(model, 10), { gradClip });
      const after = model.w.dataSync();
      return Math.max(...Array.from(after, (x, i) => Math.abs(x - before[i])));
    };
    expect(await change(1e9)).toBeCloseTo(0.05, 3);
    expect(await change(1e-10)).toBeLessThan(0.05 / 100);
  });

  it('resumes from getState/setState exactly as an uninterrupted run', async () => {
    const a = bigram(6);
    const ta = trainer(a);
    const batches = [makeBatch(a, 11), makeBatch(a, 12), makeBatch(a, 13)];
    const options = { epochs: 2, miniBatches: 2 };
    await ta.trainStep(batches[0], options);
    await ta.trainStep(batches[1], options);
    const saved = await ta.getState();
    const weights = a.namedWeights();
    await ta.trainStep(batches[2], options);

    const b = bigram(99); // different init, overwritten from the "checkpoint"
    const tb = trainer(b);
    await tb.trainStep(batches[0]); // give tb stale Adam state of its own, which setState must replace
    b.loadNamedWeights(weights);
    await tb.setState(saved);
    expect(await tb.getState()).toEqual(saved);
    expect(Array.from(b.w.dataSync())).toEqual(Array.from(weights.get('w')?.data ?? []));
    expect(tb.version).toBe(2);
    await tb.trainStep(batches[2], options);
    expect(Array.from(b.w.dataSync())).toEqual(Array.from(a.w.dataSync()));
    expect(await tb.getState()).toEqual(await ta.getState());
    expect(saved.optimizer.map((x) => x.name)).toEqual(['adam/iterations', 'adam/accBeta1', 'adam/accBeta2', 'adam/m/0', 'adam/v/0']);
    expect(saved.optimizer[0].data[0]).toBe(8); // 2 steps × 2 epochs × 2 mini-batches
  });

  it('leaks no tensors across steps, state round-trips and gradient calls', async () => {
    const model = bigram(7);
    const t = trainer(model, { reference: bigram(8) });
    const batch = makeBatch(model, 14);
    const options = { klCoef: 0.1, entropyCoef: 0.01, epochs: 2, miniBatches: 2, maxTokensPerBatch: 10 };
    await t.trainStep(batch, options); // creates the Adam moments
    const before = tf.memory().numTensors;
    await t.trainStep(batch, options);
    await t.computeGradients(batch, options);
    await t.setState(await t.getState());
    await t.trainStep(batch, { ...options, dropZeroAdvantage: true });
    expect(tf.memory().numTensors).toBe(before);
  });

  it('makes no update when every group is uniform and zero advantages are dropped', async () => {
    const model = bigram(9);
    const t = trainer(model);
    const batch = makeBatch(model, 15).map((tr) => ({ ...tr, reward: 1 }));
    const before = Array.from(model.w.dataSync());
    const m = await t.trainStep(batch, { dropZeroAdvantage: true });
    expect(Array.from(model.w.dataSync())).toEqual(before);
    expect(m['advantage/absMean']).toBe(0);
    expect(m['loss/total']).toBe(0);
    expect(t.version).toBe(1);
  });

  it('drops uniform groups before the reference pass: the reference scores only the groups that train', async () => {
    const model = bigram(11);
    const reference = bigram(12);
    const scored: string[] = [];
    const counting: TrainableModel = {
      forwardTrain: (batch, temperature) => {
        scored.push(`rows:${batch.batchSize}`);
        return reference.forwardTrain(batch, temperature);
      },
      trainableVariables: () => [],
      namedWeights: () => reference.namedWeights(),
      loadNamedWeights: () => undefined,
    };
    const t = trainer(model, { reference: counting });
    // Group 0 uniform (every reward 1: zero advantages), group 1 mixed.
    const batch = makeBatch(model, 17).map((tr) => (tr.groupId.endsWith('task0') ? { ...tr, reward: 1 } : tr));
    const options = { klCoef: 0.1, klPlacement: 'loss' as const, dropZeroAdvantage: true, maxTokensPerBatch: 4096 };
    await t.trainStep(batch, options);
    const rows = scored.filter((s) => s.startsWith('rows:')).reduce((n, s) => n + Number(s.slice(5)), 0);
    const rowsOf = (ts: Trajectory[]) => packTrajectories(ts, new Float32Array(ts.length), { maxTokensPerBatch: 4096 }).reduce((n, p) => n + p.batch.batchSize, 0);
    const mixed = batch.filter((tr) => tr.groupId.endsWith('task1'));
    expect(rows).toBe(rowsOf(mixed)); // the mixed group's rows only
    expect(rows).toBeLessThan(rowsOf(batch));
    // A step whose groups all drop never runs the reference.
    scored.length = 0;
    const uniform = batch.map((tr) => ({ ...tr, reward: 0 }));
    const m = await t.trainStep(uniform, options);
    expect(scored).toEqual([]);
    expect(m['loss/total']).toBe(0);
  });

  it('rejects a KL coefficient without a reference model and bad options, naming the field', async () => {
    const model = bigram(10);
    const t = trainer(model);
    const batch = makeBatch(model, 16);
    await expect(t.trainStep(batch, { klCoef: 0.1 })).rejects.toThrow(/'reference'/);
    await expect(t.trainStep(batch, { epochs: 0 })).rejects.toThrow(InvalidArgumentError);
    await expect(t.trainStep(batch, { gradClip: 0 })).rejects.toThrow(/'gradClip'/);
    expect(() => new PolicyTrainer({ policy: model, lr: 0 })).toThrow(/'lr'/);
    await expect(t.setState({ version: 1, optimizer: [] })).rejects.toThrow(/adam\/iterations/);
  });
});
