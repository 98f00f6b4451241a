/**
 * What `turnwise serve` holds for a model, estimated before its weights are read (issue #31), so
 * that the context it picks by itself fits and a `--max-context` that cannot fit is refused:
 *
 * - in the tensor backend (the wasm heap): the weights (and adapters), the fused q/k/v weights the
 *   generation path builds on its first call, and the larger of the two passes a request can start:
 *   a full-context prompt scored (`echo` + `logprobs`, `./prompt-scorer.ts`) and a full-context
 *   prompt generated from (one packed prefill, `../models/sampler-memory.ts`);
 * - outside it, in JS memory: the KV caches (`Float32Array`s), the budget kept between the chunks of
 *   a reply and the caches of that full-context request in flight. They count against the
 *   machine's memory with the heap, as a training run counts them (`../runtime/pretrained-stack.ts`).
 *
 * The scoring pass, counted from the code (`TransformerModel.forwardLogitChunks`): the decoder runs
 * once over the prompt, each layer in its own `tf.tidy`, so at the end of a layer every intermediate
 * of that layer is alive at once — per token {@link scoringLayerFloats}, and in the tfjs form three
 * `heads x T x T` attention maps (scores, their masked sum, probabilities; the native attention kernel
 * keeps none) — beside the layer's input, the `T x T` mask and the rotary factors. Then the head runs
 * `scoringChunkRows(vocab)` positions at a time (the head chunk budget over these five maps): the residual stream `[T, d]` stays, and a chunk holds
 * its rows' final norm, their logits and the log-softmax's three maps (shifted, exp, result: tfjs's
 * `logSoftmax`), four `[rows, vocab]` maps, plus the top-k's slice of the tokenizer's ids where the
 * vocabulary is padded. What each chunk keeps (each position's log-prob, its top-k values and ids)
 * stays until the last. The pass's peak is the larger of the two phases. Checked against the live
 * tensor bytes of a scoring pass in test/serve/serve-memory.test.ts.
 */
import type { LoraSpec, LoraTarget } from '../models/lora/lora.js';
import { loraModules } from '../models/lora/lora.js';
import { ALLOCATOR_SLACK } from '../models/memory-estimate.js';
import { samplerMemory } from '../models/sampler-memory.js';
import { headDim, kvHeads, queryWidth, type TransformerConfig } from '../models/transformer/config.js';
import { scoringChunkRows } from './scoring-chunk-rows.js';
import { MAX_TOP_LOGPROBS } from './sampling-params.js';

const F32 = 4;

/** What the estimate depends on besides the shape. */
export interface ServePlan {
  /** Parameters of the model's weights (float32 in the heap). */
  readonly parameters: number;
  /** Adapters attached to the served model, or null. */
  readonly lora: LoraSpec | null;
  /** Bytes of KV caches kept between the chunks of a reply (the policy's budget). */
  readonly kvCacheBytes: number;
  /** RMSNorm, RoPE, the SwiGLU gate and attention run as native kernels (wasm with the addon); else their tfjs forms (more tensors). */
  readonly nativeKernels: boolean;
}

/** The estimate, by part, in bytes. */
export interface ServeMemory {
  /** Weights and adapters. */
  readonly weights: number;
  /** The generation path's fused q/k/v weights. */
  readonly fusedQkv: number;
  /** A full-context prompt scored: the pass's peak. */
  readonly scoring: number;
  /** A full-context prompt generated from: one prefill call's peak. */
  readonly generation: number;
  /** In the heap: weights, fused q/k/v and the larger pass, allocator slack included. */
  readonly heap: number;
  /** KV caches outside the heap: the budget kept between chunks and one full-context request in flight. */
  readonly kvCache: number;
  /** Of {@link kvCache}, the request in flight. */
  readonly kvInFlight: number;
  /** On the machine: the heap and the KV caches. */
  readonly machine: number;
}

/** A projection's output floats per token: the product, a bias sum, a LoRA pair's `x·A`, `·B`, scaling and sum. */
function projectionFloats(out: number, bias: boolean, lora: LoraSpec | null, target: LoraTarget): number {
  return out * (bias ? 2 : 1) + (lora?.targets.includes(target) ? 3 * out + lora.rank : 0);
}

/**
 * Floats per prompt token alive at the end of one decoder layer of the scoring pass (the layer's
 * input excluded): the RMSNorm, q/k/v projections and their head transposes (q/k normed for
 * Qwen3), RoPE on q and k, the scaled queries (tfjs form), attention's output and its merge, the o-projection
 * and the residual, the second RMSNorm, gate, up, the gate's activation, down and the output.
 * @example scoringLayerFloats(SMOLLM2_135M_SHAPE, null, true) // 11,904 (6 d + 5 q + 5 kv + 3 f at d 576, q 576, kv 192, f 1536)
 */
export function scoringLayerFloats(config: TransformerConfig, lora: LoraSpec | null, nativeKernels: boolean): number {
  const d = config.dModel;
  const q = queryWidth(config);
  const kv = kvHeads(config) * headDim(config);
  const f = config.ffnHidden;
  const bias = config.qkvBias === true;
  const norm = (width: number, rows: number) => (nativeKernels ? width : 3 * width + 3 * rows); // tfjs: square, mean, + eps, rsqrt, x · rsqrt, · weight
  const rope = (width: number) => (nativeKernels ? width : 4 * width); // tfjs: x · R, x · cos, · sin, the sum
  const projections = projectionFloats(q, bias, lora, 'q_proj') + projectionFloats(kv, bias, lora, 'k_proj') + projectionFloats(kv, bias, lora, 'v_proj');
  const transposes = q + 2 * kv;
  const qkNorm = config.qkNorm === true ? norm(q, config.nHeads) + norm(kv, kvHeads(config)) : 0;
  // Roped q and k, the context and its merged heads; the tfjs form also scales q (the native kernel scales inside).
  const attention = rope(q) + rope(kv) + (nativeKernels ? 2 : 3) * q;
  const mlp = projectionFloats(d, false, lora, 'o_proj') + d + norm(d, 1) + projectionFloats(f, false, lora, 'gate_proj') + projectionFloats(f, false, lora, 'up_proj') + (nativeKernels ? f : 3 * f) + projectionFloats(d, false, lora, 'down_proj') + d;
  return norm(d, 1) + projections + transposes + qkNorm + attention + mlp;
}

/**
 * Bytes of the scoring pass's peak (module comment) over a `t`-token prompt with `topK` alternatives per position.
 * @example scoringBytes(smolLm2, null, 2048, true) // the decoder's peak at 2,048 tokens
 */
export function scoringBytes(config: TransformerConfig, lora: LoraSpec | null, t: number, nativeKernels: boolean, topK = MAX_TOP_LOGPROBS): number {
  const d = config.dModel;
  const v = config.vocabSize;
  // tfjs keeps the scores, their masked sum and the probabilities; the native inference kernel none.
  const maps = (nativeKernels ? 0 : 3) * config.nHeads * t * t;
  const decoder = t * d + t + t * t + 2 * t * headDim(config) + t * scoringLayerFloats(config, lora, nativeKernels) + maps; // input, ids, mask, rotary factors, the layer, its maps
  const rows = Math.min(t, scoringChunkRows(v));
  const kept = t * (1 + 2 * topK); // each position's log-prob, its top-k values and ids
  // Inside the log-softmax: the rows' slice and norm, the logits, and four maps (shifted, its float32
  // copy, exp, the result) with the row max, sum and log, and the targets. Once it returns only the
  // result stays beside the logits, so the top-k's slice of named ids and its outputs come below that.
  const chunk = rows * (d + (nativeKernels ? d : 3 * d + 3) + 5 * v + 4);
  const head = t * d + kept + chunk;
  return F32 * Math.max(decoder, head);
}

/**
 * The estimate for serving `config` (its `maxContext` the served context) as `plan` says.
 * @example serveMemory(shape, { parameters: 134515008, lora: null, kvCacheBytes: 2 ** 27, nativeKernels: true }).heap
 */
export function serveMemory(config: TransformerConfig, plan: ServePlan): ServeMemory {
  const t = config.maxContext;
  const adapters = plan.lora === null ? 0 : loraModules(config, plan.lora).reduce((n, m) => n + plan.lora!.rank * (m.inFeatures + m.outFeatures), 0);
  const weights = F32 * (plan.parameters + adapters);
  const scoring = scoringBytes(config, plan.lora, t, plan.nativeKernels);
  const sampler = samplerMemory(config, plan.lora, { rows: 1, context: t, prefillTokens: t, nativeKernels: plan.nativeKernels });
  const heap = Math.ceil((1 + ALLOCATOR_SLACK) * (weights + sampler.fusedQkv + Math.max(scoring, sampler.forward)));
  const kvCache = plan.kvCacheBytes + sampler.kvInFlight;
  return { weights, fusedQkv: sampler.fusedQkv, scoring, generation: sampler.forward, heap, kvCache, kvInFlight: sampler.kvInFlight, machine: heap + kvCache };
}
