/**
 * Evaluates a saved policy: loads a checkpoint (and its run's config), serves it with a sampler
 * actor over an in-process bus, and runs the split's fixed evaluation episodes — the same code
 * path as the evaluations during training, so the numbers are comparable.
 */
import { dirname } from 'node:path';
import { createActor } from 'xstate';
import { withSamplerEffects } from '../actors/sampler.js';
import { systemClock } from '../core/clock.js';
import { Rng } from '../core/rng.js';
import type { Split } from '../core/types.js';
// Registers every built-in environment, so callers need not import them themselves.
import '../envs/index.js';
import { getEnvironmentSpec } from '../envs/registry.js';
import { describeBackend, selectBackend } from '../models/backend/select.js';
import { loadCheckpoint, resolveCheckpointDir } from '../models/checkpoint.js';
import { type EvaluationResult, evaluatePolicy } from './evaluate.js';
import { MemoryBus } from './memory-bus.js';
import { buildPolicyStack } from './policy-stack.js';
import { RolloutRunner } from './rollout.js';
import { loadRunConfig } from './run-folder.js';
import { serveSampler } from './wiring.js';

/** Options of {@link evalRun}. */
export interface EvalRunOptions {
  readonly split: Split;
  /** Tasks to evaluate (default: the run's `train.evalTasks`). */
  readonly tasks?: number;
  /** Argmax decoding instead of sampling at the run's temperature. */
  readonly greedy?: boolean;
}

/** An evaluation of a checkpoint. */
export interface EvalRunResult extends EvaluationResult {
  readonly checkpointDir: string;
  /** Training steps the checkpoint had completed. */
  readonly step: number;
  readonly backend: string;
}

/**
 * Evaluates the latest checkpoint of a run folder (or a checkpoint folder).
 * @example const result = await evalRun('runs/babyai-grpo', { split: 'test' });
 */
export async function evalRun(location: string, options: EvalRunOptions): Promise<EvalRunResult> {
  const checkpointDir = await resolveCheckpointDir(location);
  const runDir = dirname(dirname(checkpointDir));
  const config = await loadRunConfig(runDir);
  const backend = await selectBackend(config.model.backend);
  const checkpoint = await loadCheckpoint(checkpointDir);
  const spec = getEnvironmentSpec(config.env.name);
  const settings = config.env.settings as Record<string, unknown>;
  const stack = await buildPolicyStack(config, spec, checkpoint);
  const bus = new MemoryBus({ clock: systemClock });
  const runId = 'eval';
  const rng = Rng.fromSeed(config.seed).fork('eval-sampler');
  const sampling = { temperature: config.sampling.temperature, topP: config.sampling.topP, maxNewTokens: config.sampling.maxActionTokens };
  const sampler = createActor(
    withSamplerEffects({
      generate: (requests) =>
        options.greedy ? stack.policy.greedyActions(requests, sampling.maxNewTokens) : stack.policy.sampleActions(requests, sampling, rng),
      loadWeights: async () => {},
    }),
    { input: { maxBatch: config.runtime.samplerMaxBatch, maxWaitMs: config.runtime.samplerMaxWaitMs, policyVersion: stack.policy.version } },
  ).start();
  const served = serveSampler(bus, runId, sampler);
  const runner = new RolloutRunner({
    bus,
    runId,
    spec,
    envSettings: settings,
    poolSize: Math.max(config.derived.episodesPerStep, 16),
    tokenizer: stack.tokenizer,
    context: {
      history: config.context.history,
      includeInstruction: config.context.includeInstruction,
      maxContextTokens: config.model.maxContext - config.sampling.maxActionTokens,
    },
    constrained: config.sampling.constrained,
    envTimeoutMs: config.runtime.envTimeoutMs,
    actTimeoutMs: config.runtime.requestTimeoutMs,
    clock: systemClock,
  });
  try {
    const result = await evaluatePolicy({
      config,
      catalog: spec.catalog({ settings }),
      runner,
      split: options.split,
      tasks: options.tasks ?? config.train.evalTasks,
      step: checkpoint.step,
    });
    return { ...result, checkpointDir, step: checkpoint.step, backend: describeBackend(backend) };
  } finally {
    await runner.close();
    served.close();
    sampler.stop();
    await bus.close();
    stack.dispose();
  }
}
