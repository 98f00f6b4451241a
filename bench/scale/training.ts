/**
 * The training part of `npm run bench -- scale` (issue #10): training tokens/s of the default
 * policy model (configs/babyai-grpo.yaml's `model`), in one process and data-parallel across the
 * machine's cores (`train.dataParallel`), against the same model in PyTorch
 * (bench/torch_reference.py) with 1 thread and with every core, in one run.
 *
 * What one training step is, on both sides: a [32, 64] batch of random tokens with every position
 * a target, the PPO-clip token loss (token-mean), the gradient, global-norm clipping at 1 and one
 * Adam update. turnwise runs the learner's own code for it: `accumulateGradients` in-process, or
 * the `GradientPool` (shards on worker threads, gradients added, one optimizer step here).
 * With the native matmul path (`model.matmul: auto` and the addon loaded) it also measures one
 * process with every core as BLAS threads and one process with the wasm kernels only, so the
 * addon's share shows in the same run.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { clipByGlobalNorm } from '../../src/algorithms/grad-clip.js';
import { loadConfig } from '../../src/core/config.js';
import { Rng } from '../../src/core/rng.js';
import { describeBackend, selectBackend } from '../../src/models/backend/select.js';
import { tf } from '../../src/models/backend/tf.js';
import { nativeBlas } from '../../src/models/backend/native-blas.js';
import { isNativeMatMulEnabled, setNativeMatMulEnabled } from '../../src/models/backend/wasm-batch-matmul.js';
import { GradientPool } from '../../src/models/data-parallel/gradient-pool.js';
import { accumulateGradients, type GradientOptions } from '../../src/models/grad-accumulate.js';
import { AdamW } from '../../src/models/optimizer.js';
import type { MicroBatch } from '../../src/models/train-contract.js';
import { TransformerModel, type TransformerConfig } from '../../src/models/transformer.js';
import type { ScaleOptions, ScaleSection } from './section.js';

const BATCH = 32;
const SEQ = 64;
const VOCAB = 512; // the default tokenizer's vocabulary (tokenizer.vocabSize)

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

/** The [BATCH, SEQ] step as `shards` micro-batches of BATCH / shards rows, token-mean weights over all. */
function syntheticStep(shards: number): MicroBatch[] {
  const rng = Rng.fromSeed(5);
  const total = BATCH * SEQ;
  const rows = BATCH / shards;
  return Array.from({ length: shards }, (_, shard) => {
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
      shard,
    };
  });
}

/** Runs `step` for about `seconds` after `warmup` steps; returns tokens/s. */
async function rate(seconds: number, warmup: number, step: () => Promise<void>): Promise<number> {
  for (let i = 0; i < warmup; i++) await step();
  let steps = 0;
  const start = performance.now();
  while (performance.now() - start < seconds * 1000) {
    await step();
    steps++;
  }
  return (steps * BATCH * SEQ) / ((performance.now() - start) / 1000);
}

/** One learner update from summed gradients: clip at norm 1, then Adam. */
function update(model: TransformerModel, optimizer: AdamW, grads: tf.Tensor[]): void {
  const { clipped } = clipByGlobalNorm(grads, 1);
  optimizer.apply(model.trainableVariables(), clipped);
  tf.dispose([...grads, ...clipped]);
}

async function turnwiseRate(shape: TransformerConfig, workers: number, seconds: number): Promise<number> {
  const model = new TransformerModel(shape, Rng.fromSeed(1));
  const optimizer = new AdamW({ lr: 1e-3, beta1: 0.9, beta2: 0.99 });
  try {
    if (workers === 1) {
      const chunk = syntheticStep(1);
      return await rate(seconds, 2, async () => {
        update(model, optimizer, accumulateGradients({ policy: model, critic: null }, chunk, GRADIENT_OPTIONS, () => undefined).actorGrads);
      });
    }
    const pool = new GradientPool({ workers, spec: { policy: shape, critic: null }, policy: model, critic: null });
    try {
      const chunk = syntheticStep(workers);
      // Warm-up also starts the threads and their backends.
      return await rate(seconds, 3, async () => {
        update(model, optimizer, (await pool.accumulate(chunk, GRADIENT_OPTIONS, () => undefined)).actorGrads);
      });
    } finally {
      await pool.close();
    }
  } finally {
    optimizer.dispose();
    model.dispose();
  }
}

function torchRate(shape: TransformerConfig, threads: number, steps: number): { rate: number | null; note: string } {
  const python = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
  if (spawnSync(python, ['-c', 'import torch'], { encoding: 'utf8' }).status !== 0) {
    return { rate: null, note: 'PyTorch not installed: apt-get install -y python3-torch libopenblas0-pthread' };
  }
  const args = ['bench/torch_reference.py', '--d-model', shape.dModel, '--layers', shape.nLayers, '--heads', shape.nHeads, '--ffn', shape.ffnHidden, '--vocab', shape.vocabSize, '--batch', BATCH, '--seq', SEQ, '--steps', steps, '--threads', threads].map(String);
  const run = spawnSync(python, args, { encoding: 'utf8', env: { ...process.env, OPENBLAS_NUM_THREADS: String(threads) } });
  if (run.status !== 0) return { rate: null, note: `torch reference failed: ${run.stderr.slice(-300)}` };
  const parsed = JSON.parse(run.stdout.trim().split('\n').pop() as string) as { trainTokensPerSec: number; torch: string };
  return { rate: parsed.trainTokensPerSec, note: `torch ${parsed.torch}` };
}

const fmt = (x: number | null): string => (x === null ? 'n/a' : `${Math.round(x).toLocaleString('en-US')} tok/s`);
const ratio = (a: number | null, b: number | null): string => (a === null || b === null ? 'n/a' : `${(a / b).toFixed(2)}x`);

/**
 * Measures the training figures; see the file comment.
 * @example const section = await measure({ quick: true }); // rows: tokens/s and ratios
 */
export async function measure(options: ScaleOptions): Promise<ScaleSection> {
  const backend = await selectBackend('auto');
  const shape = defaultShape();
  const cores = availableParallelism();
  // The machine is shared: each figure is the best of `rounds` interleaved measurements, so a burst
  // of someone else's load hits all four alike rather than one of them.
  const rounds = options.quick ? 1 : 3;
  const seconds = options.quick ? 1.5 : 4;
  const torchSteps = options.quick ? 10 : 30;
  const load = loadavg()[0];
  const best = { single: 0, singleAllThreads: 0, parallel: 0, torch1: 0, torchAll: 0, wasmOnly: 0 };
  const blas = isNativeMatMulEnabled() && (backend.matmul ?? '').startsWith('native') ? nativeBlas().blas : null;
  let torchNote = '';
  const max = (a: number, b: number | null): number => Math.max(a, b ?? 0);
  for (let round = 0; round < rounds; round++) {
    // Per core: one process, one BLAS thread (PyTorch's 1-thread setting). OpenBLAS threads are per
    // process, and the gradient workers pin them to 1, so every figure sets them first.
    blas?.setThreads(1);
    best.single = max(best.single, await turnwiseRate(shape, 1, seconds));
    if (blas !== null && cores > 1) {
      blas.setThreads(cores);
      best.singleAllThreads = max(best.singleAllThreads, await turnwiseRate(shape, 1, seconds));
      // The same process with the native path off: what the addon adds.
      blas.setThreads(1);
      setNativeMatMulEnabled(false);
      try {
        best.wasmOnly = max(best.wasmOnly, await turnwiseRate(shape, 1, seconds));
      } finally {
        setNativeMatMulEnabled(true);
      }
    }
    if (cores > 1) best.parallel = max(best.parallel, await turnwiseRate(shape, cores, seconds));
    const t1 = torchRate(shape, 1, torchSteps);
    torchNote = t1.note;
    best.torch1 = max(best.torch1, t1.rate);
    if (cores > 1) best.torchAll = max(best.torchAll, torchRate(shape, cores, torchSteps).rate);
  }
  const or = (x: number): number | null => (x > 0 ? x : null);
  const single = best.single;
  const parallel = cores > 1 ? best.parallel : null;
  const machine = Math.max(single, best.parallel, best.singleAllThreads);
  const torch1 = or(best.torch1);
  const torchAll = cores > 1 ? or(best.torchAll) : torch1;
  const torchBest = torch1 === null && torchAll === null ? null : Math.max(torch1 ?? 0, torchAll ?? 0);
  return {
    title: 'training (default policy model)',
    rows: [
      [`turnwise, 1 process${blas !== null ? ', 1 BLAS thread' : ''}`, fmt(single)],
      [`turnwise, 1 process, ${cores} BLAS threads`, blas !== null && cores > 1 ? fmt(best.singleAllThreads) : 'n/a'],
      ['turnwise, 1 process, wasm kernels only (model.matmul: wasm)', blas !== null ? `${fmt(best.wasmOnly)} (native path: ${ratio(single, best.wasmOnly)})` : 'n/a (no native path here)'],
      [`turnwise, dataParallel ${cores} (worker threads)`, parallel === null ? 'n/a (1 core)' : `${fmt(parallel)} (${ratio(parallel, single)} of 1 process)`],
      ['PyTorch, 1 thread', fmt(torch1)],
      [`PyTorch, ${cores} threads`, fmt(torchAll)],
      ['turnwise / PyTorch per core (1 process / 1 thread)', ratio(single, torch1)],
      // PyTorch "using the whole machine" is its faster setting: with any other load, N OpenMP threads can lose to 1.
      [`turnwise / PyTorch per machine (turnwise's fastest setting / PyTorch's, 1 or ${cores} threads)`, ratio(machine, torchBest)],
    ],
    notes: [
      `model d${shape.dModel} L${shape.nLayers} H${shape.nHeads} ffn${shape.ffnHidden} vocab ${shape.vocabSize}; batch [${BATCH}, ${SEQ}], every position trained; PPO-clip + clip-norm + Adam on both sides`,
      `best of ${rounds} interleaved round(s) per figure; ${describeBackend(backend)}; ${torchNote}; ${cores} cores; load average ${load.toFixed(2)} at the start, ${loadavg()[0].toFixed(2)} at the end`,
    ],
  };
}
