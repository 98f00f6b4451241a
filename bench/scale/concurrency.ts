/**
 * The concurrency part of `npm run bench -- scale` (issue #10): 10,000 concurrent BabyAI episodes
 * (level GoToRedBallGrey, AgentGym's babyai_0 level) played by the scripted BabyAI oracle in one
 * process on the flow path of `turnwise simulate` — each episode an `episode-flow` xstate actor
 * seeing one event per turn, fed by the batched driver. Goals: >= 50,000 turns/s, < 2 GiB resident.
 *
 * Four measurements, so the figures can be told apart:
 * 1. BabyAI alone: reset + oracle + step in a plain loop, no actors — the environment's own CPU per turn.
 * 2. Runtime alone: the same driver, actors and oracle over an instant stand-in environment — the
 *    main thread's ceiling when the environments cost nothing.
 * 3. and 4. `turnwise simulate` with the environments in-process, then in 2 worker threads, each in
 *    its own child process (so each resident-memory peak is its own).
 * Needs `npm run build` (the child processes and the workers run dist/ JS).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '../../src/core/clock.js';
import type { Observation, StepResult } from '../../src/core/types.js';
import '../../src/envs/index.js';
import { getEnvironmentSpec } from '../../src/envs/registry.js';
import { type EnvOp, OP } from '../../src/runtime/env-pool/batch-codec.js';
import type { BatchEnv, EnvAnswer } from '../../src/runtime/env-pool/batch-env.js';
import type { FlowEpisodeMode } from '../../src/actors/episode-flow-steps.js';
import { FlowDriver } from '../../src/runtime/simulate/flow-driver.js';
import { babyaiFlowPolicy } from '../../src/runtime/simulate/flow-policies.js';
import type { SimulateReport } from '../../src/runtime/simulate/simulate.js';
import { mainThreadCpuSeconds } from '../../src/runtime/simulate/thread-cpu.js';
import type { ScaleOptions, ScaleSection } from './section.js';

const LEVEL = 'GoToRedBallGrey';
const MiB = 1024 * 1024;
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

/** BabyAI reset + oracle + step in a loop over 1,000 instances: the environment's CPU per turn. */
function babyaiAlone(episodes: number): { usPerTurn: number; turnsPerEpisode: number; resetUs: number; stepUs: number } {
  const spec = getEnvironmentSpec('babyai');
  const settings = { levels: [LEVEL] };
  const indices = spec.catalog({ settings }).indices('train');
  const envs = Array.from({ length: 1000 }, () => spec.create({ settings }));
  const policy = babyaiFlowPolicy();
  let turns = 0;
  let resetMs = 0;
  let stepMs = 0;
  const cpu = process.cpuUsage();
  for (let e = 0; e < episodes; e++) {
    const lane = e % envs.length;
    const env = envs[lane] as (typeof envs)[number];
    let t = performance.now();
    let observation = env.reset(indices[e % indices.length] as number) as Observation;
    resetMs += performance.now() - t;
    policy.begin(lane, observation);
    for (let k = 0; k < 20; k++) {
      const [action] = policy.act([{ lane, observation, turnCount: k, seed: e }]);
      t = performance.now();
      const step = env.step(action as string) as StepResult;
      stepMs += performance.now() - t;
      turns++;
      observation = step.observation;
      if (step.done) break;
    }
  }
  const used = process.cpuUsage(cpu);
  return { usPerTurn: (used.user + used.system) / turns, turnsPerEpisode: turns / episodes, resetUs: (resetMs * 1000) / episodes, stepUs: (stepMs * 1000) / turns };
}

/** An environment that answers at once with BabyAI-like texts; episode on slot s ends after (s % 4) + 1 steps. */
class InstantEnv implements BatchEnv {
  readonly description = 'instant stand-in';
  readonly shards = 1;
  private readonly steps = new Map<number, number>();
  private readonly actions = ['turn left', 'turn right', 'move forward', 'go to red ball 1', 'go to grey key 2'];

  shardOf(): number {
    return 0;
  }

  async run(_shard: number, ops: readonly EnvOp[]): Promise<readonly EnvAnswer[]> {
    return ops.map((op) => {
      if (op.kind !== OP.step) {
        this.steps.set(op.slot, 0);
        return { observation: { text: 'Your goal: go to the red ball\nYou see a wall 2 steps forward', availableActions: this.actions }, reward: 0, done: false };
      }
      const n = (this.steps.get(op.slot) ?? 0) + 1;
      this.steps.set(op.slot, n);
      const done = n >= (op.slot % 4) + 1;
      return { observation: { text: 'You see a red ball 1 step forward', availableActions: this.actions }, reward: done ? 1 : 0, done, success: done };
    });
  }

  async close(): Promise<void> {}
}

export async function runtimeAlone(
  agents: number,
  turnBudget: number,
  episodes: FlowEpisodeMode = 'snapshots',
): Promise<{ turnsPerSecond: number; mainUsPerTurn: number | null; turns: number; episodes: number; opsPerBatch: number }> {
  const driver = new FlowDriver({ env: new InstantEnv(), policy: babyaiFlowPolicy(), envName: 'babyai', lanes: agents, step: 0, horizon: 20, envTimeoutMs: 60_000, clock: systemClock, episodes });
  let turns = 0;
  let ended = 0;
  const main = mainThreadCpuSeconds();
  const start = performance.now();
  await driver.run(
    (i) => (turns >= turnBudget ? null : { taskId: `babyai_${i}`, taskIndex: i, groupId: 'g', trajectoryId: `t${i}`, seed: i }),
    (_, r) => {
      turns += r.turnCount;
      ended++;
    },
  );
  const seconds = (performance.now() - start) / 1000;
  const mainAfter = mainThreadCpuSeconds();
  const { batches, ops } = driver.stats();
  return { turnsPerSecond: turns / seconds, mainUsPerTurn: main === null || mainAfter === null ? null : ((mainAfter - main) * 1e6) / turns, turns, episodes: ended, opsPerBatch: ops / batches };
}

/** `turnwise simulate` in a child process (compiled CLI), so its memory peak is its own. */
function simulateChild(configPath: string, agents: number, turns: number, envWorkers: number): SimulateReport {
  const args = ['dist/src/cli/main.js', 'simulate', configPath, '--agents', String(agents), '--turns', String(turns), '--env-workers', String(envWorkers), '--json'];
  const child = spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 16 * MiB });
  if (child.status !== 0) throw new Error(`turnwise simulate failed (run \`npm run build\` first?): ${child.stderr}`);
  return JSON.parse(child.stdout) as SimulateReport;
}

const us = (n: number | null) => (n === null ? 'n/a' : `${n.toFixed(1)} µs`);

/**
 * Measures the four runs and compares them with the goals.
 * @example print(await measure({ quick: false }));
 */
export async function measure(options: ScaleOptions): Promise<ScaleSection> {
  const agents = options.quick ? 1_000 : 10_000;
  const turns = agents * 10;
  const loadStart = loadavg()[0] ?? 0;
  const env = babyaiAlone(options.quick ? 2_000 : 20_000);
  const runtime = await runtimeAlone(agents, turns * 3);
  // The same with one live xstate actor per episode (issue #20 part 4 measures which is cheaper).
  const actors = await runtimeAlone(agents, turns * 3, 'actors');
  const dir = mkdtempSync(join(tmpdir(), 'turnwise-concurrency-'));
  const configPath = join(dir, 'config.yaml');
  writeFileSync(configPath, `seed: 1\nenv:\n  name: babyai\n  settings:\n    levels: [${LEVEL}]\nhorizon:\n  schedule: fixed\n  horizon: 20\n`);
  let runs: [string, SimulateReport][];
  try {
    runs = [
      ['in-process envs', simulateChild(configPath, agents, turns, 0)],
      ['2 worker-thread envs', simulateChild(configPath, agents, turns, 2)],
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const rows: ScaleSection['rows'] = [
    ['BabyAI alone (no actors): CPU per turn', `${env.usPerTurn.toFixed(1)} µs (reset ${env.resetUs.toFixed(0)} µs per episode, step ${env.stepUs.toFixed(1)} µs, ${env.turnsPerEpisode.toFixed(2)} turns per episode) = ${fmt(1e6 / env.usPerTurn)} turns/s per core`],
    [
      'runtime cost per turn: snapshots (machine transitions, the default) — instant env',
      `main thread ${us(runtime.mainUsPerTurn)} per turn (goal <= 15 µs); ${fmt(runtime.turnsPerSecond)} turns/s; ${runtime.opsPerBatch.toFixed(0)} ops per batch (${fmt(runtime.turns)} turns, ${fmt(runtime.episodes)} episodes)`,
    ],
    ['runtime cost per turn: one live actor per episode — instant env', `main thread ${us(actors.mainUsPerTurn)} per turn; ${fmt(actors.turnsPerSecond)} turns/s`],
    ['snapshots / live actors, main-thread cost per turn', runtime.mainUsPerTurn !== null && actors.mainUsPerTurn !== null ? `${(runtime.mainUsPerTurn / actors.mainUsPerTurn).toFixed(2)}x` : 'n/a'],
  ];
  for (const [name, r] of runs) {
    rows.push([`${name}: turns/s`, `${fmt(r.turnsPerSecond)} (${name.includes('worker') ? 'goal >= 20,000 with env workers; ' : ''}${fmt(r.turns)} turns, ${fmt(r.episodes)} episodes in ${r.seconds.toFixed(1)} s)`]);
    rows.push([`${name}: CPU per turn`, `main thread ${us(r.cpuMicrosPerTurn.mainThread)}, all threads ${us(r.cpuMicrosPerTurn.process)}`]);
    rows.push([`${name}: resident memory peak`, `${(r.memory.peakBytes / MiB).toFixed(0)} MiB (goal < 2,048); ${(r.memory.perEpisodeBytes / 1024).toFixed(1)} KiB per live episode`]);
    rows.push([`${name}: event-loop lag p50 / p99 / max`, `${r.eventLoopLagMs.p50.toFixed(0)} / ${r.eventLoopLagMs.p99.toFixed(0)} / ${r.eventLoopLagMs.max.toFixed(0)} ms`]);
    rows.push([`${name}: outcomes`, `success ${r.outcomes.success}, failure ${r.outcomes.failure}, truncated ${r.outcomes.truncated}, error ${r.outcomes.error}`]);
  }
  const [inProcess, workers] = runs.map(([, r]) => r) as [SimulateReport, SimulateReport];
  rows.push(['workers / in-process turns/s', `${(workers.turnsPerSecond / inProcess.turnsPerSecond).toFixed(2)}x`]);
  return {
    title: `concurrency: ${fmt(agents)} concurrent BabyAI ${LEVEL} episodes, scripted oracle, one process`,
    rows,
    notes: [
      `${fmt(turns)} turns per simulate run (new episodes stop at the budget; those in flight finish); horizon 20`,
      'each episode is an episode-flow xstate machine (one event per turn; its snapshot stepped by the machine transition function, or a live actor where named) fed by the batched FlowDriver; environments in-process or in piscina workers (one transferred buffer per batch)',
      'main-thread CPU is read from /proc/self/task/<pid>/stat (10 ms ticks); all-threads CPU from process.cpuUsage()',
      `load average ${loadStart.toFixed(2)} at the start, ${(loadavg()[0] ?? 0).toFixed(2)} at the end (2 cores shared)`,
    ],
  };
}
