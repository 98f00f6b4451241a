/**
 * Opens one policy as a {@link RolloutRunner} that plays the chosen environment (for `evalRun`,
 * `turnwise simulate` and the comparison harness in `src/eval/`; it lives in the runtime layer
 * because it only assembles runtime parts — bus, sampler actor, policy stack — and the eval layer
 * builds on it, never the other way round):
 *
 * - a turnwise checkpoint: its model served by a sampler actor over an in-process bus (the same
 *   path as `evalRun` and the evaluations during training), token contexts built with the
 *   checkpoint's own context layout and sampling settings;
 * - a remote chat model: an {@link OpenAIChatPolicy} on the episode's text path.
 *
 * Either way the environment, its settings, the horizon and the episode seeds come from the
 * caller, so every policy of a comparison plays exactly the same episodes.
 */
import { stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createActor } from 'xstate';
import { withSamplerEffects } from '../actors/sampler.js';
import type { Clock } from '../core/clock.js';
import { parseConfig, type ResolvedConfig, resolveConfig } from '../core/config.js';
import { InvalidArgumentError } from '../core/errors.js';
import { Rng } from '../core/rng.js';
import type { EnvironmentSpec } from '../envs/environment.js';
import { describeBackend, selectBackend } from '../backend/select.js';
import { loadCheckpoint, resolveCheckpointDir } from '../models/checkpoint.js';
import { inspectHfModel } from '../models/hf/hf-model.js';
import { type OpenAIChatDeps, OpenAIChatPolicy, type UsageReport } from '../policies/openai-chat.js';
import { MemoryBus } from '../bus/memory-bus.js';
import { buildPolicyStack } from './policy-stack.js';
import { RolloutRunner } from './rollout.js';
import { loadRunConfig } from './run-folder.js';
import { serveSampler } from './wiring/sampler.js';
import type { PolicySpec } from './policy-spec.js';

/** A policy ready to play episodes. */
export interface EvalAgent {
  readonly runner: RolloutRunner;
  /** One line: what was evaluated (checkpoint and step, or endpoint and model). */
  readonly description: string;
  /** Token usage so far (remote policies). */
  usage(): UsageReport | null;
  /** For checkpoint policies: the resolved folder, its completed steps and the tensor backend. */
  readonly checkpoint?: { readonly dir: string; readonly step: number; readonly backend: string };
  close(): Promise<void>;
}

/** Where the episodes happen. */
export interface AgentPlayground {
  readonly spec: EnvironmentSpec;
  readonly envSettings: Readonly<Record<string, unknown>>;
  readonly clock: Clock;
  /** Injected I/O of remote policies (tests: sleep, env vars). */
  readonly remoteDeps?: OpenAIChatDeps;
  /** Episodes in flight (default: a checkpoint's episodes per step, at least 16; twice a remote policy's concurrency). */
  readonly poolSize?: number;
  /** Worker threads for the environment instances (`env.workers`; default in-process). */
  readonly envWorkers?: number;
  /** What a mismatch error names (default `policies.<name>`, e.g. `--policy` for `turnwise simulate`). */
  readonly field?: string;
  /** What the environment is used for, in error messages (default "the evaluation"). */
  readonly purpose?: string;
}

/** Longest context an evaluated Hugging Face folder gets by default (its own when shorter). */
export const HF_EVAL_CONTEXT = 2048;

/**
 * Whether `location` is a Hugging Face model folder (config.json) rather than a run or checkpoint.
 * @example await isHfModelFolder('models/SmolLM2-135M-Instruct') // true
 */
export async function isHfModelFolder(location: string): Promise<boolean> {
  const file = (name: string) => stat(join(location, name)).then((s) => s.isFile(), () => false);
  return (await file('config.json')) && !(await file('trainer_state.json')) && !(await file(join('checkpoints', 'latest')));
}

/**
 * A checkpoint's resolved folder and the config of the run it belongs to; for a Hugging Face model
 * folder (`eval models/SmolLM2-135M-Instruct`), the config a chat run of it would have on `env`
 * (default: the default config's environment): its own tokenizer and chat template, free-text
 * replies, AgentGym's layout, a context of its own length up to {@link HF_EVAL_CONTEXT}.
 */
export async function checkpointConfig(location: string, env?: { readonly name: string; readonly settings: Readonly<Record<string, unknown>> }): Promise<{ checkpointDir: string; config: ResolvedConfig; hf: boolean }> {
  if (await isHfModelFolder(location)) {
    const info = await inspectHfModel(location);
    const input = { env: env === undefined ? {} : { name: env.name, settings: { ...env.settings } }, model: { from: location, maxContext: Math.min(info.config.maxContext, HF_EVAL_CONTEXT) }, context: { format: 'chat' as const }, sampling: { constrained: false } };
    return { checkpointDir: location, config: resolveConfig(parseConfig(input, location)), hf: true };
  }
  const checkpointDir = await resolveCheckpointDir(location);
  return { checkpointDir, config: await loadRunConfig(dirname(dirname(checkpointDir))), hf: false };
}

/**
 * Opens a policy on the playground.
 * @example const agent = await openAgent(checkpointSpec('runs/babyai-grpo'), playground); … await agent.close();
 */
export async function openAgent(policy: PolicySpec, playground: AgentPlayground): Promise<EvalAgent> {
  return policy.kind === 'checkpoint' ? openCheckpointAgent(policy, playground) : openRemoteAgent(policy, playground);
}

async function openCheckpointAgent(policy: Extract<PolicySpec, { kind: 'checkpoint' }>, playground: AgentPlayground): Promise<EvalAgent> {
  const { spec, envSettings, clock } = playground;
  const { checkpointDir, config, hf } = await checkpointConfig(policy.location, { name: spec.name, settings: envSettings });
  if (config.env.name !== spec.name) {
    const field = playground.field ?? `policies.${policy.name}`;
    throw InvalidArgumentError.format(field, `checkpoint ${checkpointDir} was trained on '${config.env.name}', ${playground.purpose ?? 'the evaluation'} runs '${spec.name}'`);
  }
  const backend = await selectBackend(config.model.backend, { matmul: config.model.matmul });
  // A Hugging Face folder is evaluated as it is: its own weights, no checkpoint.
  const checkpoint = hf ? null : await loadCheckpoint(checkpointDir);
  const step = checkpoint?.step ?? 0;
  const stack = await buildPolicyStack(config, spec, checkpoint);
  const bus = new MemoryBus({ clock });
  const runId = 'eval';
  // Unused when every request carries its own seed (the runner gives each turn one).
  const rng = Rng.fromSeed(config.seed).fork('eval-sampler');
  const sampling = { temperature: config.sampling.temperature, topP: config.sampling.topP, maxNewTokens: config.sampling.maxActionTokens };
  const sampler = createActor(
    withSamplerEffects({
      generate: (requests) =>
        policy.greedy ? stack.policy.greedyActions(requests, sampling.maxNewTokens) : stack.policy.sampleActions(requests, sampling, rng),
      loadWeights: async () => {},
      release: (episodeIds) => stack.policy.releaseEpisodes(episodeIds),
    }),
    { input: { maxBatch: config.runtime.samplerMaxBatch, maxWaitMs: config.runtime.samplerMaxWaitMs, policyVersion: stack.policy.version }, clock },
  ).start();
  const served = serveSampler(bus, runId, sampler);
  const runner = new RolloutRunner({
    bus,
    runId,
    spec,
    envSettings,
    poolSize: playground.poolSize ?? Math.max(config.derived.episodesPerStep, 16),
    envWorkers: playground.envWorkers,
    text: stack.text,
    maxActionTokens: config.sampling.maxActionTokens,
    constrained: config.sampling.constrained,
    actions: config.context.actions,
    envTimeoutMs: config.runtime.envTimeoutMs,
    actTimeoutMs: config.runtime.requestTimeoutMs,
    clock,
  });
  return {
    runner,
    description: `${checkpointDir} (${hf ? 'Hugging Face model' : `step ${step}`}, ${policy.greedy ? 'greedy' : `T=${sampling.temperature}`}, ${describeBackend(backend)}, actions: ${runner.actionMode})`,
    usage: () => null,
    checkpoint: { dir: checkpointDir, step, backend: describeBackend(backend) },
    async close() {
      await runner.close();
      served.close();
      sampler.stop();
      await bus.close();
      await stack.close();
    },
  };
}

async function openRemoteAgent(policy: Extract<PolicySpec, { kind: 'remote' }>, playground: AgentPlayground): Promise<EvalAgent> {
  const { spec, envSettings, clock } = playground;
  const chat = new OpenAIChatPolicy(policy.config, playground.remoteDeps);
  const bus = new MemoryBus({ clock });
  const concurrency = policy.config.concurrency ?? 4;
  const timeoutMs = policy.config.timeoutMs ?? 120_000;
  const retries = policy.config.retry?.maxRetries ?? 5;
  const runner = new RolloutRunner({
    bus,
    runId: 'eval',
    spec,
    envSettings,
    // Twice the request limit: environment steps overlap with requests in flight.
    poolSize: playground.poolSize ?? concurrency * 2,
    envWorkers: playground.envWorkers,
    constrained: false,
    envTimeoutMs: 30_000,
    // One act may include every retry and its back-off (capped at 30 s each).
    actTimeoutMs: (timeoutMs + 30_000) * (retries + 1),
    clock,
    textPolicy: chat,
  });
  return {
    runner,
    description: `${policy.config.baseURL} model ${policy.config.model} (actions: ${runner.actionMode})`,
    usage: () => chat.usage(),
    async close() {
      await runner.close();
      await bus.close();
    },
  };
}
