/**
 * A trained policy for `turnwise simulate --policy checkpoint:<dir>`: the checkpoint's model served
 * by a sampler actor on an in-process bus (dynamic batching over every live episode), with as many
 * env sessions as simulated agents — the same path as `turnwise eval`, sized for the simulation.
 */
import { createActor } from 'xstate';
import { withSamplerEffects } from '../../actors/sampler.js';
import type { Clock } from '../../core/clock.js';
import { InvalidArgumentError } from '../../core/errors.js';
import { Rng } from '../../core/rng.js';
import type { EnvironmentSpec } from '../../envs/environment.js';
import { checkpointConfig } from '../../eval/agents.js';
import { describeBackend, selectBackend } from '../../models/backend/select.js';
import { loadCheckpoint } from '../../models/checkpoint.js';
import { MemoryBus } from '../memory-bus.js';
import { buildPolicyStack } from '../policy-stack.js';
import { RolloutRunner } from '../rollout.js';
import { serveSampler } from '../wiring.js';

/** A runner playing a checkpoint, and how to release it. */
export interface CheckpointRunner {
  readonly runner: RolloutRunner;
  readonly description: string;
  close(): Promise<void>;
}

/**
 * Opens `location` (a run folder or checkpoint folder) as a runner with `poolSize` sessions.
 * @example const { runner, close } = await openCheckpointRunner('runs/babyai-grpo', spec, settings, 200, 0, systemClock);
 */
export async function openCheckpointRunner(
  location: string,
  spec: EnvironmentSpec,
  envSettings: Readonly<Record<string, unknown>>,
  poolSize: number,
  envWorkers: number,
  clock: Clock,
): Promise<CheckpointRunner> {
  const { checkpointDir, config } = await checkpointConfig(location);
  if (config.env.name !== spec.name) {
    throw InvalidArgumentError.format('--policy', `checkpoint ${checkpointDir} was trained on '${config.env.name}', the simulation runs '${spec.name}'`);
  }
  const backend = await selectBackend(config.model.backend);
  const checkpoint = await loadCheckpoint(checkpointDir);
  const stack = await buildPolicyStack(config, spec, checkpoint);
  const bus = new MemoryBus({ clock });
  const runId = 'simulate';
  // Unused when every request carries its own seed (the runner gives each turn one).
  const rng = Rng.fromSeed(config.seed).fork('simulate-sampler');
  const sampling = { temperature: config.sampling.temperature, topP: config.sampling.topP, maxNewTokens: config.sampling.maxActionTokens };
  const sampler = createActor(
    withSamplerEffects({ generate: (requests) => stack.policy.sampleActions(requests, sampling, rng), loadWeights: async () => {} }),
    { input: { maxBatch: config.runtime.samplerMaxBatch, maxWaitMs: config.runtime.samplerMaxWaitMs, policyVersion: stack.policy.version }, clock },
  ).start();
  const served = serveSampler(bus, runId, sampler);
  const runner = new RolloutRunner({
    bus,
    runId,
    spec,
    envSettings,
    poolSize,
    envWorkers,
    tokenizer: stack.tokenizer,
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
  return {
    runner,
    description: `checkpoint ${checkpointDir} (step ${checkpoint.step}, T=${sampling.temperature}, ${describeBackend(backend)})`,
    async close() {
      await runner.close();
      served.close();
      sampler.stop();
      await bus.close();
      stack.dispose();
    },
  };
}
