/**
 * The concurrency part of `npm run bench -- scale` (issue #10): 10,000 concurrent BabyAI episodes
 * (level GoToRedBallGrey, AgentGym's babyai_0 level: the lightest GoTo level, ~15 µs per step)
 * played by the scripted BabyAI oracle in one process, each episode an episode actor with an
 * env-session actor on the in-process bus — once with the environments in-process, once in two
 * piscina worker threads. Goals: >= 50,000 turns/s, < 2 GiB resident.
 * Needs `npm run build` (workers load dist/ JS).
 */
import { loadavg } from 'node:os';
import { systemClock } from '../../src/core/clock.js';
import { parseConfig, resolveConfig } from '../../src/core/config.js';
import '../../src/envs/index.js';
import { getEnvironmentSpec } from '../../src/envs/registry.js';
import { type SimulateReport, simulate } from '../../src/runtime/simulate/simulate.js';
import type { ScaleOptions, ScaleSection } from './section.js';

const LEVEL = 'GoToRedBallGrey';
const MiB = 1024 * 1024;

async function run(agents: number, turns: number, envWorkers: number): Promise<{ report: SimulateReport; cpuSeconds: number }> {
  const config = resolveConfig(parseConfig({ seed: 1, env: { name: 'babyai', settings: { levels: [LEVEL] } }, horizon: { schedule: 'fixed', horizon: 20 } }));
  const cpu = process.cpuUsage();
  const report = await simulate({ config, spec: getEnvironmentSpec('babyai'), agents, policy: { kind: 'scripted' }, budget: { turns }, envWorkers, clock: systemClock });
  const used = process.cpuUsage(cpu);
  return { report, cpuSeconds: (used.user + used.system) / 1e6 };
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

/**
 * Measures both placements and compares them.
 * @example print(await measure({ quick: false }));
 */
export async function measure(options: ScaleOptions): Promise<ScaleSection> {
  const agents = options.quick ? 1_000 : 10_000;
  const turns = agents * 3;
  const load = loadavg()[0] ?? 0;
  const inProcess = await run(agents, turns, 0);
  const workers = await run(agents, turns, 2);
  const rows: ScaleSection['rows'] = [];
  for (const [name, { report, cpuSeconds }] of [['in-process envs', inProcess], ['2 worker-thread envs', workers]] as const) {
    rows.push([`${name}: turns/s`, `${fmt(report.turnsPerSecond)} (goal >= 50,000; ${report.turns} turns, ${report.episodes} episodes in ${report.seconds.toFixed(1)} s)`]);
    rows.push([`${name}: main-thread CPU per turn`, `${((cpuSeconds / report.turns) * 1e6).toFixed(0)} µs (includes the process's other threads)`]);
    rows.push([`${name}: resident memory peak`, `${(report.memory.peakBytes / MiB).toFixed(0)} MiB (goal < 2,048); ${(report.memory.perEpisodeBytes / 1024).toFixed(1)} KiB per live episode`]);
    rows.push([`${name}: event-loop lag p50 / p99 / max`, `${report.eventLoopLagMs.p50.toFixed(0)} / ${report.eventLoopLagMs.p99.toFixed(0)} / ${report.eventLoopLagMs.max.toFixed(0)} ms`]);
    rows.push([`${name}: outcomes`, `success ${report.outcomes.success}, failure ${report.outcomes.failure}, truncated ${report.outcomes.truncated}, error ${report.outcomes.error}`]);
  }
  rows.push(['workers / in-process turns/s', `${(workers.report.turnsPerSecond / inProcess.report.turnsPerSecond).toFixed(2)}x`]);
  return {
    title: `concurrency: ${fmt(agents)} concurrent BabyAI ${LEVEL} episodes, scripted oracle, one process`,
    rows,
    notes: [
      `${fmt(turns)} turns per placement (new episodes stop at the budget; those in flight finish); horizon 20`,
      'each episode is an episode actor (xstate) with an env-session actor served on the in-process bus; the worker run reuses the same process, so its memory baseline includes the first run',
      `load average ${load.toFixed(2)} at the start, ${(loadavg()[0] ?? 0).toFixed(2)} at the end (2 cores shared)`,
    ],
  };
}
