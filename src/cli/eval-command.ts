/**
 * `turnwise eval`: prints a held-out table (overall and per category) for a checkpoint.
 */
import type { Split } from '../core/types.js';
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
    console.log(JSON.stringify({ checkpoint: result.checkpointDir, step: result.step, split: options.split, summary: result.summary, perCategory: result.perCategory }, null, 2));
    return;
  }
  console.log(`${result.backend} | checkpoint ${result.checkpointDir} (step ${result.step}) | ${options.split} split, ${options.greedy ? 'greedy' : 'sampled'}`);
  console.log('| category | episodes | success | mean turns | truncated | error |');
  console.log('|---|---|---|---|---|---|');
  for (const [name, summary] of Object.entries(result.perCategory)) console.log(row(name, summary));
  console.log(row('**all**', result.summary));
}
