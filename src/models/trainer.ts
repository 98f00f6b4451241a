/**
 * The learner's update step: advantages → packed micro-batches → PPO-clip loss → accumulated
 * gradients → global-norm clip → Adam. Named for what it does today (GRPO); the estimator comes
 * from the registry in `src/algorithms/advantages.ts`, so other critic-free estimators plug in
 * through `options.estimator` without touching this file.
 *
 * Loss normalisation: every micro-batch's masked sum is divided by the trained-token count of its
 * whole mini-batch, so the accumulated gradient is the gradient of one token-mean over the
 * mini-batch, whatever `maxTokensPerBatch` is (verl instead means per micro-batch and scales by
 * 1/accumulation steps, which weights short micro-batches more).
 */
import { computeAdvantages, type EstimatorOptions } from '../algorithms/advantages.js';
import { clipByGlobalNorm } from '../algorithms/grad-clip.js';
import { ppoClipLoss } from '../algorithms/losses.js';
import { type Clock, systemClock } from '../core/clock.js';
import { InvalidArgumentError, TurnwiseError } from '../core/errors.js';
import type { MetricName } from '../core/metrics.js';
import type { Trajectory } from '../core/types.js';
import { tf } from './backend/tf.js';
import { type PackedBatch, packTrajectories } from './pack.js';
import type { TrainBatch } from './train-batch.js';

/** Named weights as plain arrays (the checkpoint format of models). */
export type NamedWeights = Map<string, { shape: number[]; data: Float32Array }>;

/** What the trainer needs from a model (the transformer in `src/models/transformer.ts` provides it). */
export interface TrainableModel {
  /** [N] target log-probs and entropies at `batch.targetPositions`; call inside `tf.variableGrads`. */
  forwardTrain(batch: TrainBatch, temperature: number): { logprobs: tf.Tensor1D; entropy: tf.Tensor1D };
  /** The variables the optimizer updates, in a stable order. */
  trainableVariables(): tf.Variable[];
  namedWeights(): NamedWeights;
  loadNamedWeights(weights: NamedWeights): void;
}

/** Per-step options. Defaults follow the GRPO recipe that learned (learnability probe §1). */
export interface TrainStepOptions {
  /** Advantage estimator and its options. */
  readonly estimator: EstimatorOptions;
  /** PPO clip range ε. */
  readonly clipRatio: number;
  /** k3 KL weight; > 0 needs a reference model. */
  readonly klCoef: number;
  /** Entropy bonus weight (verl default 0.001; the probe used 0). */
  readonly entropyCoef: number;
  /** Passes over the step's data (verl `ppo_epochs`). */
  readonly epochs: number;
  /** Optimizer updates per epoch; trajectories are split into this many contiguous chunks. */
  readonly miniBatches: number;
  /** Max global gradient norm (verl `grad_clip`). */
  readonly gradClip: number;
  /** Padded tokens per micro-batch (memory bound; does not change the math). */
  readonly maxTokensPerBatch: number;
  /** Softmax temperature of the sampler, so ratios compare like with like. */
  readonly temperature: number;
  /** Leave out trajectories with advantage exactly 0 (see `PackOptions.dropZeroAdvantage`). */
  readonly dropZeroAdvantage: boolean;
}

/** Defaults: GRPO, clip 0.2, no KL, no entropy bonus, one epoch, one update, clip norm 1. */
export const DEFAULT_TRAIN_STEP_OPTIONS: TrainStepOptions = Object.freeze<TrainStepOptions>({
  estimator: { name: 'grpo', normalizeStd: true, epsilon: 1e-6 },
  clipRatio: 0.2,
  klCoef: 0,
  entropyCoef: 0,
  epochs: 1,
  miniBatches: 1,
  gradClip: 1,
  maxTokensPerBatch: 8192,
  temperature: 1,
  dropZeroAdvantage: false,
});

/** The metrics one {@link GrpoTrainer.trainStep} returns (names from `src/core/metrics.ts`). */
export const TRAIN_STEP_METRICS = [
  'loss/policy',
  'loss/clipFrac',
  'loss/approxKl',
  'loss/klRef',
  'loss/entropy',
  'loss/total',
  'optim/gradNorm',
  'optim/lr',
  'advantage/mean',
  'advantage/absMean',
  'policy/staleness',
  'policy/version',
  'throughput/trainTokensPerSec',
] as const satisfies readonly MetricName[];

export type TrainStepMetrics = Record<(typeof TRAIN_STEP_METRICS)[number], number>;

/** One named array of optimizer state. */
export interface NamedArray {
  readonly name: string;
  readonly shape: number[];
  readonly data: Float32Array;
}

/** Everything needed to resume training identically: learner version and Adam state. */
export interface TrainerState {
  readonly version: number;
  /** `adam/iterations`, `adam/accBeta1`, `adam/accBeta2`, then `adam/m/<i>` and `adam/v/<i>` per trainable variable i. */
  readonly optimizer: NamedArray[];
}

/** Trainer construction options. */
export interface TrainerConfig {
  readonly policy: TrainableModel;
  /** Frozen reference policy for the KL term; only needed when `klCoef > 0`. */
  readonly reference?: TrainableModel | null;
  readonly lr: number;
  readonly beta1?: number;
  readonly beta2?: number;
  readonly epsilon?: number;
  /** Weights version of `policy` as given (default 0). */
  readonly initialVersion?: number;
  /** Time source for throughput (default wall clock). */
  readonly clock?: Pick<Clock, 'now'>;
}

/** A tensor with a name, as `Optimizer.getWeights`/`setWeights` exchange them (not re-exported by tfjs). */
type NamedTensor = Awaited<ReturnType<tf.AdamOptimizer['getWeights']>>[number];

/** The private Adam fields tfjs recomputes (with pow) on `setWeights`; saved so a resume is bit-exact. */
interface AdamAccumulators {
  accBeta1?: unknown;
  accBeta2?: unknown;
}

/** Loss metric ← loss term, in the order the per-micro-batch stats vector holds them. */
const LOSS_TERMS = [
  ['loss/total', 'total'],
  ['loss/policy', 'policy'],
  ['loss/klRef', 'klRef'],
  ['loss/entropy', 'entropy'],
  ['loss/clipFrac', 'clipFrac'],
  ['loss/approxKl', 'approxKl'],
] as const;
type LossMetric = (typeof LOSS_TERMS)[number][0];

function checkOptions(o: TrainStepOptions, hasReference: boolean): void {
  const positiveInt = (key: 'epochs' | 'miniBatches' | 'maxTokensPerBatch'): void => {
    if (!(Number.isInteger(o[key]) && o[key] > 0)) throw InvalidArgumentError.format(key, `expected a positive integer, got ${o[key]}`);
  };
  positiveInt('epochs');
  positiveInt('miniBatches');
  positiveInt('maxTokensPerBatch');
  if (!(o.gradClip > 0)) throw InvalidArgumentError.format('gradClip', `expected > 0, got ${o.gradClip}`);
  if (!(o.temperature > 0)) throw InvalidArgumentError.format('temperature', `expected > 0, got ${o.temperature}`);
  if (o.klCoef > 0 && !hasReference) throw InvalidArgumentError.format('reference', `a reference model is required when klCoef > 0 (got ${o.klCoef})`);
}

const trainedTokens = (packed: readonly PackedBatch[]): number =>
  packed.reduce((sum, p) => sum + p.signal.lossMask.reduce((a, m) => a + m, 0), 0);

/**
 * GRPO: Shao et al. 2024, arXiv:2402.03300; PPO-clip: Schulman et al. 2017, arXiv:1707.06347.
 * Shape: trajectories [numTrajectories] → one metrics record per step.
 *
 * Policy-gradient learner: PPO-clip surrogate on critic-free advantages (GRPO by default), Adam
 * (β 0.9/0.99, ε 1e-8 by default), one update per mini-batch per epoch.
 * @example
 * const trainer = new GrpoTrainer({ policy: model, lr: 1e-3 });
 * const metrics = await trainer.trainStep(trajectories, { maxTokensPerBatch: 4096 });
 * metrics['loss/policy']; trainer.version; // 1
 */
export class GrpoTrainer {
  /** Weights version: incremented once per {@link trainStep}. */
  version: number;
  private readonly policy: TrainableModel;
  private readonly reference: TrainableModel | null;
  private readonly optimizer: tf.AdamOptimizer;
  private readonly lr: number;
  private readonly clock: Pick<Clock, 'now'>;

  constructor(config: TrainerConfig) {
    if (!(config.lr > 0)) throw InvalidArgumentError.format('lr', `expected > 0, got ${config.lr}`);
    this.policy = config.policy;
    this.reference = config.reference ?? null;
    this.lr = config.lr;
    this.version = config.initialVersion ?? 0;
    this.clock = config.clock ?? systemClock;
    this.optimizer = tf.train.adam(config.lr, config.beta1 ?? 0.9, config.beta2 ?? 0.99, config.epsilon ?? 1e-8);
  }

  /**
   * One training step on a batch of finished trajectories; returns the step's metrics.
   * Loss metrics and `optim/gradNorm` (before clipping) are means over the step's optimizer updates.
   */
  async trainStep(trajectories: readonly Trajectory[], options: Partial<TrainStepOptions> = {}): Promise<TrainStepMetrics> {
    const o: TrainStepOptions = { ...DEFAULT_TRAIN_STEP_OPTIONS, ...options };
    checkOptions(o, this.reference !== null);
    const started = this.clock.now();
    const advantages = this.advantages(trajectories, o);
    const signalStats = this.signalStats(trajectories, advantages);

    let kept = trajectories.map((_, i) => i);
    if (o.dropZeroAdvantage) kept = kept.filter((i) => advantages[i] !== 0);
    const chunks: PackedBatch[][] = [];
    for (let c = 0; c < o.miniBatches; c++) {
      const ids = kept.slice(Math.floor((c * kept.length) / o.miniBatches), Math.floor(((c + 1) * kept.length) / o.miniBatches));
      const packed = packTrajectories(
        ids.map((i) => trajectories[i]),
        Float32Array.from(ids, (i) => advantages[i]),
        { maxTokensPerBatch: o.maxTokensPerBatch },
      );
      if (trainedTokens(packed) > 0) chunks.push(packed);
    }
    const refs = await Promise.all(chunks.map((packed) => this.referenceLogprobs(packed, o)));

    const sums = Object.fromEntries(LOSS_TERMS.map(([metric]) => [metric, 0])) as Record<LossMetric, number>;
    let gradNormSum = 0;
    let updates = 0;
    let tokens = 0;
    for (let epoch = 0; epoch < o.epochs; epoch++) {
      for (let c = 0; c < chunks.length; c++) {
        const { grads, stats } = this.accumulate(chunks[c], refs[c], o);
        const { clipped, norm } = clipByGlobalNorm(grads, o.gradClip);
        // A non-finite norm means a broken batch: skip the update rather than poison the weights (as verl does).
        if (Number.isFinite(norm)) {
          const vars = this.policy.trainableVariables();
          this.optimizer.applyGradients(vars.map((v, i) => ({ name: v.name, tensor: clipped[i] })));
        }
        tf.dispose([...grads, ...clipped]);
        LOSS_TERMS.forEach(([metric], i) => {
          sums[metric] += stats[i];
        });
        gradNormSum += norm;
        updates++;
        tokens += chunks[c].reduce((sum, p) => sum + p.batch.attentionMask.reduce((a, m) => a + m, 0), 0);
      }
    }
    this.version++;
    const seconds = (this.clock.now() - started) / 1000;
    const mean = (x: number): number => (updates > 0 ? x / updates : 0);
    return {
      'loss/policy': mean(sums['loss/policy']),
      'loss/clipFrac': mean(sums['loss/clipFrac']),
      'loss/approxKl': mean(sums['loss/approxKl']),
      'loss/klRef': mean(sums['loss/klRef']),
      'loss/entropy': mean(sums['loss/entropy']),
      'loss/total': mean(sums['loss/total']),
      'optim/gradNorm': mean(gradNormSum),
      'optim/lr': this.lr,
      ...signalStats,
      'policy/version': this.version,
      'throughput/trainTokensPerSec': seconds > 0 ? tokens / seconds : 0,
    };
  }

  /**
   * The gradient `trainStep` would apply first (all trajectories as one mini-batch, before
   * clipping), as arrays in `trainableVariables()` order. Changes nothing; for tests and diagnostics.
   */
  async computeGradients(
    trajectories: readonly Trajectory[],
    options: Partial<TrainStepOptions> = {},
  ): Promise<{ gradients: Float32Array[]; norm: number; tokenCount: number }> {
    const o: TrainStepOptions = { ...DEFAULT_TRAIN_STEP_OPTIONS, ...options };
    checkOptions(o, this.reference !== null);
    const advantages = this.advantages(trajectories, o);
    const packed = packTrajectories(trajectories, advantages, { maxTokensPerBatch: o.maxTokensPerBatch, dropZeroAdvantage: o.dropZeroAdvantage });
    const tokenCount = trainedTokens(packed);
    if (tokenCount === 0) {
      return { gradients: this.policy.trainableVariables().map((v) => new Float32Array(v.size)), norm: 0, tokenCount };
    }
    const { grads } = this.accumulate(packed, await this.referenceLogprobs(packed, o), o);
    const { clipped, norm } = clipByGlobalNorm(grads, Number.POSITIVE_INFINITY); // for the norm only
    const gradients = await Promise.all(grads.map(async (g) => ((await g.data()) as Float32Array).slice()));
    tf.dispose([...grads, ...clipped]);
    return { gradients, norm, tokenCount };
  }

  /** Optimizer state and version, as named arrays a checkpoint can store. */
  async getState(): Promise<TrainerState> {
    const weights = await this.optimizer.getWeights();
    const [iterations, ...moments] = weights;
    const optimizer: NamedArray[] = [
      { name: 'adam/iterations', shape: [], data: Float32Array.of((await iterations.tensor.data())[0]) },
    ];
    iterations.tensor.dispose();
    const internals = this.optimizer as unknown as AdamAccumulators;
    for (const key of ['accBeta1', 'accBeta2'] as const) {
      const variable = internals[key];
      if (variable instanceof tf.Variable) optimizer.push({ name: `adam/${key}`, shape: [], data: ((await variable.data()) as Float32Array).slice() });
    }
    const half = moments.length / 2;
    for (let i = 0; i < moments.length; i++) {
      const { tensor } = moments[i];
      const kind = i < half ? 'm' : 'v';
      optimizer.push({ name: `adam/${kind}/${i % half}`, shape: [...tensor.shape], data: ((await tensor.data()) as Float32Array).slice() });
    }
    return { version: this.version, optimizer };
  }

  /** Restores what {@link getState} returned; the next step continues exactly as if never interrupted. */
  async setState(state: TrainerState): Promise<void> {
    const byName = new Map(state.optimizer.map((a) => [a.name, a]));
    const iterations = byName.get('adam/iterations');
    if (iterations === undefined) throw InvalidArgumentError.format('state.optimizer', "missing 'adam/iterations'");
    const vars = this.policy.trainableVariables();
    const moments: NamedTensor[] = [];
    for (const kind of ['m', 'v'] as const) {
      for (let i = 0; i < vars.length; i++) {
        const entry = byName.get(`adam/${kind}/${i}`);
        if (entry === undefined) continue;
        if (entry.shape.join(',') !== vars[i].shape.join(',')) {
          throw InvalidArgumentError.format(`state.optimizer['adam/${kind}/${i}']`, `shape [${entry.shape}] ≠ variable shape [${vars[i].shape}]`);
        }
        moments.push({ name: `${vars[i].name}/${kind}`, tensor: tf.tensor(entry.data, entry.shape, 'float32') });
      }
    }
    if (moments.length !== 0 && moments.length !== 2 * vars.length) {
      throw InvalidArgumentError.format('state.optimizer', `expected Adam moments for all ${vars.length} variables or none, got ${moments.length / 2}`);
    }
    const previous = await this.optimizer.getWeights();
    const iter: NamedTensor = { name: 'iter', tensor: tf.scalar(iterations.data[0], 'int32') };
    await this.optimizer.setWeights([iter, ...moments]);
    tf.dispose([iter.tensor, ...moments.map((m) => m.tensor), ...previous.map((p) => p.tensor)]);
    const internals = this.optimizer as unknown as AdamAccumulators;
    for (const key of ['accBeta1', 'accBeta2'] as const) {
      const saved = byName.get(`adam/${key}`);
      const variable = internals[key];
      if (saved !== undefined && variable instanceof tf.Variable) {
        tf.tidy(() => variable.assign(tf.scalar(saved.data[0])));
      }
    }
    this.version = state.version;
  }

  /** Frees the optimizer's state (not the models). */
  dispose(): void {
    this.optimizer.dispose();
  }

  private advantages(trajectories: readonly Trajectory[], o: TrainStepOptions): Float32Array {
    return computeAdvantages({
      rewards: Float32Array.from(trajectories, (t) => t.reward),
      groupIds: trajectories.map((t) => t.groupId),
      options: o.estimator,
    }).advantages;
  }

  /** advantage/mean, advantage/absMean and policy/staleness over every trained token of the step. */
  private signalStats(trajectories: readonly Trajectory[], advantages: Float32Array): Pick<TrainStepMetrics, 'advantage/mean' | 'advantage/absMean' | 'policy/staleness'> {
    let count = 0;
    let sum = 0;
    let absSum = 0;
    let staleness = 0;
    trajectories.forEach((t, i) => {
      for (const turn of t.turns) {
        const trained = turn.actionLossMask.reduce((a, m) => a + (m ? 1 : 0), 0);
        count += trained;
        sum += trained * advantages[i];
        absSum += trained * Math.abs(advantages[i]);
        staleness += trained * (this.version - turn.policyVersion);
      }
    });
    const mean = (x: number): number => (count > 0 ? x / count : 0);
    return { 'advantage/mean': mean(sum), 'advantage/absMean': mean(absSum), 'policy/staleness': mean(staleness) };
  }

  /** [N] reference log-probs per micro-batch, or nulls when the KL term is off. */
  private async referenceLogprobs(packed: readonly PackedBatch[], o: TrainStepOptions): Promise<(Float32Array | null)[]> {
    const reference = this.reference;
    if (o.klCoef === 0 || reference === null) return packed.map(() => null);
    return Promise.all(
      packed.map(async ({ batch }) => {
        const logprobs = tf.tidy(() => reference.forwardTrain(batch, o.temperature).logprobs);
        const data = ((await logprobs.data()) as Float32Array).slice();
        logprobs.dispose();
        return data;
      }),
    );
  }

  /** Sum over micro-batches of the gradient of (masked loss sum / mini-batch trained tokens), plus the loss terms. */
  private accumulate(packed: readonly PackedBatch[], refs: readonly (Float32Array | null)[], o: TrainStepOptions): { grads: tf.Tensor[]; stats: number[] } {
    const tokenCount = trainedTokens(packed);
    if (tokenCount === 0) throw new TurnwiseError('accumulate: no trained tokens in this mini-batch');
    const vars = this.policy.trainableVariables();
    let acc: tf.Tensor[] | null = null;
    let statsAcc: tf.Tensor1D | null = null;
    packed.forEach(({ batch, signal }, b) => {
      const held: { stats?: tf.Tensor1D } = {};
      const grads = tf.tidy(() => {
        const ref = refs[b];
        const { grads: named } = tf.variableGrads(() => {
          const out = this.policy.forwardTrain(batch, o.temperature);
          const terms = ppoClipLoss(
            {
              logprobs: out.logprobs,
              entropy: out.entropy,
              oldLogprobs: tf.tensor1d(signal.oldLogprobs),
              advantages: tf.tensor1d(signal.advantages),
              lossMask: tf.tensor1d(signal.lossMask),
              refLogprobs: ref === null ? null : tf.tensor1d(ref),
            },
            { clipRatio: o.clipRatio, klCoef: o.klCoef, entropyCoef: o.entropyCoef, tokenCount },
          );
          held.stats = tf.keep(tf.stack(LOSS_TERMS.map(([, term]) => terms[term])) as tf.Tensor1D);
          return terms.total;
        }, vars);
        return vars.map((v) => named[v.name] ?? tf.zerosLike(v));
      });
      const stats = held.stats as tf.Tensor1D;
      const nextAcc: tf.Tensor[] = acc === null ? grads : acc.map((a, i) => tf.add(a, grads[i]));
      const nextStats: tf.Tensor1D = statsAcc === null ? stats : tf.add(statsAcc, stats);
      if (acc !== null) tf.dispose([...acc, ...grads]);
      if (statsAcc !== null) tf.dispose([statsAcc, stats]);
      acc = nextAcc;
      statsAcc = nextStats;
    });
    const finalStats = statsAcc as tf.Tensor1D | null;
    const stats = finalStats === null ? [] : Array.from(finalStats.dataSync());
    finalStats?.dispose();
    return { grads: acc ?? [], stats };
  }
}
