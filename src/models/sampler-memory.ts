/**
 * What a sampler holds while it samples, counted from what the sampling code allocates (issue #31),
 * for the memory estimate (`./memory-estimate.ts`):
 * - in the tensor backend: the fused q/k/v weights of the packed path (one `[d, q + 2 kv]` copy
 *   per layer, a LoRA pair merged in, its bias beside it: transformer/cached-forward.ts), and the
 *   largest transient of one forward call: a packed prefill of at most `prefillTokens` new tokens
 *   (transformer/inference.ts) or a decode step;
 * - outside it, in JS memory: the KV caches. They are `Float32Array`s (`./kv-cache.ts`); a prefill
 *   group copies a layer's keys and values into the heap only for its attention call, a native
 *   decode step reads them in place.
 *
 * A packed prefill runs each layer in its own `tf.tidy`, so at the end of a layer every
 * intermediate of that layer is alive at once, with the layer's input and output: per new token
 * {@link packedLayerFloats}. Earlier in the layer, while a group of rows attends, the attention
 * block (mask, queries, keys, values and output of the group, and in tfjs its scores and
 * probabilities; the native kernel keeps no such map) sits beside the layer's first tensors; the
 * head at the end holds the residual stream and `[rows, vocab]` logits. The transient is the
 * largest of the three.
 */
import type { LoraSpec, LoraTarget } from './lora/lora.js';
import { headDim, kvHeads, queryWidth, type TransformerConfig } from './transformer/config.js';
import { DEFAULT_GROUP_RATIO, DEFAULT_MAX_SCORES } from './transformer/inference.js';

/** What the sampler's part depends on. */
export interface SamplerPlan {
  /** Rows one sampling call decodes together. */
  readonly rows: number;
  /** Longest context of a sampled row (prompt + reply). */
  readonly context: number;
  /** Most new tokens one prefill call feeds (a call takes at least one row whatever its length). */
  readonly prefillTokens: number;
  /** RMSNorm and the SwiGLU gate run as one native kernel each (wasm with the addon); else their tfjs forms, more tensors. */
  readonly nativeKernels: boolean;
  /** Padded attention scores one group may hold (`PackedOptions.maxScores`). Default {@link DEFAULT_MAX_SCORES}. */
  readonly maxScores?: number;
}

/** The sampler's part, in bytes. */
export interface SamplerMemory {
  /** The fused q/k/v weights of every layer (heap). */
  readonly fusedQkv: number;
  /** The largest transient of one forward call (heap). */
  readonly forward: number;
  /** One call's KV caches in flight: each row's, and the merged copy the decode steps run on (JS memory). */
  readonly kvInFlight: number;
}

const F32 = 4;

/**
 * Floats per new token alive at the end of one packed layer: its input, the RMSNorm, the fused
 * q/k/v projection (and its bias sum), the attention context uploaded, the o-projection and the
 * residual, the second RMSNorm, gate and up, the gate's activation, down and the output. A
 * projection with a LoRA pair adds `x·A` (rank floats), and in tfjs also `·B`, its scaling and the
 * sum (three times its output; the native kernel accumulates them into its output); q/k/v have
 * theirs merged into the fused weight, so they add nothing.
 * @example packedLayerFloats(smolLm2, lora16AllTargets, true) // 10,240 at the SmolLM2-135M shape (10,176 without adapters; 28,294 with the tfjs forms)
 */
export function packedLayerFloats(config: TransformerConfig, lora: LoraSpec | null, nativeKernels: boolean): number {
  const d = config.dModel;
  const q = queryWidth(config);
  const kv = kvHeads(config) * headDim(config);
  const f = config.ffnHidden;
  // With the native kernels an adapted projection is one fused kernel (its x·A freed at once); in tfjs x·A, ·B, the scaling and the sum.
  const adapter = (out: number, rank: number) => (nativeKernels ? rank : 3 * out + rank);
  const projection = (target: LoraTarget, out: number) => out + (lora?.targets.includes(target) ? adapter(out, lora.rank) : 0);
  const norm = nativeKernels ? d : 3 * d + 3; // tfjs: square, mean, + eps, rsqrt, x · rsqrt, · weight
  const fused = (q + 2 * kv) * (config.qkvBias === true ? 2 : 1);
  const gate = nativeKernels ? f : 3 * f; // tfjs: sigmoid, g · sigmoid, · up
  return d + norm + fused + q + projection('o_proj', d) + d + norm + projection('gate_proj', f) + projection('up_proj', f) + gate + projection('down_proj', d) + d;
}

/**
 * The sampler's part of the estimate for `config` with adapters `lora`, sampling as `plan` says.
 * @example samplerMemory(shape, lora, { rows: 16, context: 711, prefillTokens: 4096, nativeKernels: true }).forward
 */
export function samplerMemory(config: TransformerConfig, lora: LoraSpec | null, plan: SamplerPlan): SamplerMemory {
  const { rows, context } = plan;
  const d = config.dModel;
  const q = queryWidth(config);
  const kv = kvHeads(config) * headDim(config);
  const heads = config.nHeads;
  const fusedWidth = q + 2 * kv;
  const fusedQkv = F32 * config.nLayers * (d * fusedWidth + (config.qkvBias === true ? fusedWidth : 0));
  // A call feeds rows while they fit `prefillTokens`, and at least one row however long.
  const tokens = Math.min(rows * context, Math.max(plan.prefillTokens, context));
  const callRows = Math.min(rows, tokens);
  const layerEnd = tokens * packedLayerFloats(config, lora, plan.nativeKernels);
  // A group's padded scores stay under maxScores unless a single row passes it alone. Its rows' new
  // tokens (and spans) are at least the ratio of the group's widest, so its padded queries are at
  // most tokens / ratio, and its keys and values (one layer) at most rows x context / ratio.
  const scores = Math.max(plan.maxScores ?? DEFAULT_MAX_SCORES, heads * context * context);
  const ratio = DEFAULT_GROUP_RATIO;
  const norm = plan.nativeKernels ? d : 3 * d + 3;
  // tfjs: the scores, their masked sum and the probabilities, and the queries scaled beside the queries and
  // the output; the native inference kernel (backend/native-attention.ts) keeps no map and no scaled copy.
  const scoreTensors = plan.nativeKernels ? 0 : 3;
  const queryTensors = plan.nativeKernels ? 2 : 3;
  const group = scoreTensors * scores + scores / heads + queryTensors * (tokens / ratio) * q + 2 * ((callRows * context) / ratio) * kv; // + the mask; keys, values
  const attending = tokens * (d + norm + fusedWidth * (config.qkvBias === true ? 2 : 1)) + group;
  const head = tokens * d + callRows * (d + norm + 2 * config.vocabSize); // the residual stream, the last rows, their norm, logits (and a restricted copy)
  // A decode step without the native path: one token per row through a layer, one layer's keys and
  // values uploaded, its scores, and the logits. Small beside a prefill; counted for the bound.
  const decode = rows * (packedLayerFloats(config, lora, plan.nativeKernels) + 2 * context * kv + scoreTensors * heads * context + 2 * config.vocabSize);
  const forward = F32 * Math.ceil(Math.max(layerEnd, attending, head, decode));
  const kvPerToken = 2 * config.nLayers * kv * F32;
  return { fusedQkv, forward, kvInFlight: 2 * rows * context * kvPerToken };
}
