/**
 * `turnwise eval`: with one run folder and no harness flags, the held-out table of that checkpoint
 * (overall and per category, as before); with `--policy`/`--remote`/`--policies`/`-n`…, the
 * evaluation harness comparing every policy on the same episodes (`src/eval/harness.ts`).
 */
import type { Split } from '../core/types.js';
// Registers the built-in environments (this module is loaded only when its command runs).
import '../envs/index.js';
import { evaluatePolicies, reportJson } from '../eval/harness.js';
import { checkpointSpec, loadPolicyFile, type PolicySpec, parseRemoteFlag } from '../runtime/policy-spec.js';
import { markdownReport } from '../eval/report.js';
import { evalRun } from '../runtime/eval-run.js';
import type { EpisodeSummary } from '../runtime/rollout-metrics.js';

function row(name: string, s: EpisodeSummary): string {
  return `| ${name} | ${s.episodes} | ${s.successRate.toFixed(3)} | ${s.meanTurns.toFixed(2)} | ${s.truncationRate.toFixed(3)} | ${s.errorRate.toFixed(3)} |`;
}

/**
 * Runs and prints an evaluation.
 * @example await evalCommand('runs/babyai-grpo', { split: 'test', greedy: false, json: false });
 */
export async function evalCommand(location: string, options: { split: Split; tasks?: number; greedy: boolean; json: boolean }): Promise<void> {
  const result = await evalRun(location, {
    split: options.split,
    greedy: options.greedy,
    ...(options.tasks !== undefined ? { tasks: options.tasks } : {}),
  });
  if (options.json) {
    console.log(JSON.stringify({ checkpoint: result.checkpointDir, step: result.step, runStatus: result.runStatus?.status ?? null, split: options.split, summary: result.summary, perCategory: result.perCategory }, null, 2));
    return;
  }
  const run = result.runStatus;
  const runNote = run === null ? '' : run.status === 'stale' ? ` | run stale (its writer${run.writerPid === null ? '' : `, pid ${run.writerPid},`} is gone; resume it with train --resume)` : ` | run ${run.status}`;
  console.log(`${result.backend} | checkpoint ${result.checkpointDir} (step ${result.step})${runNote} | ${options.split} split, ${options.greedy ? 'greedy' : 'sampled'}`);
  console.log('| category | episodes | success | mean turns | truncated | error |');
  console.log('|---|---|---|---|---|---|');
  for (const [name, summary] of Object.entries(result.perCategory)) console.log(row(name, summary));
  console.log(row('**all**', result.summary));
}

/** Options of {@link compareCommand} (the `turnwise eval` flags of the evaluation harness). */
export interface CompareCommandOptions {
  /** `--policy` values and positional run folders / checkpoints. */
  readonly checkpoints: readonly string[];
  /** `--remote` values. */
  readonly remotes: readonly string[];
  /** `--policies` YAML file. */
  readonly policyFile?: string;
  readonly env?: string;
  readonly split: Split;
  readonly tasks?: number;
  readonly samples: number;
  readonly horizon?: number;
  readonly seed?: number;
  readonly greedy: boolean;
  readonly json: boolean;
  readonly out?: string;
}

/**
 * Evaluates several policies (checkpoints and OpenAI-compatible endpoints) on the same episodes
 * and prints one comparison table (or `--json`); the trajectories go to a run folder.
 * @example await compareCommand({ checkpoints: ['runs/babyai-grpo'], remotes: ['qwen=http://localhost:8000/v1,model=qwen'], split: 'test', samples: 4, greedy: false, json: false });
 */
export async function compareCommand(options: CompareCommandOptions): Promise<void> {
  const policies: PolicySpec[] = [
    ...options.checkpoints.map((location) => checkpointSpec(location, options.greedy)),
    ...options.remotes.map(parseRemoteFlag),
    ...(options.policyFile !== undefined ? loadPolicyFile(options.policyFile) : []),
  ];
  const report = await evaluatePolicies({
    policies,
    split: options.split,
    samples: options.samples,
    ...(options.env !== undefined ? { env: options.env } : {}),
    ...(options.tasks !== undefined ? { tasks: options.tasks } : {}),
    ...(options.horizon !== undefined ? { horizon: options.horizon } : {}),
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
    ...(options.out !== undefined ? { runDir: options.out } : {}),
    onPolicyDone: (r) => {
      if (!options.json) console.error(`${r.name}: ${r.summary.overall.samples} episodes in ${r.seconds.toFixed(1)} s`);
    },
  });
  console.log(options.json ? JSON.stringify(reportJson(report), null, 2) : markdownReport(report));
}
