/**
 * The learner's update step when the weights live on a model engine (a Tinker server): turnwise
 * computes everything about episodes — the per-token layout, the KL to the base folded into the
 * reward (from the base's log-probs, asked of the engine), the advantages from the estimator
 * registry, the loss aggregation — and sends token-level data; the engine computes the clipped
 * surrogate loss (`ppo`) where the weights are, accumulates its gradient, and applies Adam(W) with
 * turnwise's scheduled learning rate. After the step the weights are saved for sampling and the
 * sampler is pointed at them.
 *
 * Same metric names as the in-process learner (`src/learner/trainer.ts`); the entropy is unknown
 * (the engine does not return it) and reported as NaN, and the gradient norm is the engine's own
 * when it reports one.
 */
import type { EstimatorState } from '../algorithms/advantage-input.js';
import { computeAdvantages } from '../algorithms/advantages.js';
import { aggregationWeights } from '../algorithms/aggregation.js';
import { KlController, klPenalizedRewards } from '../algorithms/kl.js';
import { maskedStats } from '../algorithms/stats.js';
import { type Clock, systemClock } from '../core/clock.js';
import { InvalidArgumentError } from '../core/errors.js';
import { faultPoint } from '../core/fault-point.js';
import type { Trajectory } from '../core/types.js';
import { learningRateAt, type LrSchedule } from '../learner/lr-schedule.js';
import { tokenLayout } from '../learner/token-layout.js';
import type { TrainerState } from '../learner/trainer.js';
import { DEFAULT_TRAIN_STEP_OPTIONS, type TrainStepMetrics, type TrainStepOptions } from '../learner/train-options.js';
import type { SamplerWeightsRegistry } from './engine-policy.js';
import { type LocatedDatum, trajectoryDatums } from './engine-datums.js';
import type { EngineDatum, ModelEngine } from './engine.js';
import { reducedLoss, reductionScale } from './loss-scaling.js';

/** Options of {@link EngineTrainer}. */
export interface EngineTrainerOptions {
  readonly engine: ModelEngine;
  /** Where the sampler finds each version's weights. */
  readonly registry: SamplerWeightsRegistry;
  /** Names the sampler weights of each version (`<prefix>-v<version>`), unique per model on the engine. */
  readonly samplerPrefix: string;
  readonly lr: number;
  readonly beta1: number;
  readonly beta2: number;
  /** Adam epsilon (turnwise's 1e-8 unless set; Tinker's own default is 1e-12). */
  readonly epsilon?: number;
  readonly weightDecay: number;
  readonly schedule: Omit<LrSchedule, 'lr'>;
  readonly klTarget?: number | null;
  readonly klHorizon?: number;
  readonly initialVersion?: number;
  readonly clock?: Pick<Clock, 'now'>;
}

/** A trained target: where it sits in the step's data and in the token layout. */
interface Slot {
  readonly datum: number;
  readonly position: number;
  readonly layoutIndex: number;
}

/** Refuses per-step options an engine cannot honour (the config parser refuses them first, naming the config field). */
function checkEngineOptions(o: TrainStepOptions): void {
  if (o.klCoef > 0 && o.klPlacement !== 'reward') throw InvalidArgumentError.format('klPlacement', "must be 'reward' on a model engine (its loss has no KL term)");
  if (o.entropyCoef > 0) throw InvalidArgumentError.format('entropyCoef', 'must be 0 on a model engine');
  if (o.dualClip !== null) throw InvalidArgumentError.format('dualClip', 'must be null on a model engine');
  if (o.offPolicy.kind !== 'none') throw InvalidArgumentError.format('offPolicy', `'${o.offPolicy.kind}' is not offered by model engines`);
  if (o.policyLoss !== undefined && o.policyLoss.name !== 'ppo-clip') throw InvalidArgumentError.format('policyLoss', `'${o.policyLoss.name}' runs in turnwise's learner, not on a model engine`);
  if (!(Number.isInteger(o.epochs) && o.epochs > 0)) throw InvalidArgumentError.format('epochs', `expected a positive integer, got ${o.epochs}`);
  if (!(Number.isInteger(o.miniBatches) && o.miniBatches > 0)) throw InvalidArgumentError.format('miniBatches', `expected a positive integer, got ${o.miniBatches}`);
}

/**
 * PPO-clip (Schulman et al. 2017, arXiv:1707.06347) on an engine, with GRPO / RLOO / REINFORCE++
 * advantages computed here. Shape: trajectories [B] → one metrics record per step.
 * @example
 * const trainer = new EngineTrainer({ engine, registry, samplerPrefix: 'run1', lr: 1e-5, beta1: 0.9, beta2: 0.99, weightDecay: 0, schedule });
 * const metrics = await trainer.trainStep(trajectories, trainStepOptionsOf(config));
 */
export class EngineTrainer {
  /** Weights version: incremented once per {@link trainStep}. */
  version: number;
  private readonly engine: ModelEngine;
  private readonly registry: SamplerWeightsRegistry;
  private readonly options: EngineTrainerOptions;
  private estimatorState: EstimatorState | undefined;
  private klController: KlController | null = null;
  private readonly clock: Pick<Clock, 'now'>;

  constructor(options: EngineTrainerOptions) {
    if (!(options.lr > 0)) throw InvalidArgumentError.format('lr', `expected > 0, got ${options.lr}`);
    learningRateAt(0, { lr: options.lr, ...options.schedule }); // validates the schedule now, not at step 1
    this.options = options;
    this.engine = options.engine;
    this.registry = options.registry;
    this.version = options.initialVersion ?? 0;
    this.clock = options.clock ?? systemClock;
  }

  /** The name the sampler weights of `version` are saved under. */
  samplerName(version: number): string {
    return `${this.options.samplerPrefix}-v${String(version).padStart(6, '0')}`;
  }

  /** One training step on finished trajectories; returns the step's metrics and saves the new weights for sampling. */
  async trainStep(trajectories: readonly Trajectory[], options: Partial<TrainStepOptions> = {}): Promise<TrainStepMetrics> {
    const o: TrainStepOptions = { ...DEFAULT_TRAIN_STEP_OPTIONS, ...options };
    checkEngineOptions(o);
    const started = this.clock.now();
    const lr = learningRateAt(this.version, { lr: this.options.lr, ...this.options.schedule });
    const klCoef = this.klCoefFor(o);
    const layout = tokenLayout(trajectories, o.rewardMode ?? 'outcome');
    const T = layout.seqLen;
    const located = trajectoryDatums(trajectories);

    // The KL to the base, folded into the reward (verl use_kl_in_reward), from the base's log-probs.
    let rewards = layout.rewards;
    let klReward = 0;
    if (klCoef > 0 && located.length > 0) {
      const refLogprobs = new Float32Array(layout.rows * T);
      const base = await this.engine.baseLogprobs(located.map((l) => l.datum));
      located.forEach((l, d) => {
        const logprobs = base[d] as Float32Array;
        for (let j = 0; j < l.positions.length; j++) refLogprobs[(l.trajectoryIndex[j] as number) * T + (l.tokenIndex[j] as number)] = logprobs[l.positions[j] as number] as number;
      });
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
      ...(this.estimatorState !== undefined ? { state: this.estimatorState } : {}),
      options: o.estimator,
    });

    // Trajectories whose every advantage is 0 (uniform groups) teach nothing: not sent.
    const keep = (b: number): boolean => {
      if (!o.dropZeroAdvantage) return true;
      for (let t = 0; t < T; t++) if (layout.mask[b * T + t] === 1 && output.advantages[b * T + t] !== 0) return true;
      return false;
    };
    const kept = trajectories.map((_, b) => b).filter(keep);
    const clip = { clip_low_threshold: 1 - o.clipRatio, clip_high_threshold: 1 + o.clipRatio };
    const sums = { loss: 0, clipFrac: 0, approxKl: 0, gradNorm: 0, gradNorms: 0 };
    let updates = 0;
    let tokens = 0;
    for (let epoch = 0; epoch < o.epochs; epoch++) {
      for (let c = 0; c < o.miniBatches; c++) {
        const ids = new Set(kept.slice(Math.floor((c * kept.length) / o.miniBatches), Math.floor(((c + 1) * kept.length) / o.miniBatches)));
        const chunk = located.filter((l) => ids.has(l.trajectoryIndex[0] as number));
        const batch = this.batchOf(chunk, output.advantages, T, o);
        if (batch === null) continue;
        const result = await this.engine.forwardBackward(batch.data, 'ppo', clip);
        faultPoint('engine-gradients-sent');
        const step = await this.engine.optimStep({
          learningRate: lr,
          beta1: this.options.beta1,
          beta2: this.options.beta2,
          eps: this.options.epsilon ?? 1e-8,
          weightDecay: this.options.weightDecay,
          gradClipNorm: Number.isFinite(o.gradClip) ? o.gradClip : 0,
        });
        const stats = surrogateStats(batch, result.logprobs, o.clipRatio);
        sums.loss += reducedLoss(this.engine.capabilities.reduction, result.elementwiseLoss, batch.weightSums);
        sums.clipFrac += stats.clipFrac;
        sums.approxKl += stats.approxKl;
        const norm = gradNormOf(step.metrics);
        if (norm !== null) {
          sums.gradNorm += norm;
          sums.gradNorms++;
        }
        updates++;
        tokens += batch.tokens;
      }
    }
    const next = output.state;
    if (next !== undefined) this.estimatorState = { runningBaseline: Math.fround(next.runningBaseline), batches: next.batches };
    if (this.klController !== null && klCoef > 0) {
      this.klController.update(klReward, trajectories.length);
      this.klController.coef = Math.fround(this.klController.coef);
    }
    const staleness = stalenessOf(trajectories, this.version);
    this.version++;
    this.registry.set(this.version, await this.engine.saveWeightsForSampler(this.samplerName(this.version)));
    const seconds = (this.clock.now() - started) / 1000;
    const mean = (x: number): number => (updates > 0 ? x / updates : 0);
    const advantages = maskedStats(output.advantages, layout.mask);
    const absolute = maskedStats(output.advantages.map(Math.abs), layout.mask);
    const returns = maskedStats(output.returns, layout.mask);
    return {
      'loss/policy': mean(sums.loss),
      'loss/clipFrac': mean(sums.clipFrac),
      'loss/dualClipFrac': 0,
      'loss/approxKl': mean(sums.approxKl),
      'loss/klRef': 0,
      'loss/entropy': Number.NaN,
      'loss/total': mean(sums.loss),
      'optim/gradNorm': sums.gradNorms > 0 ? sums.gradNorm / sums.gradNorms : Number.NaN,
      'optim/lr': lr,
      'kl/coef': klCoef,
      'kl/reward': klReward,
      'advantage/mean': advantages.mean,
      'advantage/absMean': absolute.mean,
      'advantage/std': advantages.std,
      'advantage/min': advantages.min,
      'advantage/max': advantages.max,
      'return/mean': returns.mean,
      'return/std': returns.std,
      'return/min': returns.min,
      'return/max': returns.max,
      'policy/staleness': staleness,
      'policy/version': this.version,
      'throughput/trainTokensPerSec': seconds > 0 ? tokens / seconds : 0,
    };
  }

  /** What resumes this trainer (the weights and optimizer live on the engine): version, estimator and KL state. */
  getState(): TrainerState {
    const state: TrainerState = { version: this.version, optimizer: [] };
    if (this.estimatorState !== undefined) {
      state.optimizer.push({ name: 'estimator/runningBaseline', shape: [], data: Float32Array.of(this.estimatorState.runningBaseline) });
      state.optimizer.push({ name: 'estimator/batches', shape: [], data: Float32Array.of(this.estimatorState.batches) });
    }
    if (this.klController !== null) state.optimizer.push({ name: 'kl/coef', shape: [], data: Float32Array.of(this.klController.coef) });
    return state;
  }

  /** Restores what {@link getState} returned. */
  setState(state: TrainerState): void {
    const byName = new Map(state.optimizer.map((a) => [a.name, a]));
    const baseline = byName.get('estimator/runningBaseline');
    const batches = byName.get('estimator/batches');
    this.estimatorState = baseline && batches ? { runningBaseline: baseline.data[0] as number, batches: batches.data[0] as number } : undefined;
    const coef = byName.get('kl/coef');
    const target = this.options.klTarget ?? null;
    this.klController = coef === undefined || target === null ? null : new KlController({ coef: coef.data[0] as number, target, horizon: this.options.klHorizon ?? 10_000 });
    this.version = state.version;
  }

  /** Nothing to free here: the engine is closed by its owner. */
  dispose(): void {}

  /** The coefficient in force: the adaptive controller's (started at `o.klCoef`) or `o.klCoef`. */
  private klCoefFor(o: TrainStepOptions): number {
    const target = this.options.klTarget ?? null;
    if (target === null || o.klCoef === 0) return o.klCoef;
    this.klController ??= new KlController({ coef: Math.fround(o.klCoef), target, horizon: this.options.klHorizon ?? 10_000 });
    return this.klController.coef;
  }

  /** One optimizer update's data: advantages scaled so the server's reduction gives `o.lossAggregation`. */
  private batchOf(chunk: readonly LocatedDatum[], advantages: Float32Array, T: number, o: TrainStepOptions): StepBatch | null {
    const slots: Slot[] = [];
    const masks: number[] = [];
    const sequenceIds: number[] = [];
    chunk.forEach((l, d) => {
      for (let j = 0; j < l.positions.length; j++) {
        slots.push({ datum: d, position: l.positions[j] as number, layoutIndex: (l.trajectoryIndex[j] as number) * T + (l.tokenIndex[j] as number) });
        masks.push(l.lossMask[j] as number);
        sequenceIds.push(l.trajectoryIndex[j] as number);
      }
    });
    const mask = Float32Array.from(masks);
    const tokens = masks.reduce((a, m) => a + m, 0);
    if (tokens === 0) return null;
    const aggregation = aggregationWeights(mask, Int32Array.from(sequenceIds), o.lossAggregation);
    const weightSums = chunk.map((l) => l.datum.weights.reduce((a, w) => a + w, 0));
    const data: EngineDatum[] = chunk.map((l) => ({ ...l.datum, advantages: new Float32Array(l.datum.inputTokens.length) }));
    const rule = this.engine.capabilities.reduction;
    slots.forEach((slot, k) => {
      if (mask[k] === 0) return;
      const scale = reductionScale(rule, aggregation[k] as number, chunk.length, weightSums[slot.datum] as number);
      (data[slot.datum]?.advantages as Float32Array)[slot.position] = (advantages[slot.layoutIndex] as number) * scale;
    });
    return { data, slots, mask, advantages, weightSums, tokens };
  }
}

/** One optimizer update's data and how to read its results. */
interface StepBatch {
  readonly data: EngineDatum[];
  readonly slots: readonly Slot[];
  /** [k] 1 where the target trains. */
  readonly mask: Float32Array;
  /** [B·T] unscaled advantages of the step's layout. */
  readonly advantages: Float32Array;
  readonly weightSums: readonly number[];
  readonly tokens: number;
}

/** Clip fraction and approximate KL (k3) of the update, token means over its trained targets, from the pre-update log-probs the engine returned. */
function surrogateStats(batch: StepBatch, logprobs: readonly Float32Array[], clipRatio: number): { clipFrac: number; approxKl: number } {
  let clipFrac = 0;
  let approxKl = 0;
  batch.slots.forEach((slot, k) => {
    if (batch.mask[k] === 0) return;
    const datum = batch.data[slot.datum] as EngineDatum;
    const lp = (logprobs[slot.datum] as Float32Array)[slot.position] as number;
    const old = (datum.samplingLogprobs as Float32Array)[slot.position] as number;
    const a = 1 / batch.tokens;
    const advantage = batch.advantages[slot.layoutIndex] as number;
    const ratio = Math.exp(lp - old);
    if ((advantage > 0 && ratio > 1 + clipRatio) || (advantage < 0 && ratio < 1 - clipRatio)) clipFrac += a;
    approxKl += a * (ratio - 1 - (lp - old));
  });
  return { clipFrac, approxKl };
}

/** The gradient norm an engine reports under whatever name it uses (SkyRL: `skyrl.ai/grad_norm`), else null. */
function gradNormOf(metrics: Readonly<Record<string, number>>): number | null {
  for (const [name, value] of Object.entries(metrics)) if (/grad_?norm/i.test(name) && Number.isFinite(value)) return value;
  return null;
}

/** Mean versions-behind of every trained token, against the version that trains on it. */
function stalenessOf(trajectories: readonly Trajectory[], version: number): number {
  let count = 0;
  let staleness = 0;
  for (const t of trajectories) {
    for (const turn of t.turns) {
      const trained = turn.actionLossMask.reduce((a, m) => a + (m ? 1 : 0), 0);
      count += trained;
      staleness += trained * (version - turn.policyVersion);
    }
  }
  return count > 0 ? staleness / count : 0;
}
