/**
 * Assembles and runs one training job on the embedded default: every actor of the picture in
 * DESIGN.md, connected over an in-process bus exactly as `src/runtime/wiring.ts` lists.
 *
 * Randomness: every stream derives from `config.seed` and the step or episode it serves
 * (`rng.fork('tasks', step)`, per-episode and per-turn seeds), never from a shared mutable stream.
 * A resumed run therefore needs only the step count, the weights, the optimizer and the horizon
 * state to continue the same curves.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createActor, type Subscription, toPromise } from 'xstate';
import { type CoordinatorEffects, type CoordinatorOutput, withCoordinatorEffects } from '../actors/coordinator.js';
import { currentHorizon, horizonMachine, persistHorizon } from '../actors/horizon.js';
import type { HorizonState } from '../actors/horizon-schedule.js';
import { evalHorizonFor, type HorizonSpec, scheduleForEnv } from '../actors/horizon-per-env.js';
import { withLearnerEffects } from '../actors/learner.js';
import { withSamplerEffects } from '../actors/sampler.js';
import { type Clock, systemClock } from '../core/clock.js';
import type { ResolvedConfig } from '../core/config.js';
import { Rng } from '../core/rng.js';
import type { Trajectory } from '../core/types.js';
// Registers every built-in environment, so callers need not import them themselves.
import '../envs/index.js';
import { getEnvironmentSpec } from '../envs/registry.js';
import { onAgentGymHealthReport } from '../envs/agentgym/health.js';
import { describeBackend, selectBackend } from '../models/backend/select.js';
import { loadCheckpoint, type NamedTensors, resolveCheckpointDir, saveCheckpoint } from '../models/checkpoint.js';
import { RunStore } from '../store/run-store.js';
import { MemoryBus } from './memory-bus.js';
import { trainStepOptionsOf } from './algorithm-setup.js';
import { buildPolicyStack, optimizerTensors } from './policy-stack.js';
import { evaluatePolicy } from './evaluate.js';
import { RolloutRunner, type EpisodePlan } from './rollout.js';
import { failIfAllEpisodesFailed } from './rollout-health.js';
import { rolloutMetrics } from './rollout-metrics.js';
import type { RunEvent } from './run-events.js';
import { type ClaimedRunFolder, claimRunFolder, newRunId, saveRunConfig } from './run-folder.js';
import { remoteTrain, serveLearner } from './wiring/learner.js';
import { announceWeights, serveSampler } from './wiring/sampler.js';
import { asyncSettingsOf, runAsyncTraining } from './async/async-train.js';
import { withDeadline } from './async/deadline.js';
import { restoreStaleness, type StalenessState } from './async/staleness.js';
import { writeFileAtomic } from '../core/atomic-file.js';
import { CheckpointError, InvalidArgumentError } from '../core/errors.js';
import { faultPoint } from '../core/fault-point.js';

/** How to run. */
export interface TrainRunOptions {
  readonly config: ResolvedConfig;
  /** Continue the run in this folder from its latest checkpoint (the config must be the run's). */
  readonly resumeDir?: string;
  /** Use exactly this folder for a new run; default: a fresh `<run.dir>/<run.name>[-k]`. It must hold no run unless `force`. */
  readonly runDir?: string;
  /** Id of a new run (default: `newRunId(run.name)`); a resumed run keeps the one in its store. */
  readonly runId?: string;
  /** Start over in a `runDir` that holds a run: its run.db, config.json, tokenizer.json and checkpoints/ are deleted first. */
  readonly force?: boolean;
  readonly onEvent?: (event: RunEvent) => void;
  /** Aborting stops the run after the current phase, with a checkpoint (Ctrl-C). */
  readonly signal?: AbortSignal;
  readonly clock?: Clock;
  /**
   * Runs the episodes in other processes (the NATS assembly, `src/runtime/nats/nats-train-run.ts`);
   * absent: everything in-process, as before.
   */
  readonly distributed?: DistributedRollout;
}

/** How a distributed run reaches its workers; the coordinator, learner and evaluation stay here. */
export interface DistributedRollout {
  /** Once the store and the models exist: publish what workers need to join, and the first weights. */
  start(run: { readonly runId: string; readonly store: RunStore; readonly tokenizerJson: unknown; readonly version: number; readonly weights: NamedTensors }): Promise<void>;
  /** Runs a step's plans on the workers; the trajectories come back committed to the store, in plan order. */
  rollout(step: number, horizon: number, plans: readonly EpisodePlan[]): Promise<Trajectory[]>;
  /** Hands weights `version` to the remote samplers. */
  publishWeights(version: number, weights: NamedTensors): Promise<void>;
  /** A checkpoint at `completedSteps` is durable: what only a resume from earlier would need can go. */
  checkpointed?(completedSteps: number): Promise<void>;
  /** The run ended with this status. */
  finish(status: 'completed' | 'interrupted' | 'failed'): Promise<void>;
}

/** What a finished run reports. */
export interface TrainRunResult {
  readonly runDir: string;
  readonly runId: string;
  readonly status: 'finished' | 'stopped' | 'failed';
  readonly completedSteps: number;
  readonly error: string | null;
  /** Held-out evaluations in order: completed steps (0 = untrained) and success rate. */
  readonly evals: readonly { readonly step: number; readonly successRate: number; readonly meanTurns: number }[];
}

/**
 * Episodes of training step `step`: `tasksPerStep` train tasks, `groupSize` samples each. Trajectory
 * ids are `<runId>/s<step>/t<task>/g<sample>`: unique across runs, so a stream, a store or a
 * message-id window shared with another run never takes one run's episode for another's.
 */
export function trainPlans(config: ResolvedConfig, trainIndices: readonly number[], step: number, runId: string): EpisodePlan[] {
  const root = Rng.fromSeed(config.seed);
  const taskRng = root.fork('tasks', step);
  const seedRng = root.fork('episodes', step);
  const plans: EpisodePlan[] = [];
  for (let t = 0; t < config.algorithm.tasksPerStep; t++) {
    const taskIndex = trainIndices[taskRng.int(trainIndices.length)] as number;
    const taskId = `${config.env.name}_${taskIndex}`;
    const groupId = `s${step}/t${t}`;
    for (let g = 0; g < config.algorithm.groupSize; g++) {
      plans.push({ taskId, taskIndex, groupId, trajectoryId: `${runId}/${groupId}/g${g}`, seed: seedRng.int(0x7fffffff) });
    }
  }
  return plans;
}

/**
 * Runs (or resumes) a training job to its configured number of steps. The run folder is held
 * (one writer: `./run-lock.ts`) from before anything is read or written until the run ends.
 * @example const result = await trainRun({ config: resolveConfig(loadConfig('configs/babyai-grpo.yaml')) });
 */
export async function trainRun(options: TrainRunOptions): Promise<TrainRunResult> {
  const { config } = options;
  if (config.mode !== 'sync' && options.distributed) {
    throw InvalidArgumentError.format('mode', `'${config.mode}' runs on the in-process bus only for now (issue 9); use mode 'sync' with a distributed rollout`);
  }
  const folder = await claimRunFolder(options, config.run);
  try {
    return await trainInFolder(options, folder);
  } finally {
    folder.lock.release();
  }
}

async function trainInFolder(options: TrainRunOptions, folder: ClaimedRunFolder): Promise<TrainRunResult> {
  const { config } = options;
  const { runDir, resuming } = folder;
  const clock = options.clock ?? systemClock;
  const emit = options.onEvent ?? (() => {});
  const backend = await selectBackend(config.model.backend, { matmul: config.model.matmul });
  const spec = getEnvironmentSpec(config.env.name);
  const settings = config.env.settings as Record<string, unknown>;
  const catalog = spec.catalog({ settings });
  const trainIndices = catalog.indices(config.env.trainSplit as 'train');

  let checkpointFallback: string | null = null;
  // A run killed before its first checkpoint starts over from step 0 (seeded, so the same run).
  const checkpointsWritten = resuming && (await readdir(join(runDir, 'checkpoints')).catch(() => [] as string[])).some((e) => e === 'latest' || e.startsWith('step-'));
  if (resuming && !checkpointsWritten) checkpointFallback = 'no checkpoint was written yet; starting the run over from step 0 with its stored config';
  const checkpoint = checkpointsWritten
    ? await loadCheckpoint(
        await resolveCheckpointDir(runDir, {
          onFallback: (message) => {
            checkpointFallback = message;
          },
        }),
      )
    : null;
  const startStep = checkpoint?.step ?? 0;
  const stack = await buildPolicyStack(config, spec, checkpoint);
  const { tokenizer, trainer, policy, samplerModel, learnerModel } = stack;
  // Checked before anything is written: a bad `state.async` fails the resume with the field named.
  const restoredStaleness = restoreStaleness(checkpoint?.state.async, trainer.version, asyncSettingsOf(config).maxStaleness, runDir);

  const store = RunStore.open(runDir);
  // A resumed run keeps its id (the store's one run; older folders used the sanitized name).
  const runId = resuming ? store.runId : (options.runId ?? newRunId(config.run.name));
  if (runId === null) throw new CheckpointError(runDir, 'run.db holds no run to resume');
  if (!resuming) {
    store.createRun({ id: runId, name: config.run.name, createdAt: Date.now(), config, backend: backend.name, seed: config.seed });
    await saveRunConfig(runDir, config);
    await writeFileAtomic(join(runDir, 'tokenizer.json'), JSON.stringify(tokenizer.toJSON()));
  }
  if (folder.lock.tookOverFrom !== null) {
    const w = folder.lock.tookOverFrom;
    const message = `took over the run folder from pid ${w.pid} on ${w.host} (${w.command} since ${w.since}), which is no longer running`;
    store.logEvent(startStep, 'run/takeover', message, w);
    emit({ type: 'info', message });
  }
  if (checkpointFallback !== null) {
    store.logEvent(startStep, 'checkpoint/fallback', checkpointFallback);
    emit({ type: 'info', message: `resume: ${checkpointFallback}` });
  }
  store.setRunStatus('running');

  const bus = new MemoryBus({ clock });
  const cleanups: (() => void)[] = [];

  // Sampler: batches act requests from every live episode into one forward pass.
  const samplerRng = Rng.fromSeed(config.seed).fork('sampler');
  const sampling = { temperature: config.sampling.temperature, topP: config.sampling.topP, maxNewTokens: config.sampling.maxActionTokens };
  let sampledTokens = 0;
  const sampler = createActor(
    withSamplerEffects({
      generate: async (requests) => {
        const results = await policy.sampleActions(requests, sampling, samplerRng);
        for (let i = 0; i < requests.length; i++) sampledTokens += (requests[i]?.contextTokens.length ?? 0) + (results[i]?.tokens.length ?? 0);
        return results;
      },
      loadWeights: async (version, weights) => {
        samplerModel.loadNamedWeights(weights as NamedTensors);
        policy.setVersion(version);
      },
      release: (episodeIds) => policy.releaseEpisodes(episodeIds),
    }),
    { input: { maxBatch: config.runtime.samplerMaxBatch, maxWaitMs: config.runtime.samplerMaxWaitMs, policyVersion: policy.version, ...samplerTimeouts(config) }, clock },
  ).start();
  cleanups.push(serveSampler(bus, runId, sampler).close, () => sampler.stop());

  // Learner: trains on a step's trajectories, then publishes the new weights to the samplers.
  const trainOptions = trainStepOptionsOf(config);
  const learner = createActor(
    withLearnerEffects({
      train: async (_step, trajectories) => {
        const metrics = await trainer.trainStep(trajectories, trainOptions);
        return { metrics, version: trainer.version };
      },
      publishWeights: async (version) => {
        if (config.mode !== 'sync') return; // the asynchronous loop publishes (src/runtime/async/async-train.ts)
        const loaded = waitForWeights(sampler, version);
        const weights = learnerModel.namedWeights();
        announceWeights(bus, runId, version, weights);
        await Promise.all([loaded, options.distributed?.publishWeights(version, weights)]);
      },
    }),
    { input: { version: trainer.version }, clock },
  ).start();
  cleanups.push(serveLearner(bus, runId, learner).close, () => learner.stop());
  const train = remoteTrain(bus, runId, 3_600_000);

  // Horizon scheduler: owns the max turns per episode (ScalingInter-RL when stepwise).
  const restoredHorizon = checkpoint?.state.horizon as HorizonState | undefined;
  const horizon = createActor(horizonMachine, {
    // A per-env horizon section resolves to this run's environment (one env per run today).
    input: { schedule: scheduleForEnv(config.horizon as HorizonSpec, config.env.name), ...(restoredHorizon ? { restore: restoredHorizon } : {}) },
    clock,
  }).start();
  const stageSub: Subscription = horizon.on('STAGE_CHANGED', (e) => {
    store.logEvent(e.step + 1, 'horizon/stage', `horizon ${e.from} -> ${e.to} (${e.reason})`, { ...e });
    emit({ type: 'info', message: `horizon stage ${e.from} -> ${e.to}: ${e.horizon} turns (${e.reason})` });
  });
  cleanups.push(() => stageSub.unsubscribe(), () => horizon.stop());

  // Remote AgentGym servers' health (failing/recovered, failed and recreated sessions) -> run events, shown by `turnwise ui`.
  let healthStep = startStep;
  if (config.env.name === 'agentgym' && typeof settings.url === 'string') {
    const stopHealth = onAgentGymHealthReport((r) => {
      store.logEvent(healthStep, 'agentgym/health', r.message, r);
      emit({ type: 'info', message: r.message });
    }, { url: settings.url });
    cleanups.push(stopHealth);
  }

  const runner = new RolloutRunner({
    bus,
    runId,
    spec,
    envSettings: settings,
    poolSize: config.derived.episodesPerStep,
    envWorkers: config.env.workers,
    tokenizer,
    context: {
      history: config.context.history,
      includeInstruction: config.context.includeInstruction,
      maxContextTokens: config.model.maxContext - config.sampling.maxActionTokens,
    },
    constrained: config.sampling.constrained,
    envTimeoutMs: config.runtime.envTimeoutMs,
    actTimeoutMs: config.runtime.requestTimeoutMs,
    clock,
  });

  const evals: { step: number; successRate: number; meanTurns: number }[] = [];
  const evaluate = async (completedSteps: number): Promise<Record<string, number>> => {
    const evalHorizon = evalHorizonFor(config.horizon as HorizonSpec, config.env.name);
    const result = await evaluatePolicy({ config, catalog, runner, split: config.env.testSplit as 'test', tasks: config.train.evalTasks, step: completedSteps, ...(evalHorizon ? { horizon: evalHorizon } : {}) });
    store.recordTrajectories(runId, 'test', result.trajectories);
    const metrics = { 'eval/successRate': result.summary.successRate, 'eval/meanTurns': result.summary.meanTurns };
    store.logMetrics(completedSteps, metrics);
    evals.push({ step: completedSteps, successRate: result.summary.successRate, meanTurns: result.summary.meanTurns });
    emit({ type: 'eval', step: completedSteps, split: config.env.testSplit, successRate: result.summary.successRate, meanTurns: result.summary.meanTurns, episodes: result.trajectories.length });
    return metrics;
  };

  emit({ type: 'info', message: `${describeBackend(backend)} | run folder ${runDir} | ${learnerModel.parameterCount} parameters, vocab ${tokenizer.vocabSize}` });
  await options.distributed?.start({ runId, store, tokenizerJson: tokenizer.toJSON(), version: trainer.version, weights: learnerModel.namedWeights() });
  if (startStep === 0 && config.train.evalEvery > 0) await evaluate(0);
  emit({ type: 'started', step: startStep, message: resuming ? `resuming at step ${startStep}` : `training ${config.train.steps} steps` });

  const pending = new Map<number, Record<string, number>>();
  let readAsyncState: (() => StalenessState) | null = null;
  const coordinatorEffects: CoordinatorEffects = {
      rollout: async (step) => {
        const started = clock.now();
        sampledTokens = 0;
        const plans = trainPlans(config, trainIndices, step, runId);
        const stepHorizon = currentHorizon(horizon.getSnapshot());
        const trajectories = options.distributed
          ? await options.distributed.rollout(step, stepHorizon, plans)
          : await runner.run(step, stepHorizon, plans);
        // A dead environment server fails the run here (resumable) instead of training on error episodes.
        failIfAllEpisodesFailed(`step ${step}`, trajectories);
        const seconds = (clock.now() - started) / 1000;
        pending.set(step, {
          ...rolloutMetrics(trajectories, seconds),
          'throughput/sampleTokensPerSec': seconds > 0 ? sampledTokens / seconds : 0,
          'horizon/current': currentHorizon(horizon.getSnapshot()),
          'horizon/stage': horizon.getSnapshot().context.stage,
        });
        return trajectories;
      },
      train: async (step, trajectories: readonly Trajectory[]) => {
        // Stored before training: what the learner trains on is already durable.
        store.recordTrajectories(runId, 'train', trajectories);
        faultPoint('trajectories-stored');
        const started = clock.now();
        const { metrics } = await train(step, trajectories);
        return { metrics: { ...pending.get(step), ...metrics, 'time/trainSec': (clock.now() - started) / 1000 } };
      },
      evaluate: async (step) => evaluate(step + 1),
      checkpoint: async (completedSteps) => {
        const state = await trainer.getState();
        const dir = await saveCheckpoint(runDir, {
          step: completedSteps,
          hfConfig: learnerModel.toHfConfig(),
          weights: learnerModel.namedWeights(),
          tokenizerJson: tokenizer.toJSON(),
          optimizer: optimizerTensors(state),
          state: {
            policyVersion: trainer.version,
            horizon: persistHorizon(horizon.getSnapshot()),
            seed: config.seed,
            backend: backend.name,
            ...(readAsyncState !== null ? { async: readAsyncState() } : {}),
          },
        });
        store.logEvent(completedSteps, 'checkpoint', `saved ${dir}`);
        await options.distributed?.checkpointed?.(completedSteps);
      },
      stepCompleted: async (step, metrics) => {
        pending.delete(step);
        healthStep = step + 1;
        store.logMetrics(step + 1, metrics);
        horizon.send({ type: 'STEP_COMPLETED', step, metrics });
        emit({ type: 'step', step: step + 1, metrics });
      },
  };
  const coordinator = createActor(withCoordinatorEffects(coordinatorEffects),
    {
      input: { startStep, totalSteps: config.train.steps, evalEvery: config.train.evalEvery, checkpointEvery: config.train.checkpointEvery },
      clock,
    },
  );
  let output: CoordinatorOutput;
  if (config.mode === 'sync') {
    const onAbort = () => coordinator.send({ type: 'STOP' });
    options.signal?.addEventListener('abort', onAbort);
    coordinator.start();
    if (options.signal?.aborted) onAbort(); // a signal that came while the run was being set up
    output = await toPromise(coordinator);
    options.signal?.removeEventListener('abort', onAbort);
  } else {
    // one-step-off / async: the same effects, driven by the asynchronous loop (src/runtime/async/).
    output = await runAsyncTraining({
      config,
      effects: coordinatorEffects,
      startStep,
      restored: restoredStaleness,
      plans: (step) => trainPlans(config, trainIndices, step, runId),
      horizon: () => currentHorizon(horizon.getSnapshot()),
      runEpisode: async (step, stepHorizon, plan) => (await runner.run(step, stepHorizon, [plan]))[0] as Trajectory,
      samplerVersion: () => sampler.getSnapshot().context.policyVersion,
      learnerVersion: () => trainer.version,
      publishWeights: async (version) => {
        const loaded = waitForWeights(sampler, version);
        announceWeights(bus, runId, version, learnerModel.namedWeights());
        await withDeadline(loaded, config.async.weightSyncTimeoutMs, clock, `the sampler to load weights ${version}`);
      },
      exposeState: (read) => {
        readAsyncState = read;
      },
      clock,
      ...(options.signal ? { signal: options.signal } : {}),
    });
  }

  const finalStatus = output.status === 'finished' ? 'completed' : output.status === 'stopped' ? 'interrupted' : 'failed';
  store.setRunStatus(finalStatus);
  await options.distributed?.finish(finalStatus);
  await runner.close();
  for (const cleanup of cleanups.reverse()) cleanup();
  await bus.close();
  store.close();
  await stack.close(); // frees the models and waits for the gradient workers (train.dataParallel) to exit
  return { runDir, runId, status: output.status, completedSteps: output.completedSteps, error: output.error, evals };
}

/** Sampler timeouts in the asynchronous modes (a lost reply fails a batch or a load instead of hanging); none in sync mode, as before. */
function samplerTimeouts(config: ResolvedConfig): { loadTimeoutMs?: number; generateTimeoutMs?: number } {
  return config.mode === 'sync' ? {} : { loadTimeoutMs: config.async.weightSyncTimeoutMs, generateTimeoutMs: config.runtime.requestTimeoutMs };
}

/** Resolves when the sampler reports weights `version` loaded (or rejects if loading failed). */
function waitForWeights(
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
