#!/usr/bin/env node
/**
 * The `turnwise` command. commander (the most used Node CLI parser, typed, no runtime deps) turns
 * argv into calls of the same functions tests use.
 */
import { Command, InvalidArgumentError as CommanderArgumentError } from 'commander';
import { loadConfig, resolveConfig } from '../core/config.js';
import { TurnwiseError } from '../core/errors.js';
import { listEnvironments } from '../envs/registry.js';
import { loadRunConfig } from '../runtime/run-folder.js';
import { trainRun } from '../runtime/train-run.js';
import { evalCommand } from './eval-command.js';
import { TrainProgress } from './progress.js';

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new CommanderArgumentError(`expected a positive integer, got '${value}'`);
  return n;
}

const program = new Command('turnwise')
  .description('Actor-model RL runtime for multi-turn agents in text environments')
  .showHelpAfterError();

program
  .command('train')
  .description('train an agent from a YAML config, or resume a run folder')
  .argument('[config]', 'YAML config (e.g. configs/babyai-grpo.yaml)')
  .option('--resume <runDir>', 'continue this run folder from its latest checkpoint')
  .option('--steps <n>', 'override train.steps (with --resume: extend the run to n steps)', positiveInt)
  .option('--run-dir <dir>', 'write the run to exactly this folder')
  .action(async (configPath: string | undefined, opts: { resume?: string; steps?: number; runDir?: string }) => {
    if (!configPath && !opts.resume) throw new CommanderArgumentError('give a config file, or --resume <runDir>');
    const withSteps = <T extends { train: { steps: number } }>(c: T): T => (opts.steps ? { ...c, train: { ...c.train, steps: opts.steps } } : c);
    const config = opts.resume ? await loadRunConfig(opts.resume, withSteps) : resolveConfig(withSteps(loadConfig(configPath as string)));
    const progress = new TrainProgress(config.train.steps);
    const stop = new AbortController();
    process.once('SIGINT', () => {
      progress.log('stopping after the current phase (checkpointing)… press Ctrl-C again to abort');
      stop.abort();
      process.once('SIGINT', () => process.exit(130));
    });
    const result = await trainRun({
      config,
      ...(opts.resume ? { resumeDir: opts.resume } : {}),
      ...(opts.runDir ? { runDir: opts.runDir } : {}),
      onEvent: (event) => progress.handle(event),
      signal: stop.signal,
    });
    progress.stop();
    const first = result.evals[0];
    const last = result.evals[result.evals.length - 1];
    if (first && last && last !== first) {
      console.log(`held-out success: ${first.successRate.toFixed(3)} (step ${first.step}) -> ${last.successRate.toFixed(3)} (step ${last.step})`);
    }
    console.log(`run ${result.status} after ${result.completedSteps} steps: ${result.runDir}`);
    if (result.status === 'failed') {
      console.error(`error: ${result.error}`);
      process.exitCode = 1;
    }
  });

program
  .command('eval')
  .description('evaluate a run folder or checkpoint on a split of its environment')
  .argument('<runOrCheckpoint>', 'run folder (its latest checkpoint) or checkpoint folder')
  .option('--split <split>', 'train or test', 'test')
  .option('--tasks <n>', 'number of tasks', positiveInt)
  .option('--greedy', 'argmax decoding instead of sampling')
  .option('--json', 'print the result as JSON')
  .action(async (location: string, opts: { split: string; tasks?: number; greedy?: boolean; json?: boolean }) => {
    if (opts.split !== 'train' && opts.split !== 'test') throw new CommanderArgumentError(`--split must be train or test, got '${opts.split}'`);
    await evalCommand(location, { split: opts.split, tasks: opts.tasks, greedy: opts.greedy === true, json: opts.json === true });
  });

program
  .command('envs')
  .description('list the registered environments')
  .action(() => {
    for (const spec of listEnvironments()) console.log(`${spec.name.padEnd(12)} ${spec.description}`);
  });

program.parseAsync(process.argv).catch((err: unknown) => {
  if (err instanceof TurnwiseError) {
    console.error(`${err.name}: ${err.message}`);
    process.exit(2);
  }
  throw err;
});
