#!/usr/bin/env node
/**
 * The `turnwise` command. commander (the most used Node CLI parser, typed, no runtime deps) turns
 * argv into calls of the same functions tests use.
 */
import { Command } from 'commander';
import { EXIT, UsageError } from './exit-codes.js';
import { registerExportCommand } from './export-command.js';
import { reportFailure } from './failure.js';
import { registerExperimentCommand } from './experiment-command.js';
import { NATS_FLAG_HELP, type NatsFlags } from './nats-flags.js';
import { registerSimulateCommand } from './simulate-command.js';
import { registerTrainCommand } from './train-command.js';
import { collect, nonNegativeInt, positiveInt, smoothingWeight } from './values.js';
import { tuneV8Tiering } from './v8-tiering.js';
import { packageVersion } from './version.js';

tuneV8Tiering(process.execArgv, process.env.NODE_OPTIONS);

// Each action imports what it runs when it runs (`await import(…)`): the models, environments and
// servers take seconds to load, and `--help`, `--version` and usage errors should not wait for them.

const EXIT_CODE_HELP = `
Exit codes: 0 success; 1 runtime failure (the run or a server failed); 2 usage or config error
(unknown flag, bad value, invalid config, not a run folder); 130 stopped by SIGINT (Ctrl-C);
143 stopped by SIGTERM. Errors print one line; --debug adds the stack trace.`;

// exitOverride: commander throws instead of exiting, so every failure leaves through one place
// (the catch at the bottom) with the exit code of exit-codes.ts. Subcommands inherit it.
const program = new Command('turnwise')
  .description('Actor-model RL runtime for multi-turn agents in text environments')
  .version(packageVersion(), '-V, --version', 'print the version')
  .option('--debug', 'print stack traces of errors')
  .exitOverride()
  .showHelpAfterError()
  .addHelpText('after', EXIT_CODE_HELP);

registerTrainCommand(program);

program
  .command('eval')
  .description('evaluate checkpoints and OpenAI-compatible models on an environment split (one comparison table)')
  .argument('[runOrCheckpoint...]', 'run folders (their latest checkpoint) or checkpoint folders; one alone with no comparison flag prints its per-category table (overall and per level category, the same evaluation as during training); several, or any of --policy/--remote/--policies/--env/-n/--horizon/--seed/--out, print one comparison table')
  .option('--policy <runOrCheckpoint>', 'a turnwise checkpoint to compare (repeatable)', collect, [])
  .option('--remote <spec>', 'a remote model: <name>=<baseURL>,model=<m>[,key-env=VAR][,temperature=t][,top-p=p][,max-tokens=n][,tool-choice=auto|required][,concurrency=n][,max-retries=n] (repeatable)', collect, [])
  .option('--policies <file>', 'YAML file: policies: [{ name, checkpoint } | { name, baseURL, model, keyEnv, ... }]')
  .option('--env <name>', "environment (default: the first checkpoint's; required with remote policies only)")
  .option('--split <split>', 'train or test', 'test')
  .option('--tasks <n>', 'number of tasks (items)', positiveInt)
  .option('-n, --samples <n>', 'samples per item (Avg@n, Pass@n)', positiveInt)
  .option('--horizon <n>', "max agent turns (default: the first checkpoint's, else 20)", positiveInt)
  .option('--seed <n>', "episode seeds (default: the first checkpoint's seed, else 0)", nonNegativeInt)
  .option('--out <dir>', 'run folder for the trajectories (default runs/eval-<env>[-k])')
  .option('--greedy', 'argmax decoding instead of sampling (checkpoints)')
  .option('--json', 'print the result as JSON')
  .action(
    async (
      locations: string[],
      opts: { policy: string[]; remote: string[]; policies?: string; env?: string; split: string; tasks?: number; samples?: number; horizon?: number; seed?: number; out?: string; greedy?: boolean; json?: boolean },
    ) => {
      if (opts.split !== 'train' && opts.split !== 'test') throw new UsageError(`--split must be train or test, got '${opts.split}'`);
      if (locations.length === 0 && opts.policy.length === 0 && opts.remote.length === 0 && opts.policies === undefined) {
        throw new UsageError('name what to evaluate: a run folder or checkpoint (e.g. turnwise eval runs/babyai-grpo), --policy, --remote or --policies');
      }
      const harness =
        locations.length !== 1 || opts.policy.length > 0 || opts.remote.length > 0 || opts.policies !== undefined || opts.env !== undefined ||
        opts.samples !== undefined || opts.horizon !== undefined || opts.seed !== undefined || opts.out !== undefined;
      const { compareCommand, evalCommand } = await import('./eval-command.js');
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

program
  .command('serve')
  .description('serve a Hugging Face model folder, a run or a checkpoint through an OpenAI-compatible API (/v1/chat/completions, /v1/completions)')
  .argument('<location>', 'Hugging Face model folder (config.json + safetensors + tokenizer), PEFT adapter folder, run folder (its latest checkpoint) or checkpoint folder')
  .option('--port <n>', 'port (0 = a free one)', nonNegativeInt, 8000)
  .option('--host <host>', 'interface to bind (0.0.0.0 exposes it)', '127.0.0.1')
  .option('--model-name <id>', "model id clients send (default: the folder's or run's name)")
  .option('--max-context <n>', "cap on prompt + completion tokens (default: the model's context)", positiveInt)
  .option('--backend <name>', "tensor backend: auto, tensorflow, wasm or cpu (default: a run's own, else auto)")
  .option('--seed <n>', 'seed of the stream for requests that send no seed', nonNegativeInt)
  .option('--max-body-bytes <n>', 'largest request body (413 beyond)', positiveInt)
  .option('--max-queue <n>', 'generation requests in the server at once, generating or waiting (429 with Retry-After beyond; default 64)', positiveInt)
  .action(async (location: string, opts: { port: number; host: string; modelName?: string; maxContext?: number; backend?: string; seed?: number; maxBodyBytes?: number; maxQueue?: number }) => {
    const { serveCommand } = await import('./serve-command.js');
    await serveCommand(location, opts);
  });

program
  .command('merge')
  .description('write a checkpoint as a plain Hugging Face model folder (LoRA adapters merged into the base) for transformers, vLLM or model.from')
  .argument('<runOrCheckpoint>', 'run folder (its latest checkpoint) or checkpoint folder')
  .requiredOption('--out <folder>', 'new (or empty) folder to write the model to')
  .action(async (location: string, opts: { out: string }) => {
    const { exportModelFolder } = await import('../runtime/export-model.js');
    const exported = await exportModelFolder(location, opts.out);
    console.log(`wrote ${exported.out} from ${exported.checkpointDir} (step ${exported.step}${exported.merged ? ', LoRA adapters merged' : ''}, ${exported.dtype} weights): ${exported.files.join(', ')}`);
  });

const worker = program
  .command('worker')
  .description('join a training run on NATS: serve act requests (sampler) and/or run episodes (episodes)')
  .requiredOption('--nats <url>', 'NATS server URL (comma-separated for a cluster)')
  .requiredOption('--run <name>', "the run's run.name (or its run id, as `turnwise train --nats` prints it); waits for such a run to start")
  .requiredOption('--role <roles>', 'sampler, episodes, env, or several: sampler,episodes')
  .option('--pool <n>', 'episodes in flight at most (default: the run\'s episodes per step)', positiveInt)
  .option('--remote-env', 'episodes role: lease env sessions from `--role env` workers instead of running environments in-process')
  .option('--env-capacity <n>', 'env role: env sessions served at once (default: the run\'s episodes per step)', positiveInt)
  .option('--max-act-in-flight <n>', 'sampler role: act requests handled at once, more wait (default: 2 x runtime.samplerMaxBatch)', positiveInt);
for (const [flags, help] of NATS_FLAG_HELP) worker.option(flags, help);
worker.action(async (opts: NatsFlags & { run: string; role: string; pool?: number; remoteEnv?: boolean; envCapacity?: number; maxActInFlight?: number }) => {
  const { parseRoles, workerCommand } = await import('./worker-command.js');
  await workerCommand({ ...opts, role: parseRoles(opts.role) });
});

const tinkerCommand = program.command('tinker').description('the Tinker training API');
tinkerCommand
  .command('serve')
  .description("serve turnwise's LoRA engine on a Hugging Face model folder through the Tinker training API (for the Tinker SDK, tinker-cookbook recipes and model.engine: tinker)")
  .argument('<folder>', 'Hugging Face model folder (config.json + safetensors): the base model every LoRA adapter trains on')
  .option('--port <n>', 'port (0 = a free one)', nonNegativeInt, 8000)
  .option('--host <host>', 'interface to bind (0.0.0.0 exposes it)', '127.0.0.1')
  .option('--max-lora-rank <n>', 'largest LoRA rank create_model accepts (default 64)', positiveInt)
  .option('--reduction <rule>', "how per-token losses become a step's gradient: sum (Tinker's documented rule) or sequence-mean (SkyRL tx's)", 'sum')
  .option('--checkpoints-dir <dir>', 'where saved weights go (default: a new temporary folder)')
  .option('--tie-lora-a', "q/k/v share one lora_A and gate/up another, as SkyRL tx's fused layers do")
  .option('--dialect <name>', 'tinker (failed futures as 200 {error, category}) or skyrl (400 {detail}, prompt logprobs without the leading null)', 'tinker')
  .option('--base-model-name <name>', "the base model's name on the API (default: the folder's absolute path)")
  .option('--retrieve-timeout-ms <n>', 'how long retrieve_future waits before a 408 (default 30000)', positiveInt)
  .option('--session-timeout-ms <n>', 'unload the models of a session without heartbeats this long (default 300000)', positiveInt)
  .option('--backend <name>', 'tensor backend: auto, tensorflow, wasm or cpu (default auto)')
  .option('--seed <n>', 'seed of sampling requests that send none', nonNegativeInt)
  .action(async (folder: string, opts: import('./tinker-command.js').TinkerServeCommandOptions) => {
    const { tinkerServeCommand } = await import('./tinker-command.js');
    await tinkerServeCommand(folder, opts);
  });

const envCommand = program.command('env').description('environment tools');
envCommand
  .command('serve')
  .description("serve a native environment over AgentGym's HTTP protocol (for AgentGym's clients and remote training)")
  .argument('<name>', 'registered environment (see `turnwise envs`)')
  .option('--port <n>', 'port (0 = a free one)', nonNegativeInt, 36002)
  .option('--host <host>', 'interface to bind (0.0.0.0 exposes it)', '127.0.0.1')
  .option('--cors', "permissive CORS, for AgentGym's browser visualization UI")
  .option('--max-sessions <n>', 'cap on live instances (503 beyond)', positiveInt, 4096)
  .option('--idle-ms <n>', 'close instances idle this long, ms (0 = never)', nonNegativeInt, 600_000)
  .option('--max-body-bytes <n>', 'largest request body (413 beyond)', positiveInt, 1 << 20)
  .option('--settings <json>', 'environment settings as JSON, e.g. \'{"levels":["GoToRedBall"]}\'')
  .option('--profile <name>', 'answer shapes: babyai, textcraft or generic (default: by environment name)')
  .action(async (name: string, opts: { port: number; host: string; cors?: boolean; maxSessions: number; idleMs: number; maxBodyBytes: number; settings?: string; profile?: string }) => {
    const { envServeCommand } = await import('./env-serve.js');
    await envServeCommand(name, { ...opts, cors: opts.cors === true });
  });

program
  .command('envs')
  .description('list the registered environments')
  .option('--json', 'print the list as JSON')
  .action(async (opts: { json?: boolean }) => {
    await import('../envs/index.js'); // registers the built-in environments
    const { listEnvironments } = await import('../envs/registry.js');
    const rows = listEnvironments().map((spec) => {
      let sizes: { trainTasks: number; testTasks: number } | null = null;
      try {
        const catalog = spec.catalog();
        sizes = { trainTasks: catalog.indices('train').length, testTasks: catalog.indices('test').length };
      } catch {
        // Remote environments have no default catalog: their tasks come from the run config.
      }
      return { name: spec.name, trainTasks: sizes?.trainTasks ?? null, testTasks: sizes?.testTasks ?? null, description: spec.description };
    });
    if (opts.json) {
      console.log(JSON.stringify(rows, null, 2));
      return;
    }
    const count = (n: number | null) => (n === null ? '—' : n.toLocaleString('en-US'));
    console.log('| environment | train tasks | test tasks | description |');
    console.log('|---|---|---|---|');
    for (const row of rows) console.log(`| ${row.name} | ${count(row.trainTasks)} | ${count(row.testTasks)} | ${row.description} |`);
  });

program
  .command('ui')
  .description('dashboard: run list, live curves, trajectory viewer, evaluation tables (reads run stores read-only)')
  .option('--runs <folder>', 'folder that holds run folders', 'runs')
  .option('--port <n>', 'port (0 = a free one)', nonNegativeInt, 5174)
  .option('--host <host>', 'interface to bind (0.0.0.0 exposes it)', '127.0.0.1')
  .action(async (opts: { runs: string; port: number; host: string }) => {
    const { uiCommand } = await import('./ui-command.js');
    await uiCommand(opts);
  });

program
  .command('plot')
  .description('offline learning curves of one metric over runs, as SVG or PNG')
  .argument('<runDir...>', 'run folders (each run.db is read read-only)')
  .requiredOption(
    '--metric <name>',
    'metric name (e.g. rollout/successRate) or alias: success, eval-success, reward, turns, truncation, horizon, kl, entropy, policy-entropy, staleness, tokens-per-sec; a family by turn index: byTurn/tokenEntropy (turn-entropy), byTurn/invalidActionRate (turn-invalid), byTurn/repeatedActionRate (turn-repeated), byTurn/reached (turn-reached), episodeLength (lengths)',
  )
  .option('--out <file>', 'output file, .svg or .png', 'curves.svg')
  .option('--title <text>', 'figure title (default: the metric)')
  .option('--band', 'one mean curve with a min/max band over the runs (e.g. seeds)')
  .option('--width <px>', 'figure width', positiveInt)
  .option('--height <px>', 'figure height', positiveInt)
  .option('--at <steps>', 'families: last step of each window to draw, comma-separated (default: first and last window)', (v: string) => v.split(',').map(positiveInt))
  .option('--window <n>', 'families: training steps averaged per window', positiveInt)
  .option('--smooth <weight>', "smoothing weight in [0, 1) (TensorBoard's moving average; the raw curve stays faint behind)", smoothingWeight)
  .option('--log-y', 'logarithmic y axis (values <= 0 are left out)')
  .option('--json', 'print what was written as JSON')
  .action(async (runDirs: string[], opts: { metric: string; out: string; title?: string; band?: boolean; width?: number; height?: number; at?: number[]; window?: number; smooth?: number; logY?: boolean; json?: boolean }) => {
    const { json, ...plotOptions } = opts;
    const { plotCommand } = await import('./plot-command.js');
    const out = await plotCommand(runDirs, { ...plotOptions, band: opts.band === true });
    console.log(json ? JSON.stringify({ wrote: out, metric: opts.metric, runs: runDirs }) : `wrote ${out}`);
  });

registerExportCommand(program);
registerExperimentCommand(program);
registerSimulateCommand(program);

// A command whose work can no longer make progress (a promise nothing will settle, and nothing
// left on the event loop) would otherwise end the process with status 0 and no result: say so.
let settled = false;
process.on('beforeExit', () => {
  if (settled) return;
  settled = true;
  process.stderr.write('error: internal: the command stopped before it finished (nothing left to wait for); this is a bug in turnwise, please report it\n');
  process.exitCode = EXIT.failure;
});

program
  .parseAsync(process.argv)
  .then(() => {
    settled = true;
  })
  .catch((err: unknown) => {
    // --debug is read from argv as well: a parse error can come before commander has read it.
    const debug = program.opts<{ debug?: boolean }>().debug === true || process.argv.includes('--debug');
    // Exit now: a half-started server or pool may still hold the event loop open. (stderr is
    // synchronous for files, pipes and terminals on Linux, so the report is not cut off.)
    process.exit(reportFailure(err, { debug, write: (text) => process.stderr.write(text) }));
  });
