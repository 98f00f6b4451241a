/**
 * `npm run bench -- pretrained-shape [--tasks N] [--group N] [--horizon N] [--steps N] [--eval-tasks N] [--in-thread] [--shape qwen2.5-0.5b]`:
 * what a CPU run of `configs/babyai-llm-lora.yaml` costs on a SmolLM2-135M-shaped folder (random
 * BF16 weights, the full 49,152-id vocabulary; `--shape qwen2.5-0.5b`: Qwen2.5-0.5B's shape and
 * 151,936 ids; scripts/make-pretrained-shape.ts), with the shipped
 * settings apart from the episodes per step, the horizon and the evaluation size given here:
 * - per training step: the rollout, the reference pass (the base with adapters off, timed by
 *   wrapping `withAdaptersOff` in this process) and the learner (the rest of the training phase);
 * - memory: the printed estimate against the learner's wasm heap (its high-water mark) and the
 *   process's peak RSS (main thread and sampler worker together);
 * - the event loop's delay (p50, p99, max) during the step-0 evaluation, with the sampler in its
 *   inference worker — and with `--in-thread`, once more with it on the main thread.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { loadConfig, resolveConfig } from '../src/core/config.js';
import { parseOverride } from '../src/core/config/overrides.js';
import { tensorHeapBytes } from '../src/backend/heap.js';
import { TransformerModel } from '../src/models/transformer/model.js';
import type { RunEvent } from '../src/runtime/run-events.js';
import { trainRun } from '../src/runtime/train/train-run.js';
import { RunStore } from '../src/store/run-store.js';
import { writePretrainedShape } from '../scripts/make-pretrained-shape.js';

const flag = (args: string[], name: string, fallback: number): number => {
  const at = args.indexOf(`--${name}`);
  return at < 0 ? fallback : Number(args[at + 1]);
};
const gib = (bytes: number) => `${(bytes / 2 ** 30).toFixed(2)} GiB`;

/** Milliseconds the reference pass (the base with adapters off) took, summed. */
let referenceMs = 0;
function timeReferencePasses(): void {
  const original = TransformerModel.prototype.withAdaptersOff;
  TransformerModel.prototype.withAdaptersOff = function <T>(this: TransformerModel, fn: () => T): T {
    const started = performance.now();
    try {
      return original.call(this, fn) as T;
    } finally {
      referenceMs += performance.now() - started;
    }
  };
}

/** One run; returns its per-step figures and the event-loop delay during the step-0 evaluation. */
async function run(folder: string, dir: string, sets: string[], steps: number): Promise<{ events: RunEvent[]; lag: { p50: number; p99: number; max: number }; runDir: string; stepsMs: number[]; referenceMs: number[] }> {
  const config = resolveConfig(loadConfig('configs/babyai-llm-lora.yaml', [`model.from=${folder}`, `run.dir=${dir}`, `train.steps=${steps}`, ...sets].map(parseOverride)));
  const runDir = join(dir, `run-${Date.now()}`);
  const events: RunEvent[] = [];
  const histogram = monitorEventLoopDelay({ resolution: 5 });
  const stepsMs: number[] = [];
  const references: number[] = [];
  let stepStarted = 0;
  let referenceAtStart = 0;
  const result = await trainRun({
    config,
    runDir,
    onEvent: (event) => {
      events.push(event);
      if (event.type === 'info' && event.message.includes('| sampling:')) histogram.enable(); // the step-0 evaluation starts next
      if (event.type === 'eval' && event.step === 0) histogram.disable();
      if (event.type === 'started') {
        stepStarted = performance.now();
        referenceAtStart = referenceMs;
      }
      if (event.type === 'step') {
        stepsMs.push(performance.now() - stepStarted);
        references.push(referenceMs - referenceAtStart);
        stepStarted = performance.now();
        referenceAtStart = referenceMs;
      }
      if (event.type !== 'step') console.log(`  ${event.type === 'info' ? event.message : JSON.stringify(event)}`);
    },
  });
  if (result.status !== 'finished') throw new Error(`the run ${result.status}: ${result.error}`);
  const ms = (ns: number) => ns / 1e6;
  return { events, lag: { p50: ms(histogram.percentile(50)), p99: ms(histogram.percentile(99)), max: ms(histogram.max) }, runDir, stepsMs, referenceMs: references };
}

export async function main(args: string[]): Promise<void> {
  const tasks = flag(args, 'tasks', 2);
  const group = flag(args, 'group', 4);
  const horizon = flag(args, 'horizon', 2);
  const steps = flag(args, 'steps', 2);
  const evalTasks = flag(args, 'eval-tasks', 16);
  const dir = mkdtempSync(join(tmpdir(), 'turnwise-bench-shape-'));
  try {
    const at = args.indexOf('--shape');
    const shape = at < 0 ? 'smollm2-135m' : (args[at + 1] as string); // scripts/make-pretrained-shape.ts names the shapes
    const folder = join(dir, `${shape}-shaped`);
    await writePretrainedShape({ folder, shape });
    timeReferencePasses();
    const sets = [`algorithm.tasksPerStep=${tasks}`, `algorithm.groupSize=${group}`, `horizon.horizon=${horizon}`, 'algorithm.dropZeroAdvantage=false', `train.evalTasks=${evalTasks}`, 'train.evalEvery=1000', 'train.checkpointEvery=0'];
    console.log(`load ${loadavg()[0].toFixed(2)} | configs/babyai-llm-lora.yaml --set ${sets.join(' ')}`);
    const worker = await run(folder, dir, sets, steps);
    const store = RunStore.open(worker.runDir, { readonly: true });
    const rollout = store.metricsSeries('time/rolloutSec').map((p) => p.value);
    const train = store.metricsSeries('time/trainSec').map((p) => p.value);
    const tokens = store.metricsSeries('throughput/trainTokensPerSec').map((p, i) => p.value * (train[i] ?? 0));
    store.close();
    console.log('| step | rollout (s) | reference (s) | learner (s) | trained tokens |');
    console.log('|---|---|---|---|---|');
    rollout.forEach((r, i) => {
      const reference = (worker.referenceMs[i] ?? 0) / 1000;
      console.log(`| ${i + 1} | ${r.toFixed(0)} | ${reference.toFixed(0)} | ${((train[i] ?? 0) - reference).toFixed(0)} | ${Math.round(tokens[i] ?? 0)} |`);
    });
    const estimate = worker.events.find((e): e is Extract<RunEvent, { type: 'info' }> => e.type === 'info' && e.message.startsWith('memory needed:'));
    console.log(`memory: ${estimate?.message}`);
    console.log(`measured: learner heap ${gib(tensorHeapBytes() ?? 0)}, process peak RSS ${gib(process.resourceUsage().maxRSS * 1024)}`);
    console.log(`event-loop delay during the step-0 evaluation (${evalTasks} tasks), sampler in an inference worker: p50 ${worker.lag.p50.toFixed(1)} ms, p99 ${worker.lag.p99.toFixed(1)} ms, max ${worker.lag.max.toFixed(0)} ms`);
    if (args.includes('--in-thread')) {
      const inThread = await run(folder, dir, [...sets, 'runtime.inferenceWorkers=0'], 1);
      console.log(`event-loop delay during the step-0 evaluation, sampler on the main thread: p50 ${inThread.lag.p50.toFixed(1)} ms, p99 ${inThread.lag.p99.toFixed(1)} ms, max ${inThread.lag.max.toFixed(0)} ms`);
    }
    console.log(`load ${loadavg()[0].toFixed(2)} at the end`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
