/**
 * `turnwise experiment horizon <config>`: the ScalingInter-RL comparison (fixed short, fixed long,
 * stepwise, adaptive) over several seeds with equal step budgets. Registered on the main program by
 * {@link registerExperimentCommand}.
 */
import type { Command } from 'commander';
import { EXIT, exitCodeForSignal } from './exit-codes.js';
import { positiveInt } from './values.js';

/**
 * Adds `experiment horizon` to the CLI.
 * @example registerExperimentCommand(program);
 */
export function registerExperimentCommand(program: Command): void {
  const experiment = program.command('experiment').description('experiments that compare training set-ups over several seeds');
  experiment
    .command('horizon')
    .description('ScalingInter-RL: train fixed-short, fixed-long, stepwise and adaptive horizon schedules over seeds; write a table and plots')
    .argument('<config>', 'base YAML config; variants come from its horizon section or its experiment: section')
    .option('--seeds <n>', 'seeds per variant (default: experiment.seeds, else 3)', positiveInt)
    .option('--steps <n>', 'training steps per run (default: experiment.steps, else train.steps)', positiveInt)
    .option('--parallel <n>', 'training processes at a time', positiveInt, 2)
    .option('--out <dir>', 'experiment folder (configs/, runs/, logs/, results.md, figures)', 'runs/horizon-experiment')
    .option('--report-only', 'rebuild the table and figures from the completed runs, train nothing')
    .option('--json', 'print the result (table, outcomes, files) as JSON')
    .action(async (configPath: string, opts: { seeds?: number; steps?: number; parallel: number; out: string; reportOnly?: boolean; json?: boolean }) => {
      let interrupted = false;
      const stop = new AbortController();
      process.once('SIGINT', () => {
        interrupted = true;
        console.error('stopping: interrupting the running trainings (they checkpoint); re-run the same command to finish');
        stop.abort();
      });
      // Loaded on use: the experiment pulls in ECharts and resvg, which `turnwise train` (and every
      // child run the experiment spawns) should not pay for at start-up.
      const { runHorizonExperiment } = await import('../experiments/horizon/index.js');
      const result = await runHorizonExperiment({
        configPath,
        outDir: opts.out,
        seeds: opts.seeds,
        steps: opts.steps,
        parallel: opts.parallel,
        reportOnly: opts.reportOnly ?? false,
        log: (line) => (opts.json ? console.error(line) : console.log(line)),
        signal: stop.signal,
      });
      if (opts.json) {
        const outcomes = result.outcomes.map((o) => ({ run: o.run.name, runDir: o.run.runDir, status: o.status, seconds: o.seconds, exitCode: o.exitCode }));
        console.log(JSON.stringify({ table: result.table, resultsPath: result.resultsPath, figures: result.figures, outcomes }, null, 2));
      } else {
        console.log(`\n${result.table}\n`);
        console.log(`results: ${result.resultsPath}${result.figures.length > 0 ? `; figures: ${result.figures.join(', ')}` : ''}`);
      }
      if (interrupted) process.exitCode = exitCodeForSignal('SIGINT');
      else if (result.outcomes.some((o) => o.status === 'failed')) process.exitCode = EXIT.failure;
    });
}
