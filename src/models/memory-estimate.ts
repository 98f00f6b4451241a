/**
 * How much tensor memory a run's models need, estimated before anything is allocated, so that a
 * model too large for the backend is refused with numbers instead of crashing the wasm heap
 * (which has no way back: tfjs's wasm module dies with "memory access out of bounds" at 4 GiB).
 *
 * Counted, in float32: the learner's weights; the sampler's copy (none for LoRA: it shares the
 * frozen base); the KL reference (a copy for full fine-tuning, none for LoRA: adapters off);
 * Adam's two moments, the gradients of what trains and their clipped copy (on the native path the
 * moments live outside the heap and the clip is folded into Adam, so the heap holds the gradients
 * alone, two copies while micro-batches are summed: `host` counts the moments); one micro-batch's activations (every
 * intermediate the backward pass keeps: per layer about `10 d + 2 (q + 2 kv) + 4 f` floats per
 * token plus three `heads x T x T` attention maps per sequence, and three `[targets, vocab]`
 * maps in the loss head, for at most a chunk of rows when the head is chunked); the sampler's KV-cache budget. It is an estimate (tfjs frees and
 * reuses buffers as it goes), meant to be on the safe side by about 20 %.
 */
import { headDim, kvHeads, queryWidth, type TransformerConfig } from './transformer/config.js';
import { headChunkRows } from './transformer/chunked-head.js';
import { weightSpecs } from './transformer/weights.js';

/** The most the wasm backend can hold (its heap is 32-bit addressed). */
export const WASM_HEAP_BYTES = 4 * 2 ** 30;

/** What the estimate depends on besides the model shape. */
export interface MemoryPlan {
  /** Trainable parameters of the LoRA adapters, or null for full fine-tuning. */
  readonly loraParameters: number | null;
  /** A KL reference is kept (klCoef > 0). */
  readonly reference: boolean;
  /** Tokens of one training micro-batch (padded batch x length). */
  readonly microBatchTokens: number;
  /** Longest training sequence (for the attention maps). */
  readonly sequenceLength: number;
  /** Sampler KV-cache budget in bytes. */
  readonly kvCacheBytes: number;
  /**
   * Adam's moments kept outside the tensor backend and the clip folded into the update (the native
   * path: `AdamW` on wasm with the addon, `host-adam.ts`). Default false: everything in the heap.
   */
  readonly optimizerOnHost?: boolean;
  /** More than one micro-batch is summed per step (a second copy of the gradients meanwhile). Default true. */
  readonly accumulates?: boolean;
  /** Targets are constrained to listed ids (turnwise's own model): the loss head is never chunked. Default false. */
  readonly constrained?: boolean;
}

/** The estimate, by part, in bytes. */
export interface MemoryEstimate {
  readonly weights: number;
  readonly samplerCopy: number;
  readonly reference: number;
  readonly optimizer: number;
  readonly activations: number;
  readonly kvCache: number;
  /** What the tensor backend must hold (the wasm heap), with the 20 % margin. */
  readonly total: number;
  /** Bytes outside the tensor backend, exact (Adam's moments on the native path), else 0. */
  readonly host: number;
}

/**
 * Parameters of a model shape (a tied head counted once).
 * @example parameterCount(smolLm2Shape) // 134515008
 */
export function parameterCount(config: TransformerConfig): number {
  return weightSpecs(config).reduce((n, spec) => n + spec.hfShape.reduce((a, b) => a * b, 1), 0);
}

/**
 * The estimate for `config` trained as `plan` says.
 * @example estimateMemory(cfg, { loraParameters: null, reference: false, microBatchTokens: 8192, sequenceLength: 256, kvCacheBytes: 2 ** 27 }).total
 */
export function estimateMemory(config: TransformerConfig, plan: MemoryPlan): MemoryEstimate {
  const f32 = 4;
  const params = parameterCount(config);
  const weights = params * f32;
  const trained = plan.loraParameters ?? params;
  const lora = plan.loraParameters !== null;
  const samplerCopy = lora ? trained * f32 : weights;
  const reference = plan.reference && !lora ? weights : 0;
  // In the heap: two Adam moments, the accumulated gradients and their clipped copy; on the native
  // path only the gradients (two copies while micro-batches are summed), the moments on the host.
  const onHost = plan.optimizerOnHost === true;
  const optimizer = (onHost ? (plan.accumulates === false ? 1 : 2) : 4) * trained * f32;
  const host = onHost ? 2 * trained * f32 : 0;
  const d = config.dModel;
  const perTokenPerLayer = 10 * d + 2 * (queryWidth(config) + 2 * kvHeads(config) * headDim(config)) + 4 * config.ffnHidden;
  const sequences = Math.max(1, Math.ceil(plan.microBatchTokens / Math.max(1, plan.sequenceLength)));
  const attention = 3 * config.nHeads * plan.sequenceLength * plan.sequenceLength * sequences;
  // Unconstrained heads larger than a chunk run a chunk of rows at a time (transformer/chunked-head.ts).
  const head = 3 * Math.min(plan.microBatchTokens, plan.constrained === true ? Number.POSITIVE_INFINITY : headChunkRows(config.vocabSize)) * config.vocabSize;
  const activations = f32 * (config.nLayers * (plan.microBatchTokens * perTokenPerLayer + attention) + head);
  const kvCache = plan.kvCacheBytes;
  const total = Math.ceil(1.2 * (weights + samplerCopy + reference + optimizer + activations + kvCache));
  return { weights, samplerCopy, reference, optimizer, activations, kvCache, total, host };
}

/**
 * `1.23 GiB` / `456 MiB`.
 * @example formatBytes(3 * 2 ** 30) // '3.00 GiB'
 */
export function formatBytes(bytes: number): string {
  return bytes >= 2 ** 30 ? `${(bytes / 2 ** 30).toFixed(2)} GiB` : `${Math.round(bytes / 2 ** 20)} MiB`;
}

/**
 * One line naming each part of the estimate.
 * @example describeEstimate(e) // 'weights 513 MiB + sampler 513 MiB + ... = 3.10 GiB'
 */
export function describeEstimate(e: MemoryEstimate): string {
  const parts: Array<[string, number]> = [
    ['weights', e.weights],
    ['sampler copy', e.samplerCopy],
    ['KL reference', e.reference],
    [e.host > 0 ? 'gradients' : 'optimizer + gradients', e.optimizer],
    ['activations', e.activations],
    ['KV caches', e.kvCache],
  ];
  return `${parts
    .filter(([, n]) => n > 0)
    .map(([name, n]) => `${name} ${formatBytes(n)}`)
    .join(' + ')} (+20 % margin${e.host > 0 ? `; Adam's moments ${formatBytes(e.host)} outside the heap` : ''}) = ${formatBytes(e.total)}`;
}
