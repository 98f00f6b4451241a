/**
 * `turnwise simulate <config> --agents N [--policy scripted|random|checkpoint:<dir>] [--turns T | --seconds S | --episodes E] [--split test]`:
 * N concurrent episodes of the config's environment (see `src/runtime/simulate/simulate.ts`),
 * printing turns/s, resident memory per live episode, event-loop lag and outcome counts.
 */
import type { Command } from 'commander';
import { systemClock } from '../core/clock.js';
import { loadConfig, parseOverride, resolveConfig } from '../core/config.js';
import { InvalidArgumentError } from '../core/errors.js';
import type { SimBudget, SimPolicy, SimulateReport } from '../runtime/simulate/simulate.js';
import { collect } from './values.js';

/** The raw flags, as commander hands them over (strings, validated here so errors name the flag). */
export interface SimulateFlags {
  readonly agents?: string;
  readonly policy?: string;
  readonly turns?: string;
  readonly seconds?: string;
  readonly episodes?: string;
  readonly split?: string;
  readonly envWorkers?: string;
  readonly inferenceWorkers?: string;
  readonly horizon?: string;
  readonly json?: boolean;
  /** `--set key.path=value` overrides of the config. */
  readonly set?: readonly string[];
}

function integerFlag(flag: string, value: string, min: number): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isInteger(n) || n < min) throw InvalidArgumentError.format(flag, `expected an integer >= ${min}, got '${value}'`);
  return n;
}

/**
 * Validates the flags.
 * @example parseSimulateFlags({ agents: '200', policy: 'random', turns: '5000' })
 */
export function parseSimulateFlags(flags: SimulateFlags): { agents: number; policy: SimPolicy; budget: SimBudget; split?: string; envWorkers?: number; inferenceWorkers?: number; horizon?: number } {
  if (flags.agents === undefined) throw InvalidArgumentError.format('--agents', 'required: the number of concurrent episodes');
  const agents = integerFlag('--agents', flags.agents, 1);
  const policyText = flags.policy ?? 'scripted';
  let policy: SimPolicy;
  if (policyText === 'scripted' || policyText === 'random') policy = { kind: policyText };
  else if (policyText === 'random:tools') policy = { kind: 'random', form: 'tools' };
  else if (policyText.startsWith('checkpoint:') && policyText.length > 'checkpoint:'.length) policy = { kind: 'checkpoint', location: policyText.slice('checkpoint:'.length) };
  else throw InvalidArgumentError.format('--policy', `expected scripted, random, random:tools or checkpoint:<run or checkpoint folder>, got '${policyText}'`);
  const budgets = [flags.turns, flags.seconds, flags.episodes].filter((b) => b !== undefined).length;
  if (budgets > 1) throw InvalidArgumentError.format(flags.turns !== undefined ? '--turns' : '--seconds', 'give one of --turns, --seconds or --episodes');
  let budget: SimBudget;
  if (flags.episodes !== undefined) budget = { episodes: integerFlag('--episodes', flags.episodes, 1) };
  else if (flags.seconds !== undefined) {
    const seconds = Number(flags.seconds);
    if (flags.seconds.trim() === '' || !(seconds > 0) || !Number.isFinite(seconds)) throw InvalidArgumentError.format('--seconds', `expected a positive number, got '${flags.seconds}'`);
    budget = { seconds };
  } else budget = { turns: flags.turns === undefined ? 10 * agents : integerFlag('--turns', flags.turns, 1) };
  return {
    agents,
    policy,
    budget,
    ...(flags.split !== undefined ? { split: flags.split } : {}),
    ...(flags.envWorkers !== undefined ? { envWorkers: integerFlag('--env-workers', flags.envWorkers, 0) } : {}),
    ...(flags.inferenceWorkers !== undefined ? { inferenceWorkers: integerFlag('--inference-workers', flags.inferenceWorkers, 0) } : {}),
    ...(flags.horizon !== undefined ? { horizon: integerFlag('--horizon', flags.horizon, 1) } : {}),
  };
}

const MiB = 1024 * 1024;

/**
 * The report as printed lines.
 * @example for (const line of formatSimulateReport(report)) console.log(line);
 */
export function formatSimulateReport(r: SimulateReport): string[] {
  const o = r.outcomes;
  return [
    `agents ${r.agents} | policy ${r.policy} | envs ${r.envPlacement} | horizon ${r.horizon}`,
    `episodes finished ${r.episodes}, cut at the budget ${r.cutAtBudget} | turns ${r.turns} in ${r.seconds.toFixed(2)} s | ${Math.round(r.turnsPerSecond).toLocaleString('en-US')} turns/s`,
    `outcomes: success ${o.success}, failure ${o.failure}, truncated ${o.truncated}, error ${o.error}`,
    `resident memory: ${(r.memory.baselineBytes / MiB).toFixed(0)} MiB before, ${(r.memory.peakBytes / MiB).toFixed(0)} MiB peak, ${(r.memory.perEpisodeBytes / 1024).toFixed(1)} KiB per live episode`,
    `event-loop lag: p50 ${r.eventLoopLagMs.p50.toFixed(1)} ms, p99 ${r.eventLoopLagMs.p99.toFixed(1)} ms, max ${r.eventLoopLagMs.max.toFixed(1)} ms`,
    `CPU per turn: ${r.cpuMicrosPerTurn.mainThread === null ? 'main thread n/a' : `${r.cpuMicrosPerTurn.mainThread.toFixed(1)} µs main thread`}, ${r.cpuMicrosPerTurn.process.toFixed(1)} µs all threads`,
  ];
}

/**
 * Adds `turnwise simulate` to the program.
 * @example registerSimulateCommand(program);
 */
export function registerSimulateCommand(program: Command): void {
  program
    .command('simulate')
    .description('run N concurrent episodes with a scripted, random or trained policy; report turns/s, memory per live episode, event-loop lag')
    .argument('<config>', 'YAML config (its env section picks the environment, its horizon the episode length)')
    .option('--agents <n>', 'concurrent episodes (required)')
    .option('--policy <policy>', 'scripted | random | random:tools (free-mode actions as tool calls) | checkpoint:<run or checkpoint folder>', 'scripted')
    .option('--turns <n>', 'stop after this many turns, cutting the episodes in flight (default 10 x agents)')
    .option('--seconds <s>', 'stop after this many seconds, cutting the episodes in flight')
    .option('--episodes <n>', 'play exactly this many episodes, each to its end (with --split test and n = the split size: each held-out task once)')
    .option('--split <split>', 'task split to play (default: env.trainSplit of the config)')
    .option('--env-workers <n>', 'environment worker threads (default: env.workers of the config; 0 = in-process)')
    .option('--inference-workers <n>', "threads running a checkpoint policy's model (default: runtime.inferenceWorkers of its run; 0 = the main thread)")
    .option('--horizon <n>', 'turns per episode at most (default: the config horizon)')
    .option('--set <key=value>', 'override one config field, as for train (repeatable)', collect, [])
    .option('--json', 'print the report as JSON')
    .action(async (configPath: string, flags: SimulateFlags) => {
      const parsed = parseSimulateFlags(flags);
      const config = resolveConfig(loadConfig(configPath, (flags.set ?? []).map(parseOverride)));
      await import('../envs/index.js'); // registers the built-in environments
      const { getEnvironmentSpec } = await import('../envs/registry.js');
      const { simulate } = await import('../runtime/simulate/simulate.js');
      const spec = getEnvironmentSpec(config.env.name);
      const report = await simulate({
        config,
        spec,
        ...parsed,
        clock: systemClock,
        onProgress: flags.json ? undefined : (p) => process.stderr.write(`  ${p.seconds.toFixed(1)} s: ${p.turns} turns, ${p.episodes} episodes\n`),
        progressMs: 2000,
      });
      if (flags.json) console.log(JSON.stringify(report, null, 2));
      else for (const line of formatSimulateReport(report)) console.log(line);
    });
}
