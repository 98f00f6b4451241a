/**
 * Evaluates a saved policy: loads a checkpoint (and its run's config), serves it with a sampler
 * actor over an in-process bus, and runs the split's fixed evaluation episodes — the same code
 * path as the evaluations during training, so the numbers are comparable. The checkpoint agent
 * itself is the one `turnwise eval` uses for comparisons (`src/runtime/agents.ts`).
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { systemClock } from '../core/clock.js';
import type { Split } from '../core/types.js';
// Registers every built-in environment, so callers need not import them themselves.
import '../envs/index.js';
import { getEnvironmentSpec } from '../envs/registry.js';
import { checkpointConfig, isHfModelFolder, openAgent } from './agents.js';
import { checkpointSpec } from './policy-spec.js';
import { RunStore } from '../store/run-store.js';
import { type EvaluationResult, evaluatePolicy } from './evaluate.js';
import { runLiveness } from './run-lock.js';

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
  /**
   * Status of the run the checkpoint belongs to: `stale` when it is marked running but its writer
   * died (the checkpoint is then the last one it saved), null when the folder has no run store.
   */
  readonly runStatus: { readonly status: string; readonly writerPid: number | null } | null;
  /** Training steps the checkpoint had completed. */
  readonly step: number;
  readonly backend: string;
}

/** The status of the run in `runDir` as a reader should show it, or null without a run store. */
function runStatusOf(runDir: string): EvalRunResult['runStatus'] {
  if (!existsSync(join(runDir, 'run.db'))) return null;
  const store = RunStore.open(runDir, { readonly: true });
  try {
    const stored = store.run()?.status;
    if (stored === undefined) return null;
    const { status, writer } = runLiveness(runDir, stored);
    return { status, writerPid: writer?.pid ?? null };
  } finally {
    store.close();
  }
}

/**
 * Evaluates the latest checkpoint of a run folder (or a checkpoint folder).
 * @example const result = await evalRun('runs/babyai-grpo', { split: 'test' });
 */
export async function evalRun(location: string, options: EvalRunOptions): Promise<EvalRunResult> {
  const { config } = await checkpointConfig(location);
  const spec = getEnvironmentSpec(config.env.name);
  const settings = config.env.settings as Record<string, unknown>;
  const agent = await openAgent(checkpointSpec(location, options.greedy === true), { spec, envSettings: settings, clock: systemClock });
  try {
    const checkpoint = agent.checkpoint;
    if (!checkpoint) throw new Error('unreachable: a checkpoint agent always describes its checkpoint');
    const result = await evaluatePolicy({
      config,
      catalog: spec.catalog({ settings }),
      runner: agent.runner,
      split: options.split,
      tasks: options.tasks ?? config.train.evalTasks,
      step: checkpoint.step,
    });
    const runStatus = (await isHfModelFolder(location)) ? null : runStatusOf(dirname(dirname(checkpoint.dir)));
    return { ...result, checkpointDir: checkpoint.dir, step: checkpoint.step, backend: checkpoint.backend, runStatus };
  } finally {
    await agent.close();
  }
}
