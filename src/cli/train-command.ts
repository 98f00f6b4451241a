/**
 * `turnwise train <config> | --resume <runDir>`: trains (in-process, or with `--nats` on worker
 * processes), drawing progress on the terminal, and ends with the run folder and the commands that
 * follow from it. `--json` prints one JSON result on stdout and the progress on stderr.
 */
import { dirname } from 'node:path';
import type { Command } from 'commander';
import type { ResolvedConfig } from '../core/config.js';
import { redactCredentials } from '../core/redact.js';
import type { RunEvent } from '../runtime/run-events.js';
import type { TrainRunResult } from '../runtime/train/train-run.js';
import { EXIT, exitCodeForSignal, UsageError } from './exit-codes.js';
import { stopOnSignals } from './stop-signals.js';
import { NATS_FLAG_HELP, type NatsFlags, natsOptionsOf } from './nats-flags.js';
import type { TrainProgress } from './progress.js';
import { collect, positiveInt } from './values.js';

interface TrainFlags extends Partial<NatsFlags> {
  readonly resume?: string;
  readonly steps?: number;
  readonly runDir?: string;
  readonly set: string[];
  readonly json?: boolean;
  readonly planAckWaitMs?: number;
  readonly force?: boolean;
  readonly replaceNatsRun?: boolean;
  readonly workerWaitMs?: number;
}

/**
 * The commands a user runs next on a finished run folder (printed after training; the README shows
 * them for the quickstart's first run folder).
 * @example followUps('runs/babyai-grpo-2', 60) // ['turnwise eval runs/babyai-grpo-2 --split test', …]
 */
export function followUps(runDir: string, completedSteps: number): string[] {
  return [
    `turnwise eval ${runDir} --split test`,
    `turnwise train --resume ${runDir} --steps ${completedSteps + 20}`,
    `turnwise export ${runDir} --format tensorboard`,
    `turnwise ui --runs ${dirname(runDir)}`,
  ];
}

/**
 * Adds `turnwise train` to the program.
 * @example registerTrainCommand(program);
 */
export function registerTrainCommand(program: Command): void {
  const train = program
    .command('train')
    .description('train an agent from a YAML config, or resume a run folder')
    .argument('[config]', 'YAML config (e.g. configs/babyai-grpo.yaml)')
    .option('--set <key=value>', 'override one config field, e.g. --set algorithm.lr=1e-4 --set env.settings.levels=[GoToLocal] (repeatable; YAML values; validated like the file)', collect, [])
    .option('--resume <runDir>', 'continue this run folder from its latest checkpoint, with its own config')
    .option('--steps <n>', 'set train.steps (with --resume: extend the run to n steps)', positiveInt)
    .option('--run-dir <dir>', 'write the run to exactly this folder (default: <run.dir>/<run.name>, or -2, -3, … when taken); refused if it holds a run, unless --force')
    .option('--force', 'start over in a --run-dir that holds a run: deletes its run.db, config.json, tokenizer.json and checkpoints/ (other files stay)')
    .option('--json', 'print the result as JSON on stdout (progress goes to stderr)')
    .option('--nats <url>', 'run the episodes on `turnwise worker` processes over this NATS server (comma-separated for a cluster)')
    .option('--plan-ack-wait-ms <n>', 'with --nats: redeliver an episode plan whose worker went silent this long', positiveInt)
    .option('--replace-nats-run', "with --nats: take run.name from the run that holds it on the server, deleting that run's streams, buckets and objects (its run folder is left alone)")
    .option('--worker-wait-ms <n>', 'with --nats: fail the run (resumable) when no episodes worker has been connected this long (default 300000)', positiveInt);
  for (const [flags, help] of NATS_FLAG_HELP) train.option(flags, help);
  train.action(async (configPath: string | undefined, opts: TrainFlags) => {
    const json = opts.json === true;
    if (opts.force && opts.resume) throw new UsageError('--force starts a run over; it cannot go with --resume');
    const [{ planTrain }, { TrainProgress }] = await Promise.all([import('./train-plan.js'), import('./progress.js')]);
    const plan = await planTrain({ ...(configPath !== undefined ? { configPath } : {}), ...opts });
    for (const warning of plan.warnings) process.stderr.write(`warning: ${warning}\n`);
    const progress = new TrainProgress(plan.config.train.steps, json ? process.stderr : process.stdout);
    // SIGINT and SIGTERM alike: finish the phase, checkpoint, status interrupted, exit 130 / 143.
    const stop = stopOnSignals((signal) => progress.log(`${signal}: stopping after the current phase (checkpointing)… send it again to abort`));
    const result = await runTraining(plan.config, opts, progress, stop.signal);
    stop.dispose();
    progress.stop();
    printResult(result, plan.warnings, json);
    if (result.status === 'failed') process.exitCode = EXIT.failure;
    else if (result.status === 'stopped') process.exitCode = stop.exitCode() ?? exitCodeForSignal('SIGINT');
  });
}

async function runTraining(config: ResolvedConfig, opts: TrainFlags, progress: TrainProgress, signal: AbortSignal): Promise<TrainRunResult> {
  const runOptions = {
    config,
    ...(opts.resume ? { resumeDir: opts.resume } : {}),
    ...(opts.runDir ? { runDir: opts.runDir } : {}),
    ...(opts.force ? { force: true } : {}),
    onEvent: (event: RunEvent) => progress.handle(event),
    signal,
  };
  if (!opts.nats) return (await import('../runtime/train/train-run.js')).trainRun(runOptions);
  const { natsTrainRun } = await import('../runtime/nats/nats-train-run.js');
  return natsTrainRun({
    ...runOptions,
    nats: natsOptionsOf({ ...opts, nats: opts.nats }),
    log: (line) => progress.log(redactCredentials(line)),
    ...(opts.planAckWaitMs ? { infra: { planAckWaitMs: opts.planAckWaitMs } } : {}),
    ...(opts.replaceNatsRun ? { replaceRun: true } : {}),
    ...(opts.workerWaitMs ? { workerWaitMs: opts.workerWaitMs } : {}),
  });
}

function printResult(result: TrainRunResult, warnings: readonly string[], json: boolean): void {
  const next = result.completedSteps > 0 ? followUps(result.runDir, result.completedSteps) : [];
  const runWarnings = result.warnings ?? [];
  if (json) {
    console.log(JSON.stringify({ ...result, warnings: [...warnings, ...runWarnings], next }, null, 2));
    return;
  }
  const first = result.evals[0];
  const last = result.evals[result.evals.length - 1];
  if (first && last && last !== first) {
    console.log(`held-out success: ${first.successRate.toFixed(3)} (step ${first.step}) -> ${last.successRate.toFixed(3)} (step ${last.step})`);
  }
  console.log(`run ${result.status} after ${result.completedSteps} steps${runWarnings.length > 0 ? ` (with ${runWarnings.length} warning${runWarnings.length === 1 ? '' : 's'}, below)` : ''}: ${result.runDir}`);
  for (const warning of runWarnings) console.error(`warning: ${warning}`);
  if (next.length > 0) console.log(`next: ${next.join('\n      ')}`);
  if (result.status === 'failed') console.error(`error: ${redactCredentials(result.error ?? '')}`);
}
