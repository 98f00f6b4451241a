/**
 * The model-driven agents part of `npm run bench -- scale` (issue #20 part 1): thousands of
 * concurrent BabyAI agents played by a trained checkpoint through `turnwise simulate`, the model
 * in inference worker threads (one per core) behind the sampler's dynamic batching, the main
 * thread only routing. Measured: turns/s and event-loop lag (goal: p99 < 50 ms) at 2,000 and
 * 10,000 agents, and at 2,000 agents with the model on the main thread (`--inference-workers 0`,
 * what the issue measured: p99 13.9 s), so the two placements compare in one run.
 *
 * The checkpoint is trained here first (the quickstart's config, 10 steps, no evaluations), so the
 * policy is a trained one whatever the machine holds. Each simulation runs in its own child process
 * (compiled CLI: `npm run build` first).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SimulateReport } from '../../src/runtime/simulate/simulate.js';
import type { ScaleOptions, ScaleSection } from './section.js';

const MiB = 1024 * 1024;
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

function cli(args: string[]): string {
  const child = spawnSync(process.execPath, ['dist/src/cli/main.js', ...args], { encoding: 'utf8', maxBuffer: 64 * MiB });
  if (child.status !== 0) throw new Error(`turnwise ${args[0]} failed (run \`npm run build\` first?): ${child.stderr.slice(-2000)}`);
  return child.stdout;
}

/** Trains the quickstart's model for `steps` steps into `dir`; returns the run folder. */
function trainCheckpoint(dir: string, steps: number): string {
  const config = join(dir, 'train.yaml');
  writeFileSync(
    config,
    [
      'seed: 1',
      `run: { dir: ${JSON.stringify(dir)}, name: policy }`,
      'env: { name: babyai, settings: { levels: [GoToRedBall] } }',
      'tokenizer: { vocabSize: 512, corpusEpisodes: 400 }',
      'model: { dModel: 64, nLayers: 2, nHeads: 4, ffnHidden: 172, maxContext: 256 }',
      'context: { history: 0, includeInstruction: false }',
      'sampling: { temperature: 1, topP: 1, maxActionTokens: 24, constrained: true }',
      'algorithm: { name: grpo, tasksPerStep: 8, groupSize: 8, lr: 0.001 }',
      'horizon: { schedule: fixed, horizon: 5 }',
      `train: { steps: ${steps}, evalEvery: 0, checkpointEvery: ${steps} }`,
      '',
    ].join('\n'),
  );
  cli(['train', config]);
  return join(dir, 'policy');
}

function simulate(configPath: string, run: string, agents: number, seconds: number, inferenceWorkers: number | null): SimulateReport {
  const args = ['simulate', configPath, '--agents', String(agents), '--policy', `checkpoint:${run}`, '--seconds', String(seconds), '--env-workers', '0', '--json'];
  if (inferenceWorkers !== null) args.push('--inference-workers', String(inferenceWorkers));
  return JSON.parse(cli(args)) as SimulateReport;
}

/**
 * Trains the checkpoint, runs the three simulations, compares.
 * @example print(await measure({ quick: false }));
 */
export async function measure(options: ScaleOptions): Promise<ScaleSection> {
  const loadStart = loadavg()[0] ?? 0;
  const dir = mkdtempSync(join(tmpdir(), 'turnwise-agents-'));
  const cores = availableParallelism();
  const runs: [string, SimulateReport][] = [];
  const small = options.quick ? 200 : 2_000;
  const large = options.quick ? 1_000 : 10_000;
  const seconds = options.quick ? 10 : 30;
  try {
    const trainStart = performance.now();
    const run = trainCheckpoint(dir, options.quick ? 2 : 10);
    const trainSeconds = (performance.now() - trainStart) / 1000;
    const configPath = join(dir, 'simulate.yaml');
    writeFileSync(configPath, 'seed: 7\nenv: { name: babyai, settings: { levels: [GoToRedBall] } }\nhorizon: { schedule: fixed, horizon: 5 }\n');
    runs.push([`${fmt(small)} agents, model in ${cores} inference workers`, simulate(configPath, run, small, seconds, null)]);
    runs.push([`${fmt(large)} agents, model in ${cores} inference workers`, simulate(configPath, run, large, seconds, null)]);
    runs.push([`${fmt(small)} agents, model on the main thread`, simulate(configPath, run, small, seconds, 0)]);
    const rows: ScaleSection['rows'] = [];
    for (const [name, r] of runs) {
      rows.push([`${name}: turns/s`, `${fmt(r.turnsPerSecond)} (${fmt(r.turns)} turns, ${fmt(r.episodes)} episodes in ${r.seconds.toFixed(1)} s)`]);
      rows.push([`${name}: event-loop lag p50 / p99 / max`, `${r.eventLoopLagMs.p50.toFixed(0)} / ${r.eventLoopLagMs.p99.toFixed(0)} / ${r.eventLoopLagMs.max.toFixed(0)} ms${name.includes('workers') ? ' (goal: p99 < 50)' : ''}`]);
      rows.push([`${name}: main thread per turn, memory peak`, `${r.cpuMicrosPerTurn.mainThread === null ? 'n/a' : `${r.cpuMicrosPerTurn.mainThread.toFixed(0)} µs`}; ${(r.memory.peakBytes / MiB).toFixed(0)} MiB`]);
    }
    const [workersSmall, , mainSmall] = runs.map(([, r]) => r) as [SimulateReport, SimulateReport, SimulateReport];
    rows.push([`${fmt(small)} agents: workers / main thread, turns/s`, `${(workersSmall.turnsPerSecond / mainSmall.turnsPerSecond).toFixed(2)}x`]);
    rows.push([`${fmt(small)} agents: main thread / workers, p99 lag`, `${(mainSmall.eventLoopLagMs.p99 / Math.max(workersSmall.eventLoopLagMs.p99, 0.001)).toFixed(1)}x`]);
    return {
      title: 'agents: concurrent BabyAI GoToRedBall agents played by a trained checkpoint (turnwise simulate --policy checkpoint:…)',
      rows,
      notes: [
        `checkpoint: the quickstart's model and config trained ${options.quick ? 2 : 10} steps here (${trainSeconds.toFixed(0)} s); horizon 5; sampled at T=1, constrained to the listed actions`,
        `new episodes for ${seconds} s, then those in flight finish (counted); environments in-process; ${runs[0]?.[1].policy ?? ''}`,
        `load average ${loadStart.toFixed(2)} at the start, ${(loadavg()[0] ?? 0).toFixed(2)} at the end (${cores} cores, shared)`,
      ],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
