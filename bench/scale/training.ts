/**
 * The training part of `npm run bench -- scale` (issues #10, #20): training tokens/s of the default
 * policy model (configs/babyai-grpo.yaml's `model`), in one process and data-parallel across the
 * machine's cores (`train.dataParallel`), against the same model in PyTorch
 * (bench/torch_reference.py) with 1 thread and with every core, in one run; then the same per core and
 * per machine at a larger shape (d512 L4 H8 ffn 1376 vocab 8192, [8, 128]). Issue #31's goals: 1.0x a current
 * PyTorch 2.x per core and per machine. The PyTorch interpreter comes from `TORCH_PYTHON`, else
 * Debian's (1.13; bench/torch-python.ts); with a 1.x the rows also show the 1.3x proxy bar for 2.x.
 * Every figure is measured in interleaved rounds and printed as its best with the spread, per
 * wall-second and per CPU-second, with the share of the core's FMA peak (bench/flops.ts).
 *
 * What one training step is, on both sides: a [32, 64] (or [8, 128]) batch of random tokens with
 * every position a target, the PPO-clip token loss (token-mean), the gradient, global-norm clipping
 * at 1 and one Adam update. turnwise runs the learner's own code for it: `accumulateGradients` in-process, or
 * the `GradientPool` (shards on worker threads, gradients added, one optimizer step here).
 * With the native matmul path (`model.matmul: auto` and the addon loaded) it also measures one
 * process with every core as BLAS threads and one process with the wasm kernels only, so the
 * addon's share shows in the same run, and one with the native non-matmul kernels off (Adam,
 * RMSNorm, SwiGLU, RoPE, softmax: `setNativeUse('matmul')`), so theirs shows too.
 */
import { spawnSync } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { globalNormScale } from '../../src/algorithms/grad-clip.js';
import { loadConfig } from '../../src/core/config.js';
import { Rng } from '../../src/core/rng.js';
import { describeBackend, selectBackend } from '../../src/backend/select.js';
import { tf } from '../../src/backend/tf.js';
import { type NativeBlas, nativeBlas } from '../../src/backend/native-blas.js';
import { nativeUse, setNativeUse } from '../../src/backend/native.js';
import { GradientPool } from '../../src/learner/data-parallel/gradient-pool.js';
import { accumulateGradients, type GradientOptions } from '../../src/learner/grad-accumulate.js';
import { AdamW } from '../../src/learner/optimizer.js';
import type { MicroBatch } from '../../src/learner/train-contract.js';
import { TransformerModel, type TransformerConfig } from '../../src/models/transformer/model.js';
import { describePeak, peakShare, trainStepFlops } from '../flops.js';
import { Rates, ratio } from '../samples.js';
import { describeTorch, TORCH1_TO_2_MARGIN, torchEnv, torchIsCurrent, torchPython } from '../torch-python.js';
import type { ScaleOptions, ScaleSection } from './section.js';

/** One training workload: the model's shape and the batch. */
interface Workload {
  readonly shape: TransformerConfig;
  readonly batch: number;
  readonly seq: number;
}

const VOCAB = 512; // the default tokenizer's vocabulary (tokenizer.vocabSize)
/** Issue #20's larger shape. */
const LARGE: Workload = {
  shape: { vocabSize: 8192, dModel: 512, nLayers: 4, nHeads: 8, ffnHidden: 1376, maxContext: 256, ropeTheta: 10000, rmsNormEps: 1e-5, tieEmbeddings: false },
  batch: 8,
  seq: 128,
};
const GRADIENT_OPTIONS: GradientOptions = {
  temperature: 1,
  clipRatio: 0.2,
  entropyCoef: 0,
  dualClip: null,
  klEstimator: 'k3',
  offPolicy: { kind: 'none' },
  valueClip: null,
  valueCoef: 1,
  klCoef: 0,
  warmingUp: false,
};

/** The default policy's shape, read from the quickstart config so the bench follows it. */
function defaultShape(): TransformerConfig {
  const m = loadConfig('configs/babyai-grpo.yaml').model;
  return { vocabSize: VOCAB, dModel: m.dModel, nLayers: m.nLayers, nHeads: m.nHeads, ffnHidden: m.ffnHidden, maxContext: m.maxContext, ropeTheta: m.ropeTheta, rmsNormEps: 1e-5, tieEmbeddings: m.tieEmbeddings };
}

/** The [batch, seq] step as `shards` micro-batches of batch / shards rows, token-mean weights over all. */
function syntheticStep(work: Workload, shards: number): MicroBatch[] {
  const { batch: BATCH, seq: SEQ } = work;
  const VOCAB = work.shape.vocabSize;
  const rng = Rng.fromSeed(5);
  const total = BATCH * SEQ;
  const rows = BATCH / shards;
  return Array.from({ length: shards }, () => {
    const n = rows * SEQ;
    return {
      batch: {
        batchSize: rows,
        seqLen: SEQ,
        inputIds: Int32Array.from({ length: n }, () => rng.int(VOCAB)),
        attentionMask: new Uint8Array(n).fill(1),
        targetPositions: Int32Array.from({ length: n }, (_, i) => i),
        targetIds: Int32Array.from({ length: n }, () => rng.int(VOCAB)),
        allowedOffsets: null,
        allowedIds: null,
      },
      lossMask: new Float32Array(n).fill(1),
      oldLogprobs: new Float32Array(n).fill(-Math.log(VOCAB)),
      advantages: Float32Array.from({ length: n }, () => rng.normal()),
      returns: new Float32Array(n),
      oldValues: null,
      refLogprobs: null,
      weights: new Float32Array(n).fill(1 / total),
      tokenWeights: new Float32Array(n).fill(1 / total),
      tokenCount: total,
      tokens: n,
    };
  });
}

/**
 * Runs `step` for about `seconds` after at least `warmup` steps and `seconds` / 2 of them (steady
 * state: V8 tiers code up per isolate, and the data-parallel arm starts fresh worker isolates
 * whose first ~40 steps ran ~1.4x slower than their later ones); records tokens per wall- and per
 * CPU-second in `into`. PyTorch's eager steps need no such warm-up (bench/torch_reference.py: 3).
 */
async function rate(work: Workload, seconds: number, warmup: number, step: () => Promise<void>, into: Rates): Promise<void> {
  const warmUntil = performance.now() + (seconds / 2) * 1000;
  for (let i = 0; i < warmup || performance.now() < warmUntil; i++) await step();
  let steps = 0;
  const cpu = process.cpuUsage();
  const start = performance.now();
  while (performance.now() - start < seconds * 1000) {
    await step();
    steps++;
  }
  const used = process.cpuUsage(cpu);
  into.add(steps * work.batch * work.seq, { wall: (performance.now() - start) / 1000, cpu: (used.user + used.system) / 1e6 });
}

/** One learner update from summed gradients: clip at norm 1, then Adam. */
function update(model: TransformerModel, optimizer: AdamW, grads: tf.Tensor[]): void {
  const { scale } = globalNormScale(grads, 1);
  optimizer.apply(model.trainableVariables(), grads, scale); // the clip folded into the update, as the trainer does
  tf.dispose(grads);
}

async function turnwiseRate(work: Workload, workers: number, seconds: number, into: Rates): Promise<void> {
  const { shape } = work;
  const model = new TransformerModel(shape, Rng.fromSeed(1));
  const optimizer = new AdamW({ lr: 1e-3, beta1: 0.9, beta2: 0.99 });
  try {
    if (workers === 1) {
      const chunk = syntheticStep(work, 1);
      return await rate(
        work,
        seconds,
        2,
        async () => {
          update(model, optimizer, accumulateGradients({ policy: model, critic: null }, chunk, GRADIENT_OPTIONS, () => undefined).actorGrads);
        },
        into,
      );
    }
    const pool = new GradientPool({ workers, spec: { policy: shape, critic: null }, policy: model, critic: null });
    try {
      const chunk = syntheticStep(work, workers);
      // Warm-up also starts the threads and their backends.
      return await rate(
        work,
        seconds,
        3,
        async () => {
          update(model, optimizer, (await pool.accumulate(chunk, GRADIENT_OPTIONS, () => undefined)).actorGrads);
        },
        into,
      );
    } finally {
      await pool.close();
    }
  } finally {
    optimizer.dispose();
    model.dispose();
  }
}

/** One PyTorch run of `steps` steps with `threads` threads, recorded in `into`; the note says which PyTorch or why none. */
function torchRate(work: Workload, threads: number, steps: number, into: Rates): string {
  const { shape } = work;
  const torch = torchPython();
  if (torch.version === null) return describeTorch(torch);
  const args = ['bench/torch_reference.py', '--d-model', shape.dModel, '--layers', shape.nLayers, '--heads', shape.nHeads, '--ffn', shape.ffnHidden, '--vocab', shape.vocabSize, '--batch', work.batch, '--seq', work.seq, '--steps', steps, '--threads', threads].map(String);
  const run = spawnSync(torch.python, args, { encoding: 'utf8', env: torchEnv(threads) });
  if (run.status !== 0) return `torch reference failed: ${run.stderr.slice(-300)}`;
  const parsed = JSON.parse(run.stdout.trim().split('\n').pop() as string) as { trainTokensPerSec: number; trainTokensPerCpuSec: number };
  into.addRates(parsed.trainTokensPerSec, parsed.trainTokensPerCpuSec);
  return describeTorch(torch);
}

/** With the native non-matmul kernels off while `f` runs (matmuls stay native). */
async function withoutNativeKernels<T>(f: () => Promise<T>): Promise<T> {
  const was = nativeUse();
  setNativeUse(was === 'off' ? 'off' : 'matmul');
  try {
    return await f();
  } finally {
    setNativeUse(was);
  }
}

/** The larger shape's figures. */
interface LargeRates {
  readonly single: Rates;
  readonly matmulOnly: Rates;
  readonly torch1: Rates;
  /** Per machine: one process with every core as BLAS threads, data parallel across the cores, PyTorch with every core. */
  readonly singleAllThreads: Rates;
  readonly parallel: Rates;
  readonly torchAll: Rates;
}

/**
 * The larger shape, per core (turnwise with and without the native kernels, PyTorch 1 thread) and
 * per machine (turnwise's two ways of using every core, PyTorch with every core); `rounds` interleaved rounds.
 */
async function largeShape(rounds: number, seconds: number, torchSteps: number, blas: NativeBlas | null, cores: number): Promise<LargeRates> {
  const out: LargeRates = { single: new Rates(), matmulOnly: new Rates(), torch1: new Rates(), singleAllThreads: new Rates(), parallel: new Rates(), torchAll: new Rates() };
  for (let round = 0; round < rounds; round++) {
    blas?.setThreads(1);
    await turnwiseRate(LARGE, 1, seconds, out.single);
    if (blas !== null) await withoutNativeKernels(() => turnwiseRate(LARGE, 1, seconds, out.matmulOnly));
    torchRate(LARGE, 1, torchSteps, out.torch1);
    if (cores > 1) {
      if (blas !== null) {
        blas.setThreads(cores);
        await turnwiseRate(LARGE, 1, seconds, out.singleAllThreads);
        blas.setThreads(1);
      }
      await turnwiseRate(LARGE, cores, seconds, out.parallel);
      torchRate(LARGE, cores, torchSteps, out.torchAll);
    }
  }
  blas?.setThreads(1);
  return out;
}

/**
 * Measures the training figures; see the file comment.
 * @example const section = await measure({ quick: true }); // rows: tokens/s and ratios
 */
export async function measure(options: ScaleOptions): Promise<ScaleSection> {
  const backend = await selectBackend('auto');
  const work: Workload = { shape: defaultShape(), batch: 32, seq: 64 };
  const { shape } = work;
  const cores = availableParallelism();
  // The machine is shared: each figure is measured in `rounds` interleaved rounds, so a burst of
  // someone else's load hits all of them alike rather than one of them; the best and the spread are shown.
  const rounds = options.quick ? 1 : 3;
  const seconds = options.quick ? 1.5 : 4;
  const torchSteps = options.quick ? 10 : 30;
  const load = loadavg()[0];
  const r = { single: new Rates(), singleAllThreads: new Rates(), parallel: new Rates(), torch1: new Rates(), torchAll: new Rates(), wasmOnly: new Rates(), matmulOnly: new Rates() };
  const blas = nativeUse() !== 'off' && (backend.matmul ?? '').startsWith('native') ? nativeBlas().blas : null;
  let torchNote = describeTorch(torchPython());
  for (let round = 0; round < rounds; round++) {
    // Per core: one process, one BLAS thread (PyTorch's 1-thread setting). OpenBLAS threads are per
    // process, and the gradient workers pin them to 1, so every figure sets them first.
    blas?.setThreads(1);
    await turnwiseRate(work, 1, seconds, r.single);
    if (blas !== null) await withoutNativeKernels(() => turnwiseRate(work, 1, seconds, r.matmulOnly));
    if (blas !== null && cores > 1) {
      blas.setThreads(cores);
      await turnwiseRate(work, 1, seconds, r.singleAllThreads);
      // The same process with the native path off: what the addon adds.
      blas.setThreads(1);
      const was = nativeUse();
      setNativeUse('off');
      try {
        await turnwiseRate(work, 1, seconds, r.wasmOnly);
      } finally {
        setNativeUse(was);
      }
    }
    if (cores > 1) await turnwiseRate(work, cores, seconds, r.parallel);
    torchNote = torchRate(work, 1, torchSteps, r.torch1);
    if (cores > 1) torchRate(work, cores, torchSteps, r.torchAll);
  }
  blas?.setThreads(1);
  const large = await largeShape(options.quick ? 1 : 2, options.quick ? 3 : 8, options.quick ? 3 : 8, blas, cores);
  const largeMachine = Math.max(large.single.best, large.parallel.best, large.singleAllThreads.best);
  const largeTorchMachine = Math.max(large.torch1.best, large.torchAll.best);
  const machine = Math.max(r.single.best, r.parallel.best, r.singleAllThreads.best);
  const torchMachine = Math.max(r.torch1.best, r.torchAll.best);
  const proxy = !torchIsCurrent(torchPython());
  const L = LARGE.shape;
  const flopsPerToken = trainStepFlops(shape, work.batch, work.seq, null) / (work.batch * work.seq);
  const largeFlopsPerToken = trainStepFlops(L, LARGE.batch, LARGE.seq, null) / (LARGE.batch * LARGE.seq);
  const share = (rates: Rates, flops: number) => peakShare(rates.bestCpu * flops) || 'n/a';
  const vs = (a: Rates, b: Rates) => `${ratio(a.best, b.best)} wall, ${ratio(a.bestCpu, b.bestCpu)} CPU (goal >= 1.0x)`;
  const proxyRow = (a: Rates, b: Rates): Array<[string, string]> =>
    proxy ? [[`turnwise / (${TORCH1_TO_2_MARGIN} x PyTorch 1.x) per core: a proxy bar for 2.x (set TORCH_PYTHON to measure 2.x)`, ratio(a.best, b.best * TORCH1_TO_2_MARGIN)]] : [];
  return {
    title: 'training: the default policy model, and d512 L4 vocab 8192',
    rows: [
      [`turnwise, 1 process${blas !== null ? ', 1 BLAS thread' : ''}`, `${r.single.describe('tok/s')}; ${share(r.single, flopsPerToken)}`],
      ['turnwise, 1 process, native matmuls only (non-matmul kernels in wasm)', blas !== null ? `${r.matmulOnly.describe('tok/s')} (native kernels: ${ratio(r.single.best, r.matmulOnly.best)})` : 'n/a (no native path here)'],
      [`turnwise, 1 process, ${cores} BLAS threads`, blas !== null && cores > 1 ? r.singleAllThreads.describe('tok/s') : 'n/a'],
      ['turnwise, 1 process, wasm kernels only (model.matmul: wasm)', blas !== null ? `${r.wasmOnly.describe('tok/s')} (native path: ${ratio(r.single.best, r.wasmOnly.best)})` : 'n/a (no native path here)'],
      [`turnwise, dataParallel ${cores} (worker threads)`, cores > 1 ? `${r.parallel.describe('tok/s')} (${ratio(r.parallel.best, r.single.best)} of 1 process)` : 'n/a (1 core)'],
      ['PyTorch, 1 thread', `${r.torch1.describe('tok/s')}; ${share(r.torch1, flopsPerToken)}`],
      [`PyTorch, ${cores} threads`, r.torchAll.describe('tok/s')],
      ['turnwise / PyTorch per core (1 process / 1 thread)', vs(r.single, r.torch1)],
      ...proxyRow(r.single, r.torch1),
      // PyTorch "using the whole machine" is its faster setting: with any other load, N OpenMP threads can lose to 1.
      [`turnwise / PyTorch per machine (each side's fastest: turnwise 1 process or dataParallel ${cores}, PyTorch 1 or ${cores} threads)`, `${ratio(machine, torchMachine)} wall (goal >= 1.0x)`],
      [`d${L.dModel} L${L.nLayers}: turnwise, 1 process, 1 BLAS thread`, `${large.single.describe('tok/s')}; ${share(large.single, largeFlopsPerToken)}`],
      [`d${L.dModel} L${L.nLayers}: turnwise, native matmuls only`, blas !== null ? `${large.matmulOnly.describe('tok/s')} (native kernels: ${ratio(large.single.best, large.matmulOnly.best)})` : 'n/a'],
      [`d${L.dModel} L${L.nLayers}: PyTorch, 1 thread`, `${large.torch1.describe('tok/s')}; ${share(large.torch1, largeFlopsPerToken)}`],
      [`d${L.dModel} L${L.nLayers}: turnwise / PyTorch per core`, vs(large.single, large.torch1)],
      ...proxyRow(large.single, large.torch1),
      [`d${L.dModel} L${L.nLayers}: turnwise, 1 process, ${cores} BLAS threads`, blas !== null && cores > 1 ? large.singleAllThreads.describe('tok/s') : 'n/a'],
      [`d${L.dModel} L${L.nLayers}: turnwise, dataParallel ${cores} (worker threads)`, cores > 1 ? `${large.parallel.describe('tok/s')} (${ratio(large.parallel.best, large.single.best)} of 1 process)` : 'n/a (1 core)'],
      [`d${L.dModel} L${L.nLayers}: PyTorch, ${cores} threads`, cores > 1 ? large.torchAll.describe('tok/s') : 'n/a (1 core)'],
      [`d${L.dModel} L${L.nLayers}: turnwise / PyTorch per machine (each side's fastest setting)`, `${ratio(largeMachine, largeTorchMachine)} wall (goal >= 1.0x)`],
    ],
    notes: [
      `default: d${shape.dModel} L${shape.nLayers} H${shape.nHeads} ffn${shape.ffnHidden} vocab ${shape.vocabSize}, batch [${work.batch}, ${work.seq}]; large: d${L.dModel} L${L.nLayers} H${L.nHeads} ffn${L.ffnHidden} vocab ${L.vocabSize}, batch [${LARGE.batch}, ${LARGE.seq}]; every position trained; PPO-clip + clip-norm + Adam on both sides`,
      `${rounds} interleaved round(s) per default-shape figure, ${options.quick ? 1 : 2} for the large shape (best, with the spread; each turnwise run after ${seconds / 2} s of warm-up steps, PyTorch after 3); ${describeBackend(backend)}; ${torchNote}${process.env.OPENBLAS_CORETYPE ? `; OPENBLAS_CORETYPE=${process.env.OPENBLAS_CORETYPE} from the environment` : ''}`,
      `${describePeak()}; shares of it from the per-CPU-second rates (model FLOPs per token: ${(flopsPerToken / 1e6).toFixed(2)} M default, ${(largeFlopsPerToken / 1e6).toFixed(1)} M large)`,
      `${cores} cores; load average ${load.toFixed(2)} at the start, ${loadavg()[0].toFixed(2)} at the end`,
    ],
  };
}
