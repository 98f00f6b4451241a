/**
 * `turnwise export <runDir> --format tensorboard|csv|jsonl [--out <path>]`: a run's metrics for
 * TensorBoard, pandas or anything that reads CSV or JSON lines (`src/store/export/`).
 */
import type { Command } from 'commander';

/**
 * Adds `turnwise export` to the program.
 * @example registerExportCommand(program);
 */
export function registerExportCommand(program: Command): void {
  program
    .command('export')
    .description('export a run\'s metrics: TensorBoard event file, wide CSV (one row per step) or JSON lines')
    .argument('<runDir>', 'run folder (its run.db is read read-only)')
    .requiredOption('--format <format>', 'tensorboard, csv or jsonl')
    .option('--out <path>', 'tensorboard: folder for the event file (default <runDir>/export); csv/jsonl: file (default <runDir>/metrics.<format>)')
    .option('--json', 'print what was written as JSON')
    .action(async (runDir: string, opts: { format: string; out?: string; json?: boolean }) => {
      const { exportRun } = await import('../store/export/export-run.js');
      const result = exportRun(runDir, opts.format, opts.out);
      if (opts.json) console.log(JSON.stringify(result, null, 2));
      else {
        console.log(`wrote ${result.path}: ${result.steps} steps, ${result.metrics.length} metrics`);
        if (result.format === 'tensorboard') console.log(`view with: tensorboard --logdir ${runDir}`);
      }
    });
}
