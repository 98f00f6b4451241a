/**
 * `turnwise experiment horizon <config>`: the ScalingInter-RL comparison (fixed short, fixed long,
 * stepwise, adaptive) over several seeds with equal step budgets. Registered on the main program by
 * {@link registerExperimentCommand}.
 */
import type { Command } from 'commander';
import { InvalidArgumentError as CommanderArgumentError } from 'commander';

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new CommanderArgumentError(`expected a positive integer, got '${value}'`);
  return n;
}

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
    .action(async (configPath: string, opts: { seeds?: number; steps?: number; parallel: number; out: string; reportOnly?: boolean }) => {
      const stop = new AbortController();
      process.once('SIGINT', () => {
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
        log: (line) => console.log(line),
        signal: stop.signal,
      });
      console.log(`\n${result.table}\n`);
      console.log(`results: ${result.resultsPath}${result.figures.length > 0 ? `; figures: ${result.figures.join(', ')}` : ''}`);
      if (result.outcomes.some((o) => o.status === 'failed')) process.exitCode = 1;
    });
}
