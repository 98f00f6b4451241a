/**
 * A trained checkpoint playing `turnwise simulate`'s episodes on the flow path (issue #20): the
 * flow driver and its event-driven episode machines, the sampler actor's dynamic batching, and the
 * model itself in inference worker threads (`runtime.inferenceWorkers` of the checkpoint's run), so
 * the main thread only routes — actors, context building, batching, environment batches — and its
 * event loop stays responsive however many episodes wait on the model.
 */
import { dirname } from 'node:path';
import { createActor } from 'xstate';
import { withSamplerEffects } from '../../actors/sampler.js';
import type { Clock } from '../../core/clock.js';
import type { ResolvedConfig } from '../../core/config.js';
import { InvalidArgumentError, TurnwiseError } from '../../core/errors.js';
import type { ActRequest, ActResult } from '../../core/policy.js';
import { Rng } from '../../core/rng.js';
import type { EnvironmentSpec } from '../../envs/environment.js';
import { describeBackend, selectBackend } from '../../backend/select.js';
import { loadCheckpoint, resolveCheckpointDir } from '../../models/checkpoint.js';
import { InferencePool } from '../../models/inference/inference-pool.js';
import type { ServingPolicy } from '../../models/inference/serving-policy.js';
import { createBatchEnv } from '../env-pool/batch-env.js';
import { buildPolicyStack } from '../policy-stack.js';
import { loadRunConfig } from '../run-folder.js';
import { FlowDriver } from './flow-driver.js';
import { modelFlowPolicy } from './model-flow-policy.js';

/** What the simulation needs of the checkpoint's player. */
export interface CheckpointFlow {
  readonly description: string;
  readonly envPlacement: string;
  readonly driver: FlowDriver;
  close(): Promise<void>;
}

/** Options of {@link openCheckpointFlow}. */
export interface CheckpointFlowOptions {
  /** A run folder or checkpoint folder. */
  readonly location: string;
  readonly spec: EnvironmentSpec;
  readonly envSettings: Readonly<Record<string, unknown>>;
  readonly lanes: number;
  readonly horizon: number;
  readonly envWorkers: number;
  readonly envTimeoutMs: number;
  readonly clock: Clock;
  /** Inference workers (default: the checkpoint run's `runtime.inferenceWorkers`); 0 samples on this thread (turnwise's own model; a pretrained one always does). */
  readonly inferenceWorkers?: number;
  /** Most environment ops per batch (bounds how long one answer holds the event loop). Default 256. */
  readonly maxEnvBatch?: number;
  /** Keep every turn in the trajectories (tests); off by default. */
  readonly recordTurns?: boolean;
}

/** Resolves a run or checkpoint folder and reads the run config next to it. */
async function runOf(location: string): Promise<{ dir: string; config: ResolvedConfig }> {
  const dir = await resolveCheckpointDir(location);
  return { dir, config: await loadRunConfig(dirname(dirname(dir))) };
}

/**
 * `act` straight to the sampler actor, no bus: one ACT_BATCH event per wave of turns (each request
 * answered by its ACT_DONE / ACT_FAILED). One event per wave because the sampler copies its queue
 * on every event, and ten thousand episodes may wait in it.
 */
function directAct(sampler: ReturnType<typeof createSampler>): (requests: readonly ActRequest[]) => Promise<ActResult[]> {
  const waiting = new Map<string, { resolve: (r: ActResult) => void; reject: (e: Error) => void }>();
  let next = 0;
  sampler.on('ACT_DONE', (e) => {
    waiting.get(e.requestId)?.resolve(e.result);
    waiting.delete(e.requestId);
  });
  sampler.on('ACT_FAILED', (e) => {
    waiting.get(e.requestId)?.reject(new TurnwiseError(e.error));
    waiting.delete(e.requestId);
  });
  return (requests) => {
    const acts = requests.map((request) => ({ requestId: `sim-${next++}`, request }));
    const answers = acts.map(({ requestId }) => new Promise<ActResult>((resolve, reject) => waiting.set(requestId, { resolve, reject })));
    sampler.send({ type: 'ACT_BATCH', acts });
    return Promise.all(answers);
  };
}

function createSampler(serving: ServingPolicy, config: ResolvedConfig, clock: Clock) {
  const sampling = { temperature: config.sampling.temperature, topP: config.sampling.topP, maxNewTokens: config.sampling.maxActionTokens };
  // Unused: every request carries its own per-turn seed.
  const rng = Rng.fromSeed(config.seed).fork('simulate-sampler');
  return createActor(
    withSamplerEffects({
      generate: (requests) => serving.sampleActions(requests, sampling, rng),
      loadWeights: async () => {},
      release: (episodeIds) => serving.releaseEpisodes(episodeIds),
    }),
    {
      input: { maxBatch: config.runtime.samplerMaxBatch, maxWaitMs: config.runtime.samplerMaxWaitMs, policyVersion: serving.version, generateTimeoutMs: config.runtime.requestTimeoutMs },
      clock,
    },
  ).start();
}

/**
 * Opens the checkpoint at `location` as a flow driver over `lanes` concurrent episodes: the run's
 * policy stack as an evaluation opens it (turnwise's own model samples in inference workers, a
 * pretrained one on this thread), its text side building the contexts.
 * @throws InvalidArgumentError naming `--policy` when the checkpoint was trained on another environment.
 * @example const flow = await openCheckpointFlow({ location: 'runs/babyai-grpo', spec, envSettings, lanes: 2000, horizon: 5, envWorkers: 0, envTimeoutMs: 30_000, clock });
 */
export async function openCheckpointFlow(options: CheckpointFlowOptions): Promise<CheckpointFlow> {
  const { spec, envSettings, clock, horizon } = options;
  const run = await runOf(options.location);
  const { dir } = run;
  if (run.config.env.name !== spec.name) {
    throw InvalidArgumentError.format('--policy', `checkpoint ${dir} was trained on '${run.config.env.name}', the simulation runs '${spec.name}'`);
  }
  const config: ResolvedConfig =
    options.inferenceWorkers === undefined ? run.config : { ...run.config, runtime: { ...run.config.runtime, inferenceWorkers: options.inferenceWorkers } };
  const backend = describeBackend(await selectBackend(config.model.backend, { matmul: config.model.matmul }));
  const checkpoint = await loadCheckpoint(dir);
  const stack = await buildPolicyStack(config, spec, checkpoint);
  const serving = stack.policy;
  const sampler = createSampler(serving, config, clock);
  const probe = spec.create({ settings: envSettings });
  const instruction = probe.instruction();
  void probe.close();
  const policy = modelFlowPolicy({
    description: `checkpoint ${dir}`,
    act: directAct(sampler),
    release: (episodeIds) => sampler.send({ type: 'RELEASE', episodeIds }),
    text: stack.text,
    instruction,
    constrained: config.sampling.constrained,
    maxActionTokens: config.sampling.maxActionTokens,
    horizon,
  });
  const env = createBatchEnv(spec, envSettings, options.envWorkers);
  const driver = new FlowDriver({ env, policy, envName: spec.name, lanes: options.lanes, step: 0, horizon, envTimeoutMs: options.envTimeoutMs, clock, maxBatch: options.maxEnvBatch ?? 256, recordTurns: options.recordTurns === true });
  const workersBackend = serving instanceof InferencePool ? await serving.backend() : backend;
  return {
    description: `checkpoint ${dir} (step ${checkpoint.step}, T=${config.sampling.temperature}, ${workersBackend}, sampling: ${serving.placement})`,
    envPlacement: env.description,
    driver,
    async close() {
      sampler.stop();
      await env.close();
      await stack.close();
    },
  };
}
