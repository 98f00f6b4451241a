/**
 * `npm run bench -- llm [--quick]`: a SmolLM2-135M-shaped model (random weights: 30 layers, d 576,
 * 9 query / 3 key-value heads of 64, SwiGLU 1536, vocab 49152, tied) in turnwise and in PyTorch
 * (bench/llm_torch.py, same shapes and work, 1 thread each), in one run:
 * - prefill: one 256-token prompt through the packed forward (tok/s);
 * - decode with the KV cache, batched B = 1, 16, 64: 64-token contexts, then greedy steps through
 *   `TransformerPolicy` (the sampler's own path); tok/s of the decode steps alone (a call with
 *   one new token is timed too and subtracted, so the prefill is not counted);
 * - training: one [2, 128] PPO-clip step (forward, backward, global-norm clip, Adam), full
 *   fine-tuning and LoRA (rank 16 on all seven projections);
 * - resident memory (RSS) and the tensor memory of the model.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { clipByGlobalNorm } from '../src/algorithms/grad-clip.js';
import { Rng } from '../src/core/rng.js';
import { nativeBlas } from '../src/models/backend/native-blas.js';
import { describeBackend, selectBackend } from '../src/models/backend/select.js';
import { tf } from '../src/models/backend/tf.js';
import { accumulateGradients, type GradientOptions } from '../src/models/grad-accumulate.js';
import { describeEstimate, estimateMemory, formatBytes, WASM_HEAP_BYTES } from '../src/models/memory-estimate.js';
import { AdamW } from '../src/models/optimizer.js';
import type { MicroBatch } from '../src/models/train-contract.js';
import { type TransformerConfig, TransformerModel } from '../src/models/transformer.js';
import { TransformerPolicy } from '../src/models/transformer-policy.js';

/** The model shape (shared with the decode part of `npm run bench -- scale`). */
export const SMOLLM2_135M: TransformerConfig = {
  vocabSize: 49152,
  dModel: 576,
  nLayers: 30,
  nHeads: 9,
  nKvHeads: 3,
  headDim: 64,
  ffnHidden: 1536,
  maxContext: 2048,
  ropeTheta: 100000,
  rmsNormEps: 1e-5,
  tieEmbeddings: true,
  architecture: 'llama',
};

const GRADIENTS: GradientOptions = {
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

/** What one run measures. */
export interface Plan {
  readonly prefillTokens: number;
  readonly decodeRows: number[];
  readonly decodeContext: number;
  readonly decodeSteps: number;
  readonly trainBatch: [number, number];
  readonly loraRank: number;
  readonly repeat: number;
  readonly trainRepeat: number;
}

const best = async (repeat: number, fn: () => Promise<number>): Promise<number> => {
  let out = Number.POSITIVE_INFINITY;
  for (let i = 0; i < repeat; i++) out = Math.min(out, await fn());
  return out;
};

async function prefillRate(model: TransformerModel, plan: Plan, rng: Rng): Promise<number> {
  const ids = Int32Array.from({ length: plan.prefillTokens }, () => rng.int(SMOLLM2_135M.vocabSize));
  const once = async () => {
    const start = performance.now();
    const logits = model.extendPacked([model.createCache(1, ids.length)], [ids]);
    await logits.data();
    logits.dispose();
    return (performance.now() - start) / 1000;
  };
  await once();
  return plan.prefillTokens / (await best(plan.repeat, once));
}

/** Decode tok/s of `rows` batched requests through `TransformerPolicy` (the decode steps alone). */
export async function decodeRate(model: TransformerModel, rows: number, plan: Plan, rng: Rng): Promise<number> {
  // An end id no greedy step picks in practice (random weights): every row decodes every step.
  const policy = new TransformerPolicy(model, { endTokenId: SMOLLM2_135M.vocabSize - 1, reuseCaches: false });
  const requests = Array.from({ length: rows }, () => ({
    contextTokens: Int32Array.from({ length: plan.decodeContext }, () => rng.int(SMOLLM2_135M.vocabSize - 1)),
    actionChoices: null,
  }));
  const call = async (tokens: number) => {
    const start = performance.now();
    await policy.greedyActions(requests, tokens);
    return (performance.now() - start) / 1000;
  };
  await call(2);
  const full = await best(plan.repeat, () => call(plan.decodeSteps + 1));
  const prefill = await best(plan.repeat, () => call(1));
  return (rows * plan.decodeSteps) / Math.max(1e-9, full - prefill);
}

function trainingStep(plan: Plan, rng: Rng): MicroBatch[] {
  const [rows, seq] = plan.trainBatch;
  const n = rows * seq;
  const v = SMOLLM2_135M.vocabSize;
  return [
    {
      batch: {
        batchSize: rows,
        seqLen: seq,
        inputIds: Int32Array.from({ length: n }, () => rng.int(v)),
        attentionMask: new Uint8Array(n).fill(1),
        targetPositions: Int32Array.from({ length: n }, (_, i) => i),
        targetIds: Int32Array.from({ length: n }, () => rng.int(v)),
        allowedOffsets: null,
        allowedIds: null,
      },
      lossMask: new Float32Array(n).fill(1),
      oldLogprobs: new Float32Array(n).fill(-Math.log(v)),
      advantages: Float32Array.from({ length: n }, () => rng.normal()),
      returns: new Float32Array(n),
      oldValues: null,
      refLogprobs: null,
      weights: new Float32Array(n).fill(1 / n),
      tokenWeights: new Float32Array(n).fill(1 / n),
      tokenCount: n,
      tokens: n,
      shard: 0,
    },
  ];
}

async function trainRate(model: TransformerModel, plan: Plan, rng: Rng): Promise<number> {
  const optimizer = new AdamW({ lr: 1e-5, beta1: 0.9, beta2: 0.99 });
  const chunk = trainingStep(plan, rng);
  const once = async () => {
    const start = performance.now();
    const grads = accumulateGradients({ policy: model, critic: null }, chunk, GRADIENTS, () => undefined).actorGrads;
    const { clipped } = clipByGlobalNorm(grads, 1);
    optimizer.apply(model.trainableVariables(), clipped);
    tf.dispose([...grads, ...clipped]);
    await model.trainableVariables()[0]?.data();
    return (performance.now() - start) / 1000;
  };
  try {
    await once();
    return (plan.trainBatch[0] * plan.trainBatch[1]) / (await best(plan.trainRepeat, once));
  } finally {
    optimizer.dispose();
  }
}

/** What bench/llm_torch.py prints. */
export interface TorchFigures {
  torch: string;
  prefillTokPerSec: number;
  decode: Record<string, number>;
  train_full_TokPerSec: number;
  train_lora_TokPerSec: number;
  maxRssMiB: number;
}

/** The PyTorch side's figures for `plan` (one thread), or why it failed. */
export function torchFigures(plan: Plan & { readonly skipTraining?: boolean }): TorchFigures | string {
  const python = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
  const spec = {
    ...plan,
    model: { vocab: SMOLLM2_135M.vocabSize, d: SMOLLM2_135M.dModel, layers: SMOLLM2_135M.nLayers, heads: SMOLLM2_135M.nHeads, kvHeads: SMOLLM2_135M.nKvHeads, headDim: SMOLLM2_135M.headDim, ffn: SMOLLM2_135M.ffnHidden, theta: SMOLLM2_135M.ropeTheta, eps: SMOLLM2_135M.rmsNormEps },
  };
  const run = spawnSync(python, ['bench/llm_torch.py', JSON.stringify(spec)], { encoding: 'utf8', env: { ...process.env, OPENBLAS_NUM_THREADS: '1' } });
  if (run.status !== 0) return `PyTorch side failed (apt-get install python3-torch libopenblas0-pthread): ${run.stderr.slice(-400)}`;
  return JSON.parse(run.stdout.trim().split('\n').pop() as string) as TorchFigures;
}

const rate = (x: number): string => `${x.toFixed(x < 100 ? 1 : 0)} tok/s`;
const vs = (a: number, b: number | undefined): string => (b === undefined ? '' : `  (${(a / b).toFixed(2)}x PyTorch's ${rate(b)})`);

export async function main(args: string[]): Promise<void> {
  const quick = args.includes('--quick');
  const plan: Plan = quick
    ? { prefillTokens: 128, decodeRows: [1, 16, 64], decodeContext: 32, decodeSteps: 4, trainBatch: [1, 64], loraRank: 16, repeat: 1, trainRepeat: 1 }
    : { prefillTokens: 256, decodeRows: [1, 16, 64], decodeContext: 64, decodeSteps: 16, trainBatch: [2, 128], loraRank: 16, repeat: 2, trainRepeat: 2 };
  const info = await selectBackend('auto');
  nativeBlas()?.blas?.setThreads(1);
  console.log(`backend: ${describeBackend(info)} | load ${loadavg()[0].toFixed(2)}`);
  console.log('model: SmolLM2-135M shape (30 layers, d 576, 9/3 heads x 64, ffn 1536, vocab 49152, tied), random weights; 1 thread each side');
  const rng = Rng.fromSeed(11);
  const started = performance.now();
  const model = new TransformerModel(SMOLLM2_135M, Rng.fromSeed(0));
  console.log(`built ${(model.parameterCount / 1e6).toFixed(1)}M parameters in ${((performance.now() - started) / 1000).toFixed(1)} s; tensor memory ${(tf.memory().numBytes / 2 ** 20).toFixed(0)} MiB`);
  const torch = torchFigures(plan);
  const t = typeof torch === 'string' ? undefined : torch;
  if (typeof torch === 'string') console.log(torch);
  else console.log(`PyTorch ${torch.torch}, max RSS ${torch.maxRssMiB.toFixed(0)} MiB`);

  // Training first, on a fresh heap: full fine-tuning of 135M (weights, Adam's two moments, the
  // gradients and their clipped copy: ~2.7 GB) plus activations is near the wasm heap's 4 GiB, and
  // the heap never shrinks after the decode runs' caches.
  // A wasm heap that overflows cannot be caught (the module aborts), so the estimate decides first.
  const tokens = plan.trainBatch[0] * plan.trainBatch[1];
  const fullNeeds = estimateMemory(SMOLLM2_135M, { lora: null, reference: false, microBatchTokens: tokens, sequenceLength: plan.trainBatch[1], kvCacheBytes: 0 });
  if (info.name !== 'wasm' || fullNeeds.total <= WASM_HEAP_BYTES) {
    const full = await trainRate(model, plan, rng);
    console.log(`training, full fine-tuning [${plan.trainBatch.join(', ')}]: ${rate(full)}${vs(full, t?.train_full_TokPerSec)}`);
  } else {
    console.log(`training, full fine-tuning [${plan.trainBatch.join(', ')}]: does not fit the wasm heap (needs about ${formatBytes(fullNeeds.total)}: ${describeEstimate(fullNeeds)}); PyTorch: ${t ? rate(t.train_full_TokPerSec) : 'n/a'}`);
  }
  model.dispose();
  const lora = new TransformerModel(SMOLLM2_135M, Rng.fromSeed(0));
  lora.attachLora({ rank: plan.loraRank, alpha: 32, dropout: 0, targets: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] }, Rng.fromSeed(2));
  const loraRate = await trainRate(lora, plan, rng);
  console.log(`training, LoRA r=${plan.loraRank} on all projections (${(lora.trainableParameterCount / 1e6).toFixed(2)}M trainable): ${rate(loraRate)}${vs(loraRate, t?.train_lora_TokPerSec)}`);
  lora.dispose();
  const inference = new TransformerModel(SMOLLM2_135M, Rng.fromSeed(0));
  const prefill = await prefillRate(inference, plan, rng);
  console.log(`prefill (${plan.prefillTokens} tokens, packed): ${rate(prefill)}${vs(prefill, t?.prefillTokPerSec)}`);
  const decode: Record<number, number> = {};
  for (const rows of plan.decodeRows) {
    decode[rows] = await decodeRate(inference, rows, plan, rng);
    console.log(`decode B=${rows} (${plan.decodeContext}-token contexts, ${plan.decodeSteps} steps, KV cache): ${rate(decode[rows])}${vs(decode[rows], t?.decode[String(rows)])}`);
  }
  const top = plan.decodeRows[plan.decodeRows.length - 1] as number;
  console.log(`decode B=${top} / B=1: ${(decode[top] / decode[1]).toFixed(2)}x (PyTorch: ${t ? (t.decode[String(top)] / t.decode['1']).toFixed(2) : 'n/a'}x)`);
  inference.dispose();
  console.log(`resident memory: max RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB (PyTorch ${t ? t.maxRssMiB.toFixed(0) : 'n/a'} MiB); ${((performance.now() - started) / 1000).toFixed(0)} s in all`);
}
