/**
 * `turnwise simulate`: N concurrent episodes played by a scripted, random or trained policy, back
 * to back over the training split (or `--split test`) until a turn, time or episode budget is
 * spent; with a turn or time budget the episodes still in flight then are cut (`FlowBudget`), so
 * `--turns T` plays T turns (plus at most the rest of the wave of answers that reached T) and
 * turns/s is measured with every agent live, without a wind-down while the last episodes finish;
 * `--episodes N` starts exactly N episodes and plays each to its end (baselines). Scripted and random
 * policies run on the flow path (each episode an event-driven `episode-flow` machine fed by the
 * batched `FlowDriver`, one xstate event per turn); so does a checkpoint, its model in inference
 * worker threads behind the sampler's dynamic batching (`checkpoint-flow.ts`), so the main thread
 * only routes. It measures what a user scaling the runtime needs: turns per second,
 * resident memory per live episode, event-loop lag, and what the episodes did (outcome counts).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Clock } from '../../core/clock.js';
import type { ResolvedConfig } from '../../core/config.js';
import { InvalidArgumentError } from '../../core/errors.js';
import { Rng } from '../../core/rng.js';
import type { Outcome, Split } from '../../core/types.js';
import type { EnvironmentSpec } from '../../envs/environment.js';
import type { ActionForm } from '../../envs/random-action.js';
import type { FlowResult } from '../../actors/episode-flow.js';
import { createBatchEnv } from '../env-pool/batch-env.js';
import type { EpisodePlan } from '../rollout.js';
import { openCheckpointFlow } from './checkpoint-flow.js';
import { type FlowBudget, FlowDriver, type FlowDriverStats } from './flow-driver.js';
import { flowPolicyFor } from './flow-policies.js';
import { mainThreadCpuSeconds } from './thread-cpu.js';

/** Which policy plays. */
/** `random` with `form: 'tools'` writes free-mode actions as tool calls (canonical call text) instead of text. */
export type SimPolicy = { readonly kind: 'scripted' } | { readonly kind: 'random'; readonly form?: ActionForm } | { readonly kind: 'checkpoint'; readonly location: string };

/**
 * When to stop: after this many turns played, or seconds (the episodes in flight are then cut), or
 * once this many episodes have been started and finished (none cut).
 */
export type SimBudget = { readonly turns: number } | { readonly seconds: number } | { readonly episodes: number };

/** Options of {@link simulate}. */
export interface SimulateOptions {
  readonly config: ResolvedConfig;
  readonly spec: EnvironmentSpec;
  /** Concurrent episodes. */
  readonly agents: number;
  readonly policy: SimPolicy;
  readonly budget: SimBudget;
  /** Split the episodes are drawn from, cycling over its tasks in catalog order (default `config.env.trainSplit`). */
  readonly split?: string;
  /** Horizon of each episode (default: the config's largest). */
  readonly horizon?: number;
  /** Environment worker threads (default `config.env.workers`; 0 = in-process). */
  readonly envWorkers?: number;
  /** Inference worker threads of a checkpoint policy (default: its run's `runtime.inferenceWorkers`; 0 = the main thread). */
  readonly inferenceWorkers?: number;
  readonly clock: Clock;
  /** Called about every `progressMs` with the counts so far. */
  readonly onProgress?: (progress: SimProgress) => void;
  readonly progressMs?: number;
}

/** Counts while running. */
export interface SimProgress {
  readonly seconds: number;
  readonly turns: number;
  readonly episodes: number;
}

/** What a simulation measured. */
export interface SimulateReport {
  readonly agents: number;
  readonly policy: string;
  readonly envPlacement: string;
  readonly horizon: number;
  /** Episodes that finished before the budget was spent (the ones counted in `outcomes`). */
  readonly episodes: number;
  /** Episodes in flight when the budget was spent, cut there: in no outcome count. */
  readonly cutAtBudget: number;
  /** Agent turns played (steps the environments answered), in finished and in cut episodes. */
  readonly turns: number;
  readonly seconds: number;
  readonly turnsPerSecond: number;
  readonly outcomes: Readonly<Record<Outcome, number>>;
  /** Resident memory: before the sessions were opened, the peak while running, and (peak - baseline) / agents. */
  readonly memory: { readonly baselineBytes: number; readonly peakBytes: number; readonly perEpisodeBytes: number };
  /** Event-loop delay while running (perf_hooks monitorEventLoopDelay), in milliseconds. */
  readonly eventLoopLagMs: { readonly p50: number; readonly p99: number; readonly max: number };
  /**
   * CPU microseconds per turn while running: every thread of the process, and the main thread
   * alone (actors, policy, batching; null where the platform cannot say, see `thread-cpu.ts`).
   */
  readonly cpuMicrosPerTurn: { readonly process: number; readonly mainThread: number | null };
}

function checkBudget(budget: SimBudget): void {
  if ('turns' in budget) {
    if (!Number.isInteger(budget.turns) || budget.turns < 1) throw InvalidArgumentError.format('--turns', `expected a positive integer, got ${String(budget.turns)}`);
  } else if ('episodes' in budget) {
    if (!Number.isInteger(budget.episodes) || budget.episodes < 1) throw InvalidArgumentError.format('--episodes', `expected a positive integer, got ${String(budget.episodes)}`);
  } else if (!(budget.seconds > 0) || !Number.isFinite(budget.seconds)) {
    throw InvalidArgumentError.format('--seconds', `expected a positive number of seconds, got ${String(budget.seconds)}`);
  }
}

/** Whatever plays the episodes: the flow driver (scripted, random) or a rollout runner (checkpoint). */
interface SimRunner {
  readonly description: string;
  readonly envPlacement: string;
  play(plan: (i: number) => EpisodePlan | null, onEpisode: (outcome: Outcome) => void, budget: FlowBudget): Promise<void>;
  /** Turns played so far, episodes cut at the budget. */
  stats(): FlowDriverStats;
  close(): Promise<void>;
}

async function openRunner(options: SimulateOptions, envWorkers: number, horizon: number): Promise<SimRunner> {
  const { config, spec, agents, clock, policy } = options;
  const settings = config.env.settings as Record<string, unknown>;
  if (policy.kind === 'checkpoint') {
    // A model policy: the same flow path, with the model in inference workers behind the sampler's dynamic batching.
    const flow = await openCheckpointFlow({
      location: policy.location,
      spec,
      envSettings: settings,
      lanes: agents,
      horizon,
      envWorkers,
      envTimeoutMs: config.runtime.envTimeoutMs,
      clock,
      ...(options.inferenceWorkers !== undefined ? { inferenceWorkers: options.inferenceWorkers } : {}),
    });
    return {
      description: flow.description,
      envPlacement: flow.envPlacement,
      play: (plan, onEpisode, budget) => flow.driver.run(plan, (_, r: FlowResult) => onEpisode(r.trajectory.outcome), undefined, budget),
      stats: () => flow.driver.stats(),
      close: () => flow.close(),
    };
  }
  const flowPolicy = flowPolicyFor(policy.kind, spec, policy.kind === 'random' ? policy.form : undefined);
  const env = createBatchEnv(spec, settings, envWorkers);
  const driver = new FlowDriver({ env, policy: flowPolicy, envName: spec.name, lanes: agents, step: 0, horizon, envTimeoutMs: config.runtime.envTimeoutMs, clock });
  return {
    description: flowPolicy.description,
    envPlacement: env.description,
    play: (plan, onEpisode, budget) => driver.run(plan, (_, r: FlowResult) => onEpisode(r.trajectory.outcome), undefined, budget),
    stats: () => driver.stats(),
    close: () => env.close(),
  };
}

/**
 * Runs the simulation and reports what it measured.
 * @example
 * const report = await simulate({ config, spec, agents: 200, policy: { kind: 'scripted' }, budget: { turns: 5000 }, clock: systemClock });
 * console.log(report.turnsPerSecond);
 */
export async function simulate(options: SimulateOptions): Promise<SimulateReport> {
  const { config, spec, agents, clock } = options;
  if (!Number.isInteger(agents) || agents < 1) throw InvalidArgumentError.format('--agents', `expected a positive integer, got ${String(agents)}`);
  checkBudget(options.budget);
  const envWorkers = options.envWorkers ?? config.env.workers;
  if (!Number.isInteger(envWorkers) || envWorkers < 0) throw InvalidArgumentError.format('--env-workers', `expected a non-negative integer, got ${String(envWorkers)}`);
  const horizon = options.horizon ?? config.derived.maxHorizon;
  const settings = config.env.settings as Record<string, unknown>;
  const split = options.split ?? config.env.trainSplit;
  const indices = spec.catalog({ settings }).indices(split as Split);
  if (indices.length === 0) throw InvalidArgumentError.format(options.split === undefined ? 'env.trainSplit' : '--split', `split '${split}' of ${spec.name} has no tasks`);
  const seeds = Rng.fromSeed(config.seed).fork('simulate');

  // `memoryUsage.rss()` reads the resident size alone; `memoryUsage()` also walks every heap (about 1 ms each time).
  const baselineBytes = process.memoryUsage.rss();
  let peakBytes = baselineBytes;
  const sampleMemory = (): void => {
    peakBytes = Math.max(peakBytes, process.memoryUsage.rss());
  };
  const opened = await openRunner(options, envWorkers, horizon);
  const outcomes: Record<Outcome, number> = { success: 0, failure: 0, truncated: 0, length: 0, error: 0 };
  let episodes = 0;
  const lag = monitorEventLoopDelay({ resolution: 10 });
  const start = clock.now();
  const elapsed = () => (clock.now() - start) / 1000;
  const budget = options.budget;
  const flowBudget: FlowBudget = 'turns' in budget ? { turns: budget.turns } : 'seconds' in budget ? { until: start + budget.seconds * 1000 } : {};
  const spent = (i: number): boolean => ('turns' in budget ? opened.stats().turns >= budget.turns : 'episodes' in budget ? i >= budget.episodes : elapsed() >= budget.seconds);
  const plan = (i: number): EpisodePlan | null => {
    if (spent(i)) return null;
    const taskIndex = indices[i % indices.length] as number;
    return { taskId: `${spec.name}_${taskIndex}`, taskIndex, groupId: `sim/${i}`, trajectoryId: `sim/${i}`, seed: seeds.fork('episode', i).int(0x7fffffff) };
  };
  const onEpisode = (outcome: Outcome): void => {
    episodes++;
    outcomes[outcome]++;
  };
  const progressMs = options.progressMs ?? 1000;
  let lastProgress = 0;
  // Memory and progress are sampled on a wall-clock timer; unref'd so it never holds the process.
  const timer = setInterval(() => {
    sampleMemory();
    const now = elapsed();
    if (options.onProgress && (now - lastProgress) * 1000 >= progressMs) {
      lastProgress = now;
      options.onProgress({ seconds: now, turns: opened.stats().turns, episodes });
    }
  }, 100);
  timer.unref();
  const cpuBefore = process.cpuUsage();
  const mainBefore = mainThreadCpuSeconds();
  lag.enable();
  try {
    await opened.play(plan, onEpisode, flowBudget);
  } finally {
    lag.disable();
    clearInterval(timer);
    sampleMemory();
  }
  const seconds = elapsed();
  const { turns, cut: cutAtBudget } = opened.stats();
  const cpu = process.cpuUsage(cpuBefore);
  const mainAfter = mainThreadCpuSeconds();
  const perTurn = (us: number) => (turns > 0 ? us / turns : 0);
  const envPlacement = opened.envPlacement;
  await opened.close();
  const ms = (ns: number) => ns / 1e6;
  return {
    agents,
    policy: opened.description,
    envPlacement,
    horizon,
    episodes,
    cutAtBudget,
    turns,
    seconds,
    turnsPerSecond: seconds > 0 ? turns / seconds : 0,
    outcomes,
    memory: { baselineBytes, peakBytes, perEpisodeBytes: (peakBytes - baselineBytes) / agents },
    eventLoopLagMs: { p50: ms(lag.percentile(50)), p99: ms(lag.percentile(99)), max: ms(lag.max) },
    cpuMicrosPerTurn: {
      process: perTurn(cpu.user + cpu.system),
      mainThread: mainBefore === null || mainAfter === null ? null : perTurn((mainAfter - mainBefore) * 1e6),
    },
  };
}
