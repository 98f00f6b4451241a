/**
 * Step 2 of a training run: the actors of the picture, started on one in-process bus — the sampler
 * (batches every live episode's act request into one forward pass), the learner (trains on a step's
 * trajectories and publishes the new weights), the horizon scheduler (owns the max turns per
 * episode) and the rollout runner (the episode and env-session actors). Each `start…` function
 * registers how to stop what it started in `cleanups`, in start order.
 */
import { type Actor, createActor } from 'xstate';
import { currentHorizon, horizonMachine } from '../../actors/horizon.js';
import type { HorizonState } from '../../actors/horizon-schedule.js';
import { type HorizonSpec, scheduleForEnv } from '../../actors/horizon-per-env.js';
import { withLearnerEffects } from '../../actors/learner.js';
import { withSamplerEffects } from '../../actors/sampler.js';
import type { ResolvedConfig } from '../../core/config.js';
import { Rng } from '../../core/rng.js';
import type { Trajectory } from '../../core/types.js';
import { onAgentGymHealthReport } from '../../envs/agentgym/health.js';
import type { NamedTensors } from '../../models/checkpoint.js';
import { trainStepOptionsOf } from '../algorithm-setup.js';
import { MemoryBus } from '../../bus/memory-bus.js';
import { RolloutRunner } from '../rollout.js';
import { BackgroundEvaluation } from './background-eval.js';
import type { ServingPolicy } from '../../models/inference/serving-policy.js';
import { remoteTrain, serveLearner } from '../wiring/learner.js';
import { announceWeights, serveSampler } from '../wiring/sampler.js';
import type { OpenedRun } from './open-run.js';
import type { TrainRunOptions } from './types.js';

/** The sampler actor as the run drives it. */
export type SamplerActor = Actor<ReturnType<typeof withSamplerEffects>>;
/** The horizon scheduler actor. */
export type HorizonActor = Actor<typeof horizonMachine>;

/** The running parts of a training run. */
export interface TrainingActors {
  readonly bus: MemoryBus;
  readonly sampler: SamplerActor;
  readonly horizon: HorizonActor;
  readonly runner: RolloutRunner;
  /**
   * Runs the held-out evaluations: in the background (beside the next step's rollout), a runner
   * of its own on a bus of its own, served by a sampler of its own (`RunStack.evaluationPolicy`);
   * else {@link runner}.
   */
  readonly evalRunner: RolloutRunner;
  /** Brings the evaluation's sampler to the learner's current weights (nothing in the foreground: the sampler has them). */
  prepareEvaluation(): Promise<void>;
  /** The evaluation in flight in the background, or null when evaluations run in the foreground. */
  readonly background: BackgroundEvaluation | null;
  /** Asks the learner (over the bus) to train one step. */
  readonly train: ReturnType<typeof remoteTrain>;
  /** Prompt plus sampled tokens since the last reset (the rollout's sampling throughput). */
  readonly sampledTokens: { count: number };
  /** Completed steps, as the health reports log them. */
  readonly progress: { step: number };
  /** The horizon now (max agent turns of an episode starting now; a lowerHorizon alarm's cap applied). */
  currentHorizon(): number;
  /** Stops what was started, in reverse order (the runner first). */
  close(): Promise<void>;
}

/**
 * Starts every actor of the run on a fresh in-process bus.
 * @example const actors = startTrainingActors(run, options); … await actors.close();
 */
export function startTrainingActors(run: OpenedRun, options: TrainRunOptions): TrainingActors {
  const bus = new MemoryBus({ clock: run.clock });
  const cleanups: (() => void)[] = [];
  const sampledTokens = { count: 0 };
  const progress = { step: run.startStep };
  const evaluationPolicy = evaluatesInBackground(run.config, options) ? (run.stack.evaluationPolicy?.() ?? null) : null;
  const background = evaluationPolicy === null ? null : new BackgroundEvaluation();
  const sampler = startSampler(run, bus, run.stack.policy, sampledTokens, cleanups);
  startLearner(run, bus, sampler, options, background, cleanups);
  const horizon = startHorizon(run, cleanups);
  watchAgentGymHealth(run, progress, cleanups);
  const runner = rolloutRunnerOf(run, bus);
  const evaluation = evaluationPolicy === null ? null : startEvaluationSide(run, evaluationPolicy, cleanups);
  return {
    bus,
    sampler,
    horizon,
    runner,
    evalRunner: evaluation?.runner ?? runner,
    prepareEvaluation: evaluation?.prepare ?? (async () => {}),
    background,
    train: remoteTrain(bus, run.runId, 3_600_000),
    sampledTokens,
    progress,
    currentHorizon: () => run.alarms.capHorizon(currentHorizon(horizon.getSnapshot())),
    async close() {
      await runner.close();
      await evaluation?.runner.close();
      for (const cleanup of cleanups.reverse()) cleanup();
      await bus.close();
      await evaluation?.close();
    },
  };
}

/**
 * The evaluation's side of a run whose evaluations run in the background: a bus, a sampler over
 * `policy` and a rollout runner, all its own, so that no evaluation request shares a batch with a
 * training one. `prepare` loads the learner's current weights when the sampler has older ones.
 */
function startEvaluationSide(run: OpenedRun, policy: ServingPolicy, cleanups: (() => void)[]): { runner: RolloutRunner; prepare(): Promise<void>; close(): Promise<void> } {
  const bus = new MemoryBus({ clock: run.clock });
  const own: (() => void)[] = [];
  const sampler = startSampler(run, bus, policy, { count: 0 }, own);
  const runner = rolloutRunnerOf(run, bus);
  cleanups.push(() => {
    for (const cleanup of own.reverse()) cleanup();
  });
  return {
    runner,
    async prepare() {
      const version = run.stack.trainer.version;
      if (sampler.getSnapshot().context.policyVersion === version) return;
      const loaded = waitForWeights(sampler, version);
      announceWeights(bus, run.runId, version, run.stack.samplerWeights());
      await loaded;
    },
    async close() {
      await bus.close();
      await policy.close();
    },
  };
}

function startSampler(run: OpenedRun, bus: MemoryBus, policy: ServingPolicy, sampledTokens: { count: number }, cleanups: (() => void)[]): SamplerActor {
  const { config } = run;
  const samplerRng = Rng.fromSeed(config.seed).fork('sampler');
  const sampling = { temperature: config.sampling.temperature, topP: config.sampling.topP, maxNewTokens: config.sampling.maxActionTokens };
  const sampler = createActor(
    withSamplerEffects({
      generate: async (requests) => {
        const results = await policy.sampleActions(requests, sampling, samplerRng);
        for (let i = 0; i < requests.length; i++) sampledTokens.count += (requests[i]?.contextTokens.length ?? 0) + (results[i]?.tokens.length ?? 0);
        return results;
      },
      loadWeights: (version, weights) => policy.loadWeights(version, weights as NamedTensors),
      release: (episodeIds) => policy.releaseEpisodes(episodeIds),
    }),
    { input: { maxBatch: config.runtime.samplerMaxBatch, maxWaitMs: config.runtime.samplerMaxWaitMs, policyVersion: policy.version, ...samplerTimeouts(config) }, clock: run.clock },
  ).start();
  cleanups.push(serveSampler(bus, run.runId, sampler).close, () => sampler.stop());
  return sampler;
}

function startLearner(run: OpenedRun, bus: MemoryBus, sampler: SamplerActor, options: TrainRunOptions, background: BackgroundEvaluation | null, cleanups: (() => void)[]): void {
  const { config, stack, runId } = run;
  const trainOptions = trainStepOptionsOf(config);
  const learner = createActor(
    withLearnerEffects({
      train: async (_step, trajectories: readonly Trajectory[]) => {
        const metrics = await stack.trainer.trainStep(trajectories, trainOptions);
        return { metrics, version: stack.trainer.version };
      },
      publishWeights: async (version) => {
        if (config.mode !== 'sync') return; // the asynchronous loop publishes (src/runtime/async/async-train.ts)
        // The evaluation of the previous weights samples with them to its end. (No await without one: the
        // announcement stays in the learner's own call stack, where the message-flow test finds its sender.)
        if (background !== null) await background.settled();
        const loaded = waitForWeights(sampler, version);
        const weights = stack.samplerWeights();
        announceWeights(bus, runId, version, weights);
        await Promise.all([loaded, options.distributed?.publishWeights(version, weights)]);
      },
    }),
    { input: { version: stack.trainer.version }, clock: run.clock },
  ).start();
  cleanups.push(serveLearner(bus, runId, learner).close, () => learner.stop());
}

/** The horizon scheduler (ScalingInter-RL when stepwise), its stage changes logged as run events. */
function startHorizon(run: OpenedRun, cleanups: (() => void)[]): HorizonActor {
  const { config, store, emit } = run;
  const restoredHorizon = run.checkpoint?.state.horizon as HorizonState | undefined;
  const horizon = createActor(horizonMachine, {
    // A per-env horizon section resolves to this run's environment (one env per run today).
    input: { schedule: scheduleForEnv(config.horizon as HorizonSpec, config.env.name), ...(restoredHorizon ? { restore: restoredHorizon } : {}) },
    clock: run.clock,
  }).start();
  const stageSub = horizon.on('STAGE_CHANGED', (e) => {
    store.logEvent(e.step + 1, 'horizon/stage', `horizon ${e.from} -> ${e.to} (${e.reason})`, { ...e });
    emit({ type: 'info', message: `horizon stage ${e.from} -> ${e.to}: ${e.horizon} turns (${e.reason})` });
  });
  cleanups.push(() => stageSub.unsubscribe(), () => horizon.stop());
  return horizon;
}

/** Remote AgentGym servers' health (failing/recovered, failed and recreated sessions) -> run events, shown by `turnwise ui`. */
function watchAgentGymHealth(run: OpenedRun, progress: { step: number }, cleanups: (() => void)[]): void {
  if (run.config.env.name !== 'agentgym' || typeof run.settings.url !== 'string') return;
  const stopHealth = onAgentGymHealthReport(
    (r) => {
      run.store.logEvent(progress.step, 'agentgym/health', r.message, r);
      run.emit({ type: 'info', message: r.message });
    },
    { url: run.settings.url },
  );
  cleanups.push(stopHealth);
}

/**
 * Whether the held-out evaluations run in the background: `train.evalOverlap`, mode sync (the asynchronous loops
 * evaluate between their own phases), with evaluations at all, and on this process's runner (a
 * distributed rollout's episodes run elsewhere).
 */
function evaluatesInBackground(config: ResolvedConfig, options: TrainRunOptions): boolean {
  return config.train.evalOverlap && config.mode === 'sync' && config.train.evalEvery > 0 && options.distributed === undefined;
}

function rolloutRunnerOf(run: OpenedRun, bus: MemoryBus): RolloutRunner {
  const { config } = run;
  return new RolloutRunner({
    bus,
    runId: run.runId,
    spec: run.spec,
    envSettings: run.settings,
    poolSize: config.derived.episodesPerStep,
    envWorkers: config.env.workers,
    text: run.stack.text,
    maxActionTokens: config.sampling.maxActionTokens,
    constrained: config.sampling.constrained,
    actions: config.context.actions,
    envTimeoutMs: config.runtime.envTimeoutMs,
    actTimeoutMs: config.runtime.requestTimeoutMs,
    clock: run.clock,
    ...run.shaping,
  });
}

/** Sampler timeouts in the asynchronous modes (a lost reply fails a batch or a load instead of hanging); none in sync mode, as before. */
function samplerTimeouts(config: ResolvedConfig): { loadTimeoutMs?: number; generateTimeoutMs?: number } {
  return config.mode === 'sync' ? {} : { loadTimeoutMs: config.async.weightSyncTimeoutMs, generateTimeoutMs: config.runtime.requestTimeoutMs };
}

/**
 * Resolves when the sampler reports weights `version` loaded (or rejects if loading failed).
 * @example await waitForWeights(sampler, 3);
 */
export function waitForWeights(
  sampler: { on(type: 'WEIGHTS_LOADED' | 'WEIGHTS_FAILED', handler: (e: { type: string; version?: number; error?: string }) => void): { unsubscribe(): void } },
  version: number,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const subs = [
      sampler.on('WEIGHTS_LOADED', (e) => {
        if (e.version !== version) return;
        for (const s of subs) s.unsubscribe();
        resolve();
      }),
      sampler.on('WEIGHTS_FAILED', (e) => {
        for (const s of subs) s.unsubscribe();
        reject(new Error(`sampler failed to load weights ${version}: ${e.error ?? 'unknown error'}`));
      }),
    ];
  });
}
