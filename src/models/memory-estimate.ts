/**
 * How much tensor memory a run's models need, estimated before anything is allocated, so that a
 * model too large for the backend is refused with numbers instead of crashing the wasm heap
 * (which has no way back: tfjs's wasm module dies with "memory access out of bounds" at 4 GiB).
 *
 * Counted, in float32, on the learner's thread: the weights; the KL reference (a copy for full
 * fine-tuning, none for LoRA: adapters off); Adam's two moments, the gradients of what trains and
 * their clipped copy (on the native path the moments live outside the heap and the clip is folded
 * into Adam, so the heap holds the gradients alone, two copies while micro-batches are summed:
 * `host` counts the moments); one micro-batch's activations. Where the sampler runs — on the same thread,
 * or in inference workers each with a heap of its own — its part: a copy of what trains (a LoRA
 * sampler shares the frozen base; a worker reads its own base), the fused q/k/v weights of its
 * packed path and one forward call's intermediates (`./sampler-memory.ts`). The KV caches it keeps
 * between turns and those of a batch in flight are JS `Float32Array`s outside the tensor backend:
 * `kvCache` counts them apart from the heaps, against the machine's memory.
 *
 * Activations, as tfjs keeps them: every tensor a kernel saves for the backward pass and every
 * gradient lives until the backward pass ends. Per layer and token that is the forward's
 * intermediates (`6 d + 6 q + 5 kv + 3 f` floats; with LoRA `3 x out + r` more per adapted
 * projection in tfjs, `out + r` with the native fused projection (measured), and LoRA dropout's
 * five `[tokens, in]` tensors) plus their gradients (about 1.3 per forward tensor, measured), and
 * per sequence four `heads x T x T` attention maps in tfjs (scores, probabilities, their
 * gradients), one with the native fused attention (its probabilities). With activation checkpointing (pretrained models) only one layer's tape is alive at a time, plus each layer's `[tokens, d]` input. The loss head
 * holds three `[targets, vocab]` maps (logits, probabilities, their gradient) for the targets
 * alone (the replies' tokens), for at most a chunk of rows when the head is chunked. Checked against the
 * live tensor bytes of training steps in test/models/memory-estimate.test.ts, and the sampler's part
 * against a sampling call's in test/models/sampler-memory.test.ts.
 */
import { type LoraSpec, loraModules } from './lora/lora.js';
import { headDim, kvHeads, queryWidth, type TransformerConfig } from './transformer/config.js';
import { headChunkRows } from './transformer/chunked-head.js';
import { weightSpecs } from './transformer/weights.js';
import { samplerMemory } from './sampler-memory.js';

/** The most the wasm backend can hold (its heap is 32-bit addressed). */
export const WASM_HEAP_BYTES = 4 * 2 ** 30;

/** What the allocator adds to the live tensor bytes (fragmentation, the heap's growth step): measured 1-9 % at the SmolLM2-135M shape. */
export const ALLOCATOR_SLACK = 0.1;

/** Gradient tensors per forward tensor of a layer's tape (fitted to the live bytes of training steps, see {@link layerFloats}). */
const GRADIENTS_PER_TENSOR = 1.3;

/** What the estimate depends on besides the model shape. */
export interface MemoryPlan {
  /** The LoRA adapters, or null for full fine-tuning. */
  readonly lora: LoraSpec | null;
  /** A KL reference is kept (klCoef > 0). */
  readonly reference: boolean;
  /** Tokens of one training micro-batch (padded batch x length). */
  readonly microBatchTokens: number;
  /** Length of its rows (for the attention maps: `microBatchTokens / sequenceLength` rows of it). */
  readonly sequenceLength: number;
  /** Tokens of the micro-batch that are training targets (the replies; what reaches the LM head). Default every token. */
  readonly targetTokens?: number;
  /** Bytes of KV caches the sampler keeps between turns (its budget, all workers together). */
  readonly kvCacheBytes: number;
  /** Decoder layers checkpointed in training (only their inputs kept; pretrained models). Default false. */
  readonly checkpointing?: boolean;
  /** Inference worker threads, each with its own heap; 0 or absent: the sampler runs on the learner's thread. */
  readonly samplerWorkers?: number;
  /** Rows one sampling call decodes together (0 or absent: none counted, turnwise's own model). */
  readonly samplerRows?: number;
  /** Most new tokens one prefill call feeds (default: every row's context at once). */
  readonly prefillTokens?: number;
  /** Longest context of a sampled row (prompt + reply); default `sequenceLength`. */
  readonly samplerContext?: number;
  /**
   * Adam's moments kept outside the tensor backend and the clip folded into the update (the native
   * path: `AdamW` on wasm with the addon, `host-adam.ts`). Default false: everything in the heap.
   */
  readonly optimizerOnHost?: boolean;
  /** More than one micro-batch is summed per step (a second copy of the gradients meanwhile). Default true. */
  readonly accumulates?: boolean;
  /** Targets are constrained to listed ids (turnwise's own model): the loss head is never chunked. Default false. */
  readonly constrained?: boolean;
  /** RMSNorm, the SwiGLU gate and LoRA projections run natively (wasm with the addon: `nativeKernels()`); default false, their tfjs forms (more tensors). */
  readonly nativeKernels?: boolean;
}

/** The estimate, by part, in bytes. `total` is the learner's thread; `samplerTotal` each inference worker's. */
export interface MemoryEstimate {
  readonly weights: number;
  readonly samplerCopy: number;
  readonly reference: number;
  readonly optimizer: number;
  readonly activations: number;
  /** The fused q/k/v weights of the sampler's packed path (in its heap), 0 when no sampling batch is planned. */
  readonly fusedQkv: number;
  /** One forward call's intermediates in the sampler's heap: the larger of a prefill call and a decode step. */
  readonly prefill: number;
  /** The learner's thread (and the sampler's, when it runs there), allocator slack included. */
  readonly total: number;
  /** Each inference worker's heap (0 when the sampler runs on the learner's thread), allocator slack included. */
  readonly samplerTotal: number;
  /** Bytes outside the tensor backend, exact (Adam's moments on the native path), else 0. */
  readonly host: number;
  /**
   * KV caches, JS memory outside the tensor backend: the budget kept between turns (all workers
   * together) and each sampler's batch in flight (each row's caches and the merged copy decode steps
   * run on). An upper bound.
   */
  readonly kvCache: number;
  /** Of {@link kvCache}, the batches in flight (what `runtime.samplerMaxBatch` drives). */
  readonly kvInFlight: number;
}

/**
 * Parameters of a model shape (a tied head counted once).
 * @example parameterCount(smolLm2Shape) // 134515008
 */
export function parameterCount(config: TransformerConfig): number {
  return weightSpecs(config).reduce((n, spec) => n + spec.hfShape.reduce((a, b) => a * b, 1), 0);
}

/** Floats per token of one layer's forward and of its gradients (module comment). */
function layerFloats(config: TransformerConfig, lora: LoraSpec | null, nativeKernels: boolean): { forward: number; gradients: number } {
  const d = config.dModel;
  const q = queryWidth(config);
  const kv = kvHeads(config) * headDim(config);
  const base = 6 * d + 6 * q + 5 * kv + 3 * config.ffnHidden;
  const perLayer = lora === null ? [] : loraModules({ ...config, nLayers: 1 }, lora);
  // tfjs keeps x·A, ·B, its scaling and the sum; the native fused projection (backend/native-lora.ts)
  // x·A alone, but the live peaks measured in the tests still grew by about one [tokens, out] per
  // adapted projection over that (20 % below the tfjs form's, not the 3 x out the count predicts).
  const adapters = perLayer.reduce((n, m) => n + (nativeKernels ? 1 : 3) * m.outFeatures + lora!.rank, 0);
  const dropped = lora !== null && lora.dropout > 0 ? perLayer.reduce((n, m) => n + m.inFeatures, 0) : 0;
  // Dropout: uniform noise, its sum, floor, scale and the product; only the product gets a gradient.
  // A tensor read by several ops gets a gradient from each before they are added: measured 1.3 per
  // forward tensor at the SmolLM2-135M shape (test/models/memory-estimate.test.ts).
  return { forward: base + adapters + 5 * dropped, gradients: Math.ceil(GRADIENTS_PER_TENSOR * (base + adapters)) + dropped };
}

/**
 * The estimate for `config` trained as `plan` says.
 * @example estimateMemory(cfg, { lora: null, reference: false, microBatchTokens: 8192, sequenceLength: 256, kvCacheBytes: 2 ** 27 }).total
 */
export function estimateMemory(config: TransformerConfig, plan: MemoryPlan): MemoryEstimate {
  const f32 = 4;
  const params = parameterCount(config);
  const weights = params * f32;
  const lora = plan.lora;
  const trained = lora === null ? params : loraModules(config, lora).reduce((n, m) => n + lora.rank * (m.inFeatures + m.outFeatures), 0);
  const reference = plan.reference && lora === null ? weights : 0;
  // In the heap: two Adam moments, the accumulated gradients and their clipped copy; on the native
  // path only the gradients (two copies while micro-batches are summed), the moments on the host.
  const onHost = plan.optimizerOnHost === true;
  const optimizer = (onHost ? (plan.accumulates === false ? 1 : 2) : 4) * trained * f32;
  const host = onHost ? 2 * trained * f32 : 0;
  const tokens = plan.microBatchTokens;
  const t = plan.sequenceLength;
  const sequences = Math.max(1, Math.ceil(tokens / Math.max(1, t)));
  const targets = Math.min(tokens, plan.targetTokens ?? tokens);
  const layer = layerFloats(config, lora, plan.nativeKernels === true);
  // tfjs keeps the scores and probabilities and makes their gradients; the native fused attention
  // (backend/native-attention.ts) keeps the probabilities alone and its backward makes no map.
  const attention = (plan.nativeKernels === true ? 1 : 4) * config.nHeads * t * t * sequences;
  const perLayer = tokens * (layer.forward + layer.gradients) + attention;
  // Unconstrained heads larger than a chunk run a chunk of rows at a time (transformer/chunked-head.ts).
  const headRows = Math.min(targets, plan.constrained === true ? Number.POSITIVE_INFINITY : headChunkRows(config.vocabSize));
  const head = 3 * headRows * config.vocabSize;
  const layers = plan.checkpointing ? (config.nLayers + 1) * tokens * config.dModel + perLayer : config.nLayers * perLayer;
  const activations = f32 * (layers + head);

  // The sampler: its copy of what trains, the fused q/k/v weights and one forward call in its heap; the KV caches outside it.
  const workers = plan.samplerWorkers ?? 0;
  const rows = plan.samplerRows ?? 0;
  const sampler = samplerMemory(config, lora, {
    rows,
    context: plan.samplerContext ?? t,
    prefillTokens: plan.prefillTokens ?? Number.POSITIVE_INFINITY,
    nativeKernels: plan.nativeKernels === true,
  });
  const fusedQkv = rows > 0 ? sampler.fusedQkv : 0;
  const prefill = rows > 0 ? sampler.forward : 0;
  const kvInFlight = Math.max(1, workers) * sampler.kvInFlight;
  const samplerCopy = lora === null ? weights : trained * f32;
  const slack = 1 + ALLOCATOR_SLACK;
  const total = Math.ceil(slack * (weights + reference + optimizer + activations + (workers === 0 ? samplerCopy + fusedQkv + prefill : 0)));
  const samplerTotal = workers === 0 ? 0 : Math.ceil(slack * (weights + trained * f32 + fusedQkv + prefill));
  return { weights, samplerCopy, reference, optimizer, activations, fusedQkv, prefill, total, samplerTotal, host, kvCache: plan.kvCacheBytes + kvInFlight, kvInFlight };
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
 * @example describeEstimate(e) // 'learner heap: weights 513 MiB + gradients 37 MiB + activations 428 MiB (+10 % allocator slack) = 1.05 GiB; Adam's moments 37 MiB outside the heap; each sampler worker's heap: ... = 831 MiB; KV caches 893 MiB outside the heaps (128 MiB kept between turns + 765 MiB in flight)'
 */
export function describeEstimate(e: MemoryEstimate): string {
  const join = (parts: Array<[string, number]>) =>
    parts
      .filter(([, n]) => n > 0)
      .map(([name, n]) => `${name} ${formatBytes(n)}`)
      .join(' + ');
  const slack = `(+${Math.round(ALLOCATOR_SLACK * 100)} % allocator slack)`;
  const moments = e.host > 0 ? `; Adam's moments ${formatBytes(e.host)} outside the heap` : '';
  const kept = e.kvCache - e.kvInFlight;
  const inFlight = e.kvInFlight > 0 ? `${formatBytes(kept)} kept between turns + ${formatBytes(e.kvInFlight)} in flight` : 'kept between turns';
  const caches = (heaps: string) => (e.kvCache > 0 ? `; KV caches ${formatBytes(e.kvCache)} outside the ${heaps} (${inFlight})` : '');
  if (e.samplerTotal === 0) {
    const parts: Array<[string, number]> = [
      ['weights', e.weights],
      ['sampler copy', e.samplerCopy],
      ['KL reference', e.reference],
      [e.host > 0 ? 'gradients' : 'optimizer + gradients', e.optimizer],
      ['activations', e.activations],
      ['fused q/k/v', e.fusedQkv],
      ['prefill', e.prefill],
    ];
    return `${join(parts)} ${slack} = ${formatBytes(e.total)}${moments}${caches('heap')}`;
  }
  const learner = join([
    ['weights', e.weights],
    ['KL reference', e.reference],
    [e.host > 0 ? 'gradients' : 'optimizer + gradients', e.optimizer],
    ['activations', e.activations],
  ]);
  const sampler = join([
    ['weights', e.weights],
    ['adapters or copy', e.samplerCopy === e.weights ? 0 : e.samplerCopy],
    ['fused q/k/v', e.fusedQkv],
    ['prefill', e.prefill],
  ]);
  return `learner heap: ${learner} ${slack} = ${formatBytes(e.total)}${moments}; each sampler worker's heap: ${sampler} ${slack} = ${formatBytes(e.samplerTotal)}${caches('heaps')}`;
}
