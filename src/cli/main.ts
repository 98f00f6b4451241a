#!/usr/bin/env node
/**
 * The `turnwise` command. commander (the most used Node CLI parser, typed, no runtime deps) turns
 * argv into calls of the same functions tests use.
 */
import { Command, InvalidArgumentError as CommanderArgumentError } from 'commander';
import { loadConfig, resolveConfig } from '../core/config.js';
import { TurnwiseError } from '../core/errors.js';
import '../envs/index.js';
import { listEnvironments } from '../envs/registry.js';
import { loadRunConfig } from '../runtime/run-folder.js';
import { trainRun } from '../runtime/train-run.js';
import { compareCommand, evalCommand } from './eval-command.js';
import { registerServeCommand } from './serve-command.js';
import { envServeCommand } from './env-serve.js';
import { TrainProgress } from './progress.js';
import { registerExperimentCommand } from './experiment-command.js';
import { registerSimulateCommand } from './simulate-command.js';
import { plotCommand } from './plot-command.js';
import { uiCommand } from './ui-command.js';
import { NATS_FLAG_HELP, type NatsFlags, natsOptionsOf, parseRoles, workerCommand } from './worker-command.js';
import { natsTrainRun } from '../runtime/nats/nats-train-run.js';
import type { WorkerRole } from '../runtime/nats/worker.js';

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new CommanderArgumentError(`expected a positive integer, got '${value}'`);
  return n;
}

/** Accumulates a repeatable option. */
function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

const program = new Command('turnwise')
  .description('Actor-model RL runtime for multi-turn agents in text environments')
  .showHelpAfterError();

const trainCommand = program
  .command('train')
  .description('train an agent from a YAML config, or resume a run folder')
  .argument('[config]', 'YAML config (e.g. configs/babyai-grpo.yaml)')
  .option('--resume <runDir>', 'continue this run folder from its latest checkpoint')
  .option('--steps <n>', 'override train.steps (with --resume: extend the run to n steps)', positiveInt)
  .option('--run-dir <dir>', 'write the run to exactly this folder')
  .option('--nats <url>', 'run the episodes on `turnwise worker` processes over this NATS server (comma-separated for a cluster)')
  .option('--plan-ack-wait-ms <n>', 'with --nats: redeliver an episode plan whose worker went silent this long', positiveInt);
for (const [flags, help] of NATS_FLAG_HELP) trainCommand.option(flags, help);
trainCommand
  .action(async (configPath: string | undefined, opts: { resume?: string; steps?: number; runDir?: string; nats?: string; planAckWaitMs?: number } & Partial<NatsFlags>) => {
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
    const runOptions = {
      config,
      ...(opts.resume ? { resumeDir: opts.resume } : {}),
      ...(opts.runDir ? { runDir: opts.runDir } : {}),
      onEvent: (event: Parameters<typeof progress.handle>[0]) => progress.handle(event),
      signal: stop.signal,
    };
    const result = opts.nats
      ? await natsTrainRun({
          ...runOptions,
          nats: natsOptionsOf({ ...opts, nats: opts.nats }),
          log: (line) => progress.log(line),
          ...(opts.planAckWaitMs ? { infra: { planAckWaitMs: opts.planAckWaitMs } } : {}),
        })
      : await trainRun(runOptions);
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
  .description('evaluate checkpoints and OpenAI-compatible models on an environment split (one comparison table)')
  .argument('[runOrCheckpoint...]', 'run folders (their latest checkpoint) or checkpoint folders; one alone with no harness flag prints the legacy table')
  .option('--policy <runOrCheckpoint>', 'a turnwise checkpoint to compare (repeatable)', collect, [])
  .option('--remote <spec>', 'a remote model: <name>=<baseURL>,model=<m>[,key-env=VAR][,temperature=t][,top-p=p][,max-tokens=n][,concurrency=n][,max-retries=n] (repeatable)', collect, [])
  .option('--policies <file>', 'YAML file: policies: [{ name, checkpoint } | { name, baseURL, model, keyEnv, ... }]')
  .option('--env <name>', "environment (default: the first checkpoint's; required with remote policies only)")
  .option('--split <split>', 'train or test', 'test')
  .option('--tasks <n>', 'number of tasks (items)', positiveInt)
  .option('-n, --samples <n>', 'samples per item (Avg@n, Pass@n)', positiveInt)
  .option('--horizon <n>', "max agent turns (default: the first checkpoint's, else 20)", positiveInt)
  .option('--seed <n>', "episode seeds (default: the first checkpoint's seed, else 0)", (v: string) => (v === '0' ? 0 : positiveInt(v)))
  .option('--out <dir>', 'run folder for the trajectories (default runs/eval-<env>[-k])')
  .option('--greedy', 'argmax decoding instead of sampling (checkpoints)')
  .option('--json', 'print the result as JSON')
  .action(
    async (
      locations: string[],
      opts: { policy: string[]; remote: string[]; policies?: string; env?: string; split: string; tasks?: number; samples?: number; horizon?: number; seed?: number; out?: string; greedy?: boolean; json?: boolean },
    ) => {
      if (opts.split !== 'train' && opts.split !== 'test') throw new CommanderArgumentError(`--split must be train or test, got '${opts.split}'`);
      const harness =
        locations.length !== 1 || opts.policy.length > 0 || opts.remote.length > 0 || opts.policies !== undefined || opts.env !== undefined ||
        opts.samples !== undefined || opts.horizon !== undefined || opts.seed !== undefined || opts.out !== undefined;
      if (!harness) {
        await evalCommand(locations[0] as string, { split: opts.split, tasks: opts.tasks, greedy: opts.greedy === true, json: opts.json === true });
        return;
      }
      await compareCommand({
        checkpoints: [...locations, ...opts.policy],
        remotes: opts.remote,
        split: opts.split,
        samples: opts.samples ?? 1,
        greedy: opts.greedy === true,
        json: opts.json === true,
        ...(opts.policies !== undefined ? { policyFile: opts.policies } : {}),
        ...(opts.env !== undefined ? { env: opts.env } : {}),
        ...(opts.tasks !== undefined ? { tasks: opts.tasks } : {}),
        ...(opts.horizon !== undefined ? { horizon: opts.horizon } : {}),
        ...(opts.seed !== undefined ? { seed: opts.seed } : {}),
        ...(opts.out !== undefined ? { out: opts.out } : {}),
      });
    },
  );

registerServeCommand(program);

const worker = program
  .command('worker')
  .description('join a training run on NATS: serve act requests (sampler) and/or run episodes (episodes)')
  .requiredOption('--nats <url>', 'NATS server URL (comma-separated for a cluster)')
  .requiredOption('--run <id>', "the run's id (its run.name, as `turnwise train --nats` prints it)")
  .requiredOption('--role <roles>', 'sampler, episodes, env, or several: sampler,episodes', parseRoles)
  .option('--pool <n>', 'episodes in flight at most (default: the run\'s episodes per step)', positiveInt)
  .option('--remote-env', 'episodes role: lease env sessions from `--role env` workers instead of running environments in-process')
  .option('--env-capacity <n>', 'env role: env sessions served at once (default: the run\'s episodes per step)', positiveInt)
  .option('--max-act-in-flight <n>', 'sampler role: act requests handled at once, more wait (default: 2 x runtime.samplerMaxBatch)', positiveInt);
for (const [flags, help] of NATS_FLAG_HELP) worker.option(flags, help);
worker.action(async (opts: NatsFlags & { run: string; role: WorkerRole[]; pool?: number; remoteEnv?: boolean; envCapacity?: number; maxActInFlight?: number }) => {
  await workerCommand(opts);
});

const envCommand = program.command('env').description('environment tools');
envCommand
  .command('serve')
  .description("serve a native environment over AgentGym's HTTP protocol (for AgentGym's clients and remote training)")
  .argument('<name>', 'registered environment (see `turnwise envs`)')
  .option('--port <n>', 'port (0 = a free one)', (v: string) => (v === '0' ? 0 : positiveInt(v)), 36002)
  .option('--host <host>', 'interface to bind (0.0.0.0 exposes it)', '127.0.0.1')
  .option('--cors', "permissive CORS, for AgentGym's browser visualization UI")
  .option('--max-sessions <n>', 'cap on live instances (503 beyond)', positiveInt, 4096)
  .option('--idle-ms <n>', 'close instances idle this long, ms (0 = never)', (v: string) => (v === '0' ? 0 : positiveInt(v)), 600_000)
  .option('--max-body-bytes <n>', 'largest request body (413 beyond)', positiveInt, 1 << 20)
  .option('--settings <json>', 'environment settings as JSON, e.g. \'{"levels":["GoToRedBall"]}\'')
  .option('--profile <name>', 'answer shapes: babyai, textcraft or generic (default: by environment name)')
  .action(async (name: string, opts: { port: number; host: string; cors?: boolean; maxSessions: number; idleMs: number; maxBodyBytes: number; settings?: string; profile?: string }) => {
    await envServeCommand(name, { ...opts, cors: opts.cors === true });
  });

program
  .command('envs')
  .description('list the registered environments')
  .action(() => {
    console.log('| environment | train tasks | test tasks | description |');
    console.log('|---|---|---|---|');
    for (const spec of listEnvironments()) {
      let sizes = ['—', '—'];
      try {
        const catalog = spec.catalog();
        sizes = [catalog.indices('train').length, catalog.indices('test').length].map((n) => n.toLocaleString('en-US'));
      } catch {
        // Remote environments have no default catalog: their tasks come from the run config.
      }
      console.log(`| ${spec.name} | ${sizes[0]} | ${sizes[1]} | ${spec.description} |`);
    }
  });

program
  .command('ui')
  .description('dashboard: run list, live curves, trajectory viewer, evaluation tables (reads run stores read-only)')
  .option('--runs <folder>', 'folder that holds run folders', 'runs')
  .option('--port <n>', 'port (0 = a free one)', (v: string) => (v === '0' ? 0 : positiveInt(v)), 5174)
  .option('--host <host>', 'interface to bind (0.0.0.0 exposes it)', '127.0.0.1')
  .action(async (opts: { runs: string; port: number; host: string }) => {
    await uiCommand(opts);
  });

program
  .command('plot')
  .description('offline learning curves of one metric over runs, as SVG or PNG')
  .argument('<runDir...>', 'run folders (each run.db is read read-only)')
  .requiredOption('--metric <name>', 'metric name (e.g. rollout/successRate) or alias: success, eval-success, reward, turns, truncation, horizon, kl, entropy, staleness, tokens-per-sec')
  .option('--out <file>', 'output file, .svg or .png', 'curves.svg')
  .option('--title <text>', 'figure title (default: the metric)')
  .option('--band', 'one mean curve with a min/max band over the runs (e.g. seeds)')
  .option('--width <px>', 'figure width', positiveInt)
  .option('--height <px>', 'figure height', positiveInt)
  .action(async (runDirs: string[], opts: { metric: string; out: string; title?: string; band?: boolean; width?: number; height?: number }) => {
    const out = await plotCommand(runDirs, { ...opts, band: opts.band === true });
    console.log(`wrote ${out}`);
  });

registerExperimentCommand(program);
registerSimulateCommand(program);

program.parseAsync(process.argv).catch((err: unknown) => {
  if (err instanceof TurnwiseError) {
    console.error(`${err.name}: ${err.message}`);
    process.exit(2);
  }
  throw err;
});
