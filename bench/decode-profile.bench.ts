/**
 * `npm run bench -- decode-profile [--rows 64] [--rounds 2]`: where a batched decode step's time
 * goes (issue #31). Greedy decode of `rows` 64-token contexts through `TransformerPolicy`, 16 steps,
 * at the SmolLM2-135M shape on one BLAS thread, as `npm run bench -- llm` times it; then the
 * thread-CPU milliseconds per step of each phase of the native step (`decodeProfile`,
 * native/decode_step.c), the step's wall time inside `decodeStep`, and the GFLOP/s of the matrix
 * products against this core's FMA peak.
 */
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { nativeBlas } from '../src/backend/native-blas.js';
import { nativeKernels } from '../src/backend/native.js';
import { selectBackend } from '../src/backend/select.js';
import { Rng } from '../src/core/rng.js';
import { headDim, kvHeads } from '../src/models/transformer/config.js';
import { TransformerModel } from '../src/models/transformer/model.js';
import { TransformerPolicy } from '../src/models/transformer-policy.js';
import { corePeak } from './flops.js';
import { SMOLLM2_135M } from './llm-work.js';

const PHASES = ['norm', 'qkv', 'qkNormRope', 'cache', 'attention', 'o', 'adds', 'gateUp', 'swiglu', 'down', 'head'] as const;
const STEPS = 16;

function parseArgs(args: string[]): { rows: number; rounds: number } {
  const value = (flag: string, fallback: number): number => {
    const at = args.indexOf(flag);
    const n = at >= 0 ? Number(args[at + 1]) : fallback;
    if (!(Number.isInteger(n) && n >= 1)) throw new Error(`${flag}: expected a positive integer, got "${args[at + 1]}"`);
    return n;
  };
  return { rows: value('--rows', 64), rounds: value('--rounds', 2) };
}

export async function main(args: string[]): Promise<void> {
  const { rows, rounds } = parseArgs(args);
  await selectBackend('auto');
  const blas = nativeBlas().blas;
  const kernels = nativeKernels() as unknown as { decodeProfile?: () => number[] } | null;
  if (blas === null || kernels?.decodeProfile === undefined) {
    console.log(`no native decode step here (${nativeBlas().why || 'addon without decodeProfile'}): nothing to profile`);
    return;
  }
  const profile = kernels.decodeProfile.bind(kernels);
  blas.setThreads(1);
  const shape = SMOLLM2_135M;
  const model = new TransformerModel(shape, Rng.fromSeed(0));
  let stepWall = 0;
  const step = model.decodeStep.bind(model);
  model.decodeStep = (cache, ids) => {
    const start = performance.now();
    const out = step(cache, ids);
    stepWall += performance.now() - start;
    return out;
  };
  const rng = Rng.fromSeed(11);
  const v = shape.vocabSize;
  const policy = new TransformerPolicy(model, { endTokenId: v - 1, reuseCaches: false }); // an end id greedy steps never pick
  const requests = Array.from({ length: rows }, () => ({ contextTokens: Int32Array.from({ length: 64 }, () => rng.int(v - 1)), actionChoices: null }));
  const d = shape.dModel;
  const q = shape.nHeads * headDim(shape);
  const kv = kvHeads(shape) * headDim(shape);
  const f = shape.ffnHidden;
  const L = shape.nLayers;
  // FLOPs per step of each matrix-product phase.
  const flops: Partial<Record<(typeof PHASES)[number], number>> = {
    qkv: 2 * rows * d * (q + 2 * kv) * L,
    o: 2 * rows * q * d * L,
    gateUp: 2 * rows * d * 2 * f * L,
    down: 2 * rows * f * d * L,
    head: 2 * rows * d * v,
  };
  const peak = corePeak()?.gflops ?? Number.NaN;
  console.log(`decode profile: B=${rows}, ${STEPS} steps, SmolLM2-135M shape, BLAS ${blas.library} (${blas.kernels()}) 1 thread; core peak ${peak.toFixed(0)} GFLOP/s; load ${loadavg()[0]?.toFixed(2)}`);
  await policy.greedyActions(requests, 2); // warm-up
  for (let round = 0; round < rounds; round++) {
    profile();
    stepWall = 0;
    await policy.greedyActions(requests, STEPS + 1); // the first token comes from the prefill
    const ms = profile().map((s) => (s * 1000) / STEPS);
    const total = ms.reduce((a, b) => a + b, 0);
    const wall = stepWall / STEPS;
    console.log(`round ${round + 1}: decodeStep ${wall.toFixed(1)} ms wall a step (${((rows * 1000) / wall).toFixed(0)} tok/s), native phases ${total.toFixed(1)} ms thread-CPU`);
    for (const [i, name] of PHASES.entries()) {
      const t = ms[i] as number;
      const work = flops[name];
      const rate = work === undefined ? '' : `  ${(work / t / 1e6).toFixed(1)} GFLOP/s (${((100 * work) / t / 1e6 / peak).toFixed(0)} % of peak)`;
      console.log(`  ${name.padEnd(11)} ${t.toFixed(1).padStart(6)} ms ${((100 * t) / total).toFixed(1).padStart(5)} %${rate}`);
    }
  }
}
