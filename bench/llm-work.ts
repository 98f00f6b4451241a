/**
 * The work `npm run bench -- llm` and the decode part of `npm run bench -- scale` measure, on the
 * turnwise side and (through bench/llm_torch.py) on the PyTorch side: the model shapes, one timed
 * prefill, decode and training step each, and one round of the PyTorch child.
 */
import { spawnSync } from 'node:child_process';
import { globalNormScale } from '../src/algorithms/grad-clip.js';
import type { Rng } from '../src/core/rng.js';
import { tf } from '../src/backend/tf.js';
import { accumulateGradients, type GradientOptions } from '../src/learner/grad-accumulate.js';
import type { AdamW } from '../src/learner/optimizer.js';
import type { MicroBatch } from '../src/learner/train-contract.js';
import type { TransformerConfig, TransformerModel } from '../src/models/transformer/model.js';
import { TransformerPolicy } from '../src/models/transformer-policy.js';
import { QWEN25_05B_SHAPE, SMOLLM2_135M_SHAPE } from '../scripts/make-pretrained-shape.js';
import { type Timing, timeCall } from './samples.js';
import { torchEnv, torchPython } from './torch-python.js';

/** SmolLM2-135M's shape (30 layers, d 576, 9 query / 3 key-value heads of 64, SwiGLU 1536, vocab 49152, tied), at the benches' 2,048-token context. */
export const SMOLLM2_135M: TransformerConfig = { ...SMOLLM2_135M_SHAPE, maxContext: 2048 };

/** Qwen2.5-0.5B's shape (24 layers, d 896, 14 query / 2 key-value heads of 64, SwiGLU 4864, vocab 151,936, tied, q/k/v biases), at 2,048 tokens. */
export const QWEN25_05B: TransformerConfig = { ...QWEN25_05B_SHAPE, maxContext: 2048 };

/** The loss settings of every training step here: PPO-clip, token mean, no KL, no entropy bonus. */
export const GRADIENTS: GradientOptions = {
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
  /** Timed calls per figure and round (the best is kept). */
  readonly repeat: number;
  readonly trainRepeat: number;
}

/** Element-wise minimum of two timings (the best wall and the best CPU time). */
const fastest = (a: Timing, b: Timing): Timing => ({ wall: Math.min(a.wall, b.wall), cpu: Math.min(a.cpu, b.cpu) });

async function best(repeat: number, fn: () => Promise<unknown> | unknown): Promise<Timing> {
  let out: Timing = { wall: Number.POSITIVE_INFINITY, cpu: Number.POSITIVE_INFINITY };
  for (let i = 0; i < repeat; i++) out = fastest(out, (await timeCall(fn)).timing);
  return out;
}

/** One `tokens`-token prompt through the packed forward (next-token logits of the last token), after a warm-up. */
export async function prefillTiming(model: TransformerModel, tokens: number, repeat: number, rng: Rng): Promise<Timing> {
  const ids = Int32Array.from({ length: tokens }, () => rng.int(model.config.vocabSize));
  const once = async () => {
    const logits = model.extendPacked([model.createCache(1, ids.length)], [ids]);
    await logits.data();
    logits.dispose();
  };
  await once();
  return best(repeat, once);
}

/**
 * `rows` batched requests through `TransformerPolicy` (the sampler's own path): the time of the
 * decode steps alone (a call with one new token is timed too and subtracted, so the prefill is not counted).
 */
export async function decodeTiming(model: TransformerModel, rows: number, plan: Plan, rng: Rng): Promise<Timing> {
  const v = model.config.vocabSize;
  // An end id no greedy step picks in practice (random weights): every row decodes every step.
  const policy = new TransformerPolicy(model, { endTokenId: v - 1, reuseCaches: false });
  const requests = Array.from({ length: rows }, () => ({
    contextTokens: Int32Array.from({ length: plan.decodeContext }, () => rng.int(v - 1)),
    actionChoices: null,
  }));
  const call = (tokens: number) => policy.greedyActions(requests, tokens);
  await call(2);
  const full = await best(plan.repeat, () => call(plan.decodeSteps + 1));
  const prefill = await best(plan.repeat, () => call(1));
  return { wall: Math.max(1e-9, full.wall - prefill.wall), cpu: Math.max(1e-9, full.cpu - prefill.cpu) };
}

/** A [rows, seq] PPO step with every position a target. */
export function trainingChunk(vocab: number, [rows, seq]: [number, number], rng: Rng): MicroBatch[] {
  const n = rows * seq;
  return [
    {
      batch: {
        batchSize: rows,
        seqLen: seq,
        inputIds: Int32Array.from({ length: n }, () => rng.int(vocab)),
        attentionMask: new Uint8Array(n).fill(1),
        targetPositions: Int32Array.from({ length: n }, (_, i) => i),
        targetIds: Int32Array.from({ length: n }, () => rng.int(vocab)),
        allowedOffsets: null,
        allowedIds: null,
      },
      lossMask: new Float32Array(n).fill(1),
      oldLogprobs: new Float32Array(n).fill(-Math.log(vocab)),
      advantages: Float32Array.from({ length: n }, () => rng.normal()),
      returns: new Float32Array(n),
      oldValues: null,
      refLogprobs: null,
      weights: new Float32Array(n).fill(1 / n),
      tokenWeights: new Float32Array(n).fill(1 / n),
      tokenCount: n,
      tokens: n,
    },
  ];
}

/** One learner step: forward, backward, global-norm clip at 1, Adam. */
export function learnerStep(model: TransformerModel, optimizer: AdamW, chunk: readonly MicroBatch[]): void {
  const grads = accumulateGradients({ policy: model, critic: null }, chunk, GRADIENTS, () => undefined).actorGrads;
  const { scale } = globalNormScale(grads, 1);
  optimizer.apply(model.trainableVariables(), grads, scale); // the clip folded into the update, as the trainer does
  tf.dispose(grads);
  model.trainableVariables()[0]?.dataSync();
}

/** Timed training steps of `model` with `optimizer`, after a warm-up step. */
export async function trainTiming(model: TransformerModel, optimizer: AdamW, plan: Plan, rng: Rng): Promise<Timing> {
  const chunk = trainingChunk(model.config.vocabSize, plan.trainBatch, rng);
  learnerStep(model, optimizer, chunk);
  return best(plan.trainRepeat, () => learnerStep(model, optimizer, chunk));
}

/** What bench/llm_torch.py prints. */
export interface TorchFigures {
  torch: string;
  /** Absent with `skipInference`. */
  prefillTokPerSec?: number;
  prefillTokPerCpuSec?: number;
  decode?: Record<string, number>;
  decodeCpu?: Record<string, number>;
  train_full_TokPerSec?: number;
  train_full_TokPerCpuSec?: number;
  train_lora_TokPerSec?: number;
  train_lora_TokPerCpuSec?: number;
  maxRssMiB: number;
}

/**
 * One round of the PyTorch side for `plan` on `shape` (one thread), or why it failed.
 * @example const t = torchRound(plan, SMOLLM2_135M); if (typeof t !== 'string') console.log(t.decode['64']);
 */
export function torchRound(plan: Plan & { readonly skipTraining?: boolean; readonly skipInference?: boolean; readonly trainKinds?: readonly ('full' | 'lora')[] }, shape: TransformerConfig): TorchFigures | string {
  const torch = torchPython();
  if (torch.version === null) return `no PyTorch: ${torch.why}`;
  const spec = {
    ...plan,
    model: { vocab: shape.vocabSize, d: shape.dModel, layers: shape.nLayers, heads: shape.nHeads, kvHeads: shape.nKvHeads ?? shape.nHeads, headDim: shape.headDim ?? shape.dModel / shape.nHeads, ffn: shape.ffnHidden, theta: shape.ropeTheta, eps: shape.rmsNormEps, qkvBias: shape.qkvBias ?? false },
  };
  const run = spawnSync(torch.python, ['bench/llm_torch.py', JSON.stringify(spec)], { encoding: 'utf8', env: torchEnv(1), maxBuffer: 2 ** 24 });
  if (run.status !== 0) return `PyTorch side failed: ${run.stderr.slice(-400)}`;
  return JSON.parse(run.stdout.trim().split('\n').pop() as string) as TorchFigures;
}
