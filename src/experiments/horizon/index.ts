/**
 * `turnwise experiment horizon`: plan the runs, train the missing ones in parallel child
 * processes, then write `<out>/results.md` (table + figures) from the run stores.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFigures } from './plots.js';
import { differencesTable, markdownTable, type RunCurves, readRunCurves, summarizeVariants } from './report.js';
import { type RunOutcome, isCompleted, planExperiment, runPlan } from './runner.js';

/** What to run. */
export interface HorizonExperimentOptions {
  readonly configPath: string;
  readonly outDir: string;
  readonly seeds?: number | undefined;
  readonly steps?: number | undefined;
  readonly parallel: number;
  /** Only rebuild the report from runs already there. */
  readonly reportOnly?: boolean;
  readonly log: (line: string) => void;
  readonly signal?: AbortSignal;
}

/** What the experiment produced. */
export interface HorizonExperimentResult {
  readonly outcomes: readonly RunOutcome[];
  readonly table: string;
  readonly resultsPath: string;
  readonly figures: readonly string[];
}

/**
 * Runs the experiment end to end.
 * @example await runHorizonExperiment({ configPath: 'configs/babyai-horizon.yaml', outDir: 'runs/horizon-exp', parallel: 2, log: console.log });
 */
export async function runHorizonExperiment(options: HorizonExperimentOptions): Promise<HorizonExperimentResult> {
  const plan = planExperiment(options);
  const started = Date.now();
  options.log(
    `${plan.variants.length} variants (${plan.variants.map((v) => v.name).join(', ')}) x ${plan.seeds.length} seeds (${plan.seeds.join(', ')}), ${plan.steps} steps each, ${options.reportOnly ? 'report only' : `${options.parallel} in parallel`} -> ${plan.outDir}`,
  );
  const outcomes = options.reportOnly ? [] : await runPlan(plan, { parallel: options.parallel, log: options.log, ...(options.signal ? { signal: options.signal } : {}) });
  const runs: RunCurves[] = plan.runs.filter((r) => isCompleted(r.runDir)).map((r) => readRunCurves(r.runDir, r.variant, r.seed));
  const names = plan.variants.map((v) => v.name);
  const summaries = summarizeVariants(names, runs, 10);
  const table = `${markdownTable(summaries, 10)}\n\n${differencesTable(summaries)}`;
  mkdirSync(plan.outDir, { recursive: true });
  const figures = runs.length > 0 ? writeFigures(plan.outDir, names, runs) : [];
  const variantLines = plan.variants.map((v) => `- \`${v.name}\`: \`${JSON.stringify(v.horizon)}\``);
  const minutes = ((Date.now() - started) / 60000).toFixed(1);
  const text = [
    `# Horizon experiment: ${options.configPath}`,
    '',
    `${runs.length}/${plan.runs.length} runs completed; ${plan.steps} steps each; seeds ${plan.seeds.join(', ')}; this invocation took ${minutes} min.`,
    '',
    'Variants:',
    ...variantLines,
    '',
    table,
    '',
    ...figures.map((f) => `![${f}](${f.slice(plan.outDir.length + 1)})`),
    '',
  ].join('\n');
  const resultsPath = join(plan.outDir, 'results.md');
  writeFileSync(resultsPath, text);
  return { outcomes, table, resultsPath, figures };
}
