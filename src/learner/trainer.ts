/**
 * The learner's update step: per-token layout → (reference log-probs, critic values) →
 * advantages from the estimator registry → packed micro-batches → PPO-clip actor loss (+ clipped
 * value loss) → accumulated gradients → global-norm clip (actor and critic apart) → Adam(W) with
 * the scheduled learning rate, for each mini-batch of each epoch. One class serves every
 * algorithm: the estimator, KL placement, aggregation and critic are options, never a switch here.
 *
 * Loss normalisation: each micro-batch's weighted sum uses weights computed over its whole
 * mini-batch (`src/algorithms/aggregation.ts`), so the accumulated gradient is the gradient of
 * the mini-batch's aggregate, whatever `maxTokensPerBatch` is (verl instead means per micro-batch
 * and scales by 1/accumulation steps, which weights short micro-batches more).
 */
import type { EstimatorState } from '../algorithms/advantage-input.js';
import { globalNormScale } from '../algorithms/grad-clip.js';
import { KlController } from '../algorithms/kl.js';
import { explainedVariance, maskedStats } from '../algorithms/stats.js';
import { type Clock, systemClock } from '../core/clock.js';
import { InvalidArgumentError } from '../core/errors.js';
import type { Trajectory } from '../core/types.js';
import { tf } from '../backend/tf.js';
import type { Critic } from './critic.js';
import type { GradientPool } from './data-parallel/gradient-pool.js';
import { type AccumulatedGradients, accumulateGradients, gradientOptionsOf, STATS, type StatName } from './grad-accumulate.js';
import { learningRateAt, type LrSchedule } from './lr-schedule.js';
import { AdamW, type NamedArray } from './optimizer.js';
import type { MicroBatch, TrainableModel } from './train-contract.js';
import { checkTrainStepOptions, DEFAULT_TRAIN_STEP_OPTIONS, type TrainStepMetrics, type TrainStepOptions } from './train-options.js';
import { type PreparedStep, prepareStep } from './train-signals.js';

export type { NamedArray } from './optimizer.js';
export type { NamedWeights, TrainableModel } from './train-contract.js';
export { CRITIC_STEP_METRICS, DEFAULT_TRAIN_STEP_OPTIONS, TRAIN_STEP_METRICS, type TrainStepMetrics, type TrainStepOptions } from './train-options.js';

/** Everything needed to resume training identically: version, optimizer states, critic weights, estimator and KL state. */
export interface TrainerState {
  readonly version: number;
  /**
   * `adam/iterations`, `adam/accBeta1`, `adam/accBeta2`, `adam/m/<i>`, `adam/v/<i>` per policy
   * variable; with a critic also `critic/head/*`, `critic/trunk/*` and `critic/adam/*`; with
   * running estimator state `estimator/runningBaseline`, `estimator/batches`; with an adaptive KL `kl/coef`.
   */
  readonly optimizer: NamedArray[];
}

/** Trainer construction options. */
export interface TrainerConfig {
  readonly policy: TrainableModel;
  /** Frozen reference policy for the KL term; only needed when `klCoef > 0`. */
  readonly reference?: TrainableModel | null;
  /** Critic (value head on the policy trunk or a separate model); needed by GAE. */
  readonly critic?: Critic | null;
  readonly lr: number;
  readonly beta1?: number;
  readonly beta2?: number;
  readonly epsilon?: number;
  /** AdamW decoupled weight decay (default 0: plain Adam). */
  readonly weightDecay?: number;
  /** Critic learning rate (default `lr`). */
  readonly criticLr?: number;
  /** Warm-up and decay of both learning rates, per training step (default constant). */
  readonly schedule?: Omit<LrSchedule, 'lr'>;
  /** Target KL of the adaptive controller (null/absent: the per-step `klCoef` is used as is). */
  readonly klTarget?: number | null;
  /** Horizon of the adaptive KL controller, in samples (default 10000). */
  readonly klHorizon?: number;
  /** Weights version of `policy` as given (default 0). */
  readonly initialVersion?: number;
  /** Time source for throughput (default wall clock). */
  readonly clock?: Pick<Clock, 'now'>;
  /**
   * Data-parallel gradient workers (`train.dataParallel` > 1): each micro-batch's gradient is
   * computed on a free worker and they are added here in micro-batch order, as this thread would
   * add them, so the step is bit-identical to the single-process one; null/absent computes them
   * in this thread. The trainer does not own the pool (close it after the trainer is done).
   */
  readonly gradientPool?: GradientPool | null;
}

/**
 * PPO: Schulman et al. 2017, arXiv:1707.06347 (with GRPO arXiv:2402.03300, RLOO arXiv:2402.14740, REINFORCE++ arXiv:2501.03262 advantages).
 * Shape: trajectories [numTrajectories] → one metrics record per step.
 *
 * Policy-gradient learner: PPO-clip surrogate on the configured estimator's advantages, optional
 * critic, Adam(W) (β 0.9/0.99, ε 1e-8 by default), one update per mini-batch per epoch.
 * @example
 * const trainer = new PolicyTrainer({ policy: model, lr: 1e-3 });
 * const metrics = await trainer.trainStep(trajectories, { maxTokensPerBatch: 4096 });
 * metrics['loss/policy']; trainer.version; // 1
 */
export class PolicyTrainer {
  /** Weights version: incremented once per {@link trainStep}. */
  version: number;
  private readonly policy: TrainableModel;
  private readonly reference: TrainableModel | null;
  private readonly critic: Critic | null;
  private readonly optimizer: AdamW;
  private readonly criticOptimizer: AdamW | null;
  private readonly lr: number;
  private readonly criticLr: number;
  private readonly schedule: Omit<LrSchedule, 'lr'>;
  private klController: KlController | null;
  private readonly klOptions: { target: number | null; horizon: number };
  private estimatorState: EstimatorState | undefined;
  private readonly clock: Pick<Clock, 'now'>;
  /** [N] proximal log-probs per micro-batch (decoupled PPO): the weights before this step's first update. */
  private readonly proximal = new WeakMap<MicroBatch, Float32Array>();
  private readonly pool: GradientPool | null;

  constructor(config: TrainerConfig) {
    if (!(config.lr > 0)) throw InvalidArgumentError.format('lr', `expected > 0, got ${config.lr}`);
    const criticLr = config.criticLr ?? config.lr;
    if (!(criticLr > 0)) throw InvalidArgumentError.format('criticLr', `expected > 0, got ${criticLr}`);
    this.policy = config.policy;
    this.reference = config.reference ?? null;
    this.critic = config.critic ?? null;
    if (this.critic?.usesPolicyHidden && this.policy.forwardTrainWithHidden === undefined) {
      throw InvalidArgumentError.format('critic', 'a shared-trunk critic needs a policy with forwardTrainWithHidden');
    }
    this.lr = config.lr;
    this.criticLr = criticLr;
    this.schedule = config.schedule ?? { warmupSteps: 0, kind: 'constant', totalSteps: 1, minLrRatio: 0 };
    learningRateAt(0, { lr: config.lr, ...this.schedule }); // validates the schedule now, not at step 1
    this.version = config.initialVersion ?? 0;
    this.clock = config.clock ?? systemClock;
    this.pool = config.gradientPool ?? null;
    const adam = { beta1: config.beta1 ?? 0.9, beta2: config.beta2 ?? 0.99, epsilon: config.epsilon ?? 1e-8, weightDecay: config.weightDecay ?? 0 };
    this.optimizer = new AdamW({ lr: config.lr, ...adam, prefix: 'adam' });
    this.criticOptimizer = this.critic === null ? null : new AdamW({ lr: criticLr, ...adam, prefix: 'critic/adam' });
    this.klOptions = { target: config.klTarget ?? null, horizon: config.klHorizon ?? 10_000 };
    this.klController = null;
    if (this.klOptions.target !== null) new KlController({ coef: 0, ...this.klOptions }); // validates target and horizon
  }

  /**
   * One training step on a batch of finished trajectories; returns the step's metrics.
   * Loss metrics and grad norms (before clipping) are means over the step's optimizer updates.
   */
  async trainStep(trajectories: readonly Trajectory[], options: Partial<TrainStepOptions> = {}): Promise<TrainStepMetrics> {
    const o: TrainStepOptions = { ...DEFAULT_TRAIN_STEP_OPTIONS, ...options };
    checkTrainStepOptions(o, this.reference !== null, this.critic !== null);
    const started = this.clock.now();
    const lr = learningRateAt(this.version, { lr: this.lr, ...this.schedule });
    const criticLr = learningRateAt(this.version, { lr: this.criticLr, ...this.schedule });
    this.optimizer.setLearningRate(lr);
    this.criticOptimizer?.setLearningRate(criticLr);
    const klCoef = this.klCoefFor(o);
    const prepared = await prepareStep(this.models, trajectories, o, klCoef, this.estimatorState);
    if (o.offPolicy.kind === 'decoupled') await this.recomputeProximal(prepared.chunks, o.temperature);
    const warmingUp = this.critic !== null && this.version < o.criticWarmupSteps;

    const sums = Object.fromEntries(STATS.map((name) => [name, 0])) as Record<StatName, number>;
    let gradNorm = 0;
    let criticGradNorm = 0;
    let updates = 0;
    let tokens = 0;
    for (let epoch = 0; epoch < o.epochs; epoch++) {
      for (const chunk of prepared.chunks) {
        const { actorGrads, criticGrads, stats } = await this.gradients(chunk, o, klCoef, warmingUp);
        if (!warmingUp) gradNorm += this.applyClipped(this.optimizer, this.policy.trainableVariables(), actorGrads, o.gradClip);
        if (this.critic !== null && this.criticOptimizer !== null) {
          criticGradNorm += this.applyClipped(this.criticOptimizer, this.critic.trainableVariables(), criticGrads, o.gradClip);
        }
        STATS.forEach((name, i) => {
          sums[name] += stats[i] ?? 0;
        });
        updates++;
        tokens += chunk.reduce((sum, micro) => sum + micro.tokens, 0);
      }
    }
    // Committed only once the step went through: a failed step leaves the estimator and KL state as they were.
    // Scalar state is rounded to float32 here, as the checkpoint stores it, so a resume is bit-exact.
    const next = prepared.output.state;
    if (next !== undefined) this.estimatorState = { runningBaseline: Math.fround(next.runningBaseline), batches: next.batches };
    const mean = (x: number): number => (updates > 0 ? x / updates : 0);
    const measuredKl = o.klPlacement === 'reward' ? prepared.klReward : mean(sums['loss/klRef']);
    if (this.klController !== null && klCoef > 0) {
      this.klController.update(measuredKl, trajectories.length);
      this.klController.coef = Math.fround(this.klController.coef);
    }
    const signal = this.signalStats(trajectories, prepared); // staleness against the version that trained
    this.version++;
    const seconds = (this.clock.now() - started) / 1000;
    const metrics: TrainStepMetrics = {
      'loss/policy': mean(sums['loss/policy']),
      'loss/clipFrac': mean(sums['loss/clipFrac']),
      'loss/dualClipFrac': mean(sums['loss/dualClipFrac']),
      'loss/approxKl': mean(sums['loss/approxKl']),
      'loss/klRef': mean(sums['loss/klRef']),
      'loss/entropy': mean(sums['loss/entropy']),
      'loss/total': mean(sums['loss/total']),
      'optim/gradNorm': mean(gradNorm),
      'optim/lr': lr,
      'kl/coef': klCoef,
      'kl/reward': prepared.klReward,
      ...signal,
      'policy/version': this.version,
      'throughput/trainTokensPerSec': seconds > 0 ? tokens / seconds : 0,
    };
    const offPolicy = o.offPolicy.kind === 'none' ? {} : { 'offpolicy/isWeight': mean(sums['offpolicy/isWeight']), 'offpolicy/truncFrac': mean(sums['offpolicy/truncFrac']) };
    if (this.critic === null || prepared.oldValues === null) return { ...metrics, ...offPolicy };
    const { mask } = prepared.layout;
    return {
      ...metrics,
      ...offPolicy,
      'loss/value': mean(sums['loss/value']),
      'loss/valueClipFrac': mean(sums['loss/valueClipFrac']),
      'critic/explainedVariance': explainedVariance(prepared.output.returns, prepared.oldValues, mask),
      'critic/valueMean': maskedStats(prepared.oldValues, mask).mean,
      'optim/criticGradNorm': mean(criticGradNorm),
      'optim/criticLr': criticLr,
    };
  }

  /**
   * The actor gradient `trainStep` would apply first (all trajectories as one mini-batch, before
   * clipping), as arrays in `trainableVariables()` order. Changes nothing; for tests and diagnostics.
   */
  async computeGradients(
    trajectories: readonly Trajectory[],
    options: Partial<TrainStepOptions> = {},
  ): Promise<{ gradients: Float32Array[]; norm: number; tokenCount: number }> {
    const o: TrainStepOptions = { ...DEFAULT_TRAIN_STEP_OPTIONS, ...options, miniBatches: 1 };
    checkTrainStepOptions(o, this.reference !== null, this.critic !== null);
    const klCoef = this.klCoefFor(o);
    const prepared = await prepareStep(this.models, trajectories, o, klCoef, this.estimatorState);
    if (o.offPolicy.kind === 'decoupled') await this.recomputeProximal(prepared.chunks, o.temperature);
    const chunk = prepared.chunks[0];
    if (chunk === undefined) {
      return { gradients: this.policy.trainableVariables().map((v) => new Float32Array(v.size)), norm: 0, tokenCount: 0 };
    }
    const { actorGrads, criticGrads } = await this.gradients(chunk, o, klCoef, false);
    const { norm } = globalNormScale(actorGrads, Number.POSITIVE_INFINITY);
    const gradients = await Promise.all(actorGrads.map(async (g) => ((await g.data()) as Float32Array).slice()));
    tf.dispose([...actorGrads, ...criticGrads]);
    return { gradients, norm, tokenCount: chunk[0].tokenCount };
  }

  /** Optimizer states, critic weights, estimator and KL state, and version, as named arrays a checkpoint can store. */
  async getState(): Promise<TrainerState> {
    const optimizer = await this.optimizer.getState();
    if (this.critic !== null && this.criticOptimizer !== null) optimizer.push(...this.critic.namedArrays(), ...(await this.criticOptimizer.getState()));
    if (this.estimatorState !== undefined) {
      optimizer.push({ name: 'estimator/runningBaseline', shape: [], data: Float32Array.of(this.estimatorState.runningBaseline) });
      optimizer.push({ name: 'estimator/batches', shape: [], data: Float32Array.of(this.estimatorState.batches) });
    }
    if (this.klController !== null) optimizer.push({ name: 'kl/coef', shape: [], data: Float32Array.of(this.klController.coef) });
    return { version: this.version, optimizer };
  }

  /** Restores what {@link getState} returned; the next step continues exactly as if never interrupted. */
  async setState(state: TrainerState): Promise<void> {
    const byName = new Map(state.optimizer.map((a) => [a.name, a]));
    await this.optimizer.setState(byName, this.policy.trainableVariables());
    if (this.critic !== null && this.criticOptimizer !== null) {
      this.critic.loadNamedArrays(byName);
      await this.criticOptimizer.setState(byName, this.critic.trainableVariables());
    }
    const baseline = byName.get('estimator/runningBaseline');
    const batches = byName.get('estimator/batches');
    this.estimatorState = baseline && batches ? { runningBaseline: baseline.data[0], batches: batches.data[0] } : undefined;
    const coef = byName.get('kl/coef');
    const controller = coef === undefined || this.klOptions.target === null ? null : new KlController({ coef: coef.data[0], ...this.klOptions });
    this.klController = controller;
    this.version = state.version;
  }

  /** Frees the optimizers' state (not the models, nor the critic). */
  dispose(): void {
    this.optimizer.dispose();
    this.criticOptimizer?.dispose();
  }

  /** Models read by the data preparation (`prepareStep`). */
  get models(): { policy: TrainableModel; reference: TrainableModel | null; critic: Critic | null } {
    return { policy: this.policy, reference: this.reference, critic: this.critic };
  }

  /** AReaL's proximal policy: log-probs of every micro-batch under the current weights, before any update of this step. */
  private async recomputeProximal(chunks: readonly (readonly MicroBatch[])[], temperature: number): Promise<void> {
    for (const chunk of chunks) {
      for (const micro of chunk) {
        const logprobs = tf.tidy(() => this.policy.forwardTrain(micro.batch, temperature).logprobs);
        this.proximal.set(micro, ((await logprobs.data()) as Float32Array).slice());
        logprobs.dispose();
      }
    }
  }

  /** The KL coefficient in force: the adaptive controller's (started at `o.klCoef`) or `o.klCoef`. */
  private klCoefFor(o: TrainStepOptions): number {
    if (this.klOptions.target === null || o.klCoef === 0) return o.klCoef;
    this.klController ??= new KlController({ coef: Math.fround(o.klCoef), ...this.klOptions });
    return this.klController.coef;
  }

  /**
   * Clips `grads` to `maxNorm` and applies them (skipped when the norm is not finite, as verl does);
   * returns the pre-clip norm. The clip is the optimizer's scale: no clipped copies are made.
   */
  private applyClipped(optimizer: AdamW, variables: tf.Variable[], grads: tf.Tensor[], maxNorm: number): number {
    const { norm, scale } = globalNormScale(grads, maxNorm);
    if (Number.isFinite(norm)) optimizer.apply(variables, grads, scale);
    tf.dispose(grads);
    return norm;
  }

  /** advantage, return and staleness stats over every trained token of the step. */
  private signalStats(trajectories: readonly Trajectory[], prepared: PreparedStep): Omit<TrainStepMetrics, StatName | 'optim/gradNorm' | 'optim/lr' | 'kl/coef' | 'kl/reward' | 'policy/version' | 'throughput/trainTokensPerSec' | 'optim/criticGradNorm' | 'optim/criticLr' | 'critic/explainedVariance' | 'critic/valueMean'> {
    const { mask } = prepared.layout;
    const advantages = maskedStats(prepared.output.advantages, mask);
    const returns = maskedStats(prepared.output.returns, mask);
    const absolute = maskedStats(prepared.output.advantages.map(Math.abs), mask);
    let count = 0;
    let staleness = 0;
    for (const t of trajectories) {
      for (const turn of t.turns) {
        const trained = turn.actionLossMask.reduce((a, m) => a + (m ? 1 : 0), 0);
        count += trained;
        staleness += trained * (this.version - turn.policyVersion);
      }
    }
    return {
      'advantage/mean': advantages.mean,
      'advantage/absMean': absolute.mean,
      'advantage/std': advantages.std,
      'advantage/min': advantages.min,
      'advantage/max': advantages.max,
      'return/mean': returns.mean,
      'return/std': returns.std,
      'return/min': returns.min,
      'return/max': returns.max,
      'policy/staleness': count > 0 ? staleness / count : 0,
    };
  }

  /** Summed gradients of one mini-batch: on the gradient workers when data-parallel, else here. */
  private async gradients(chunk: readonly MicroBatch[], o: TrainStepOptions, klCoef: number, warmingUp: boolean): Promise<AccumulatedGradients> {
    const options = gradientOptionsOf(o, klCoef, warmingUp);
    const proximalOf = (micro: MicroBatch): Float32Array | undefined => this.proximal.get(micro);
    if (this.pool !== null) return this.pool.accumulate(chunk, options, proximalOf);
    return accumulateGradients({ policy: this.policy, critic: this.critic }, chunk, options, proximalOf);
  }
}
