/**
 * The messages between the main thread and an inference worker (`inference-worker.ts`), all plain
 * data. The model is described, not enumerated: the worker builds `new TransformerModel(spec.model)`
 * from whatever `TransformerConfig` object it receives and loads whatever named weights arrive, so a
 * config that gains fields (grouped-query heads, biases, adapters) needs no change here.
 */
import type { ActRequest, ActResult, SamplingOptions } from '../../core/policy.js';
import type { BackendPreference, MatmulPreference } from '../../backend/select.js';
import type { LoraSpec } from '../lora/lora.js';
import type { TransformerConfig } from '../transformer/config.js';
import type { TransformerPolicyOptions } from '../transformer-policy.js';
import type { SharedWeights } from './shared-weights.js';

/** What a worker builds, once, at start-up (its `workerData`). */
export interface InferenceSpec {
  /** The model's config, passed as is to `new TransformerModel(...)`. */
  readonly model: TransformerConfig;
  /** The decoding policy's options (end token, KV-cache bounds, packed prefill). */
  readonly policy: TransformerPolicyOptions;
  /** Tensor backend and matmul path, as the main thread chose them. */
  readonly backend: BackendPreference;
  readonly matmul: MatmulPreference;
  /** How much lower the worker thread's scheduling priority is than the main thread's (nice increment; 0 = same). */
  readonly nice: number;
  /** The weights to serve first, and their version. */
  readonly weights: SharedWeights;
  readonly version: number;
  /**
   * A pretrained LoRA model's frozen base: the worker reads it from the Hugging Face folder itself
   * and attaches adapters of this spec; `weights` (and every later load) are then the adapters alone.
   */
  readonly base?: { readonly folder: string; readonly lora: LoraSpec };
  /** Ids the model may emit (`TransformerModel.restrictOutputs`), when fewer than its vocabulary. */
  readonly outputs?: number;
}

/** Per-episode KV-cache counters of one worker (see `TransformerPolicy.cacheStats`). */
export interface WorkerCacheStats {
  readonly hits: number;
  readonly misses: number;
  readonly evictions: number;
  readonly released: number;
  /** Episodes with a cache, and their bytes, after the message was handled. */
  readonly episodes: number;
  readonly bytes: number;
}

/** Main thread → worker. Handled in order, one at a time. */
export type ToWorker =
  | { readonly kind: 'act'; readonly id: number; readonly greedy: boolean; readonly requests: readonly ActRequest[]; readonly options: SamplingOptions }
  | { readonly kind: 'weights'; readonly id: number; readonly version: number; readonly weights: SharedWeights }
  | { readonly kind: 'release'; readonly episodeIds: readonly string[] };

/** An error as data: the class name, and for argument errors the property and detail to rebuild it. */
export interface WorkerError {
  readonly name: string;
  readonly message: string;
  readonly property?: string;
  readonly detail?: string;
}

/** Worker → main thread. */
export type FromWorker =
  | { readonly kind: 'ready'; readonly backend: string }
  | { readonly kind: 'startFailed'; readonly error: WorkerError }
  | { readonly kind: 'acted'; readonly id: number; readonly results: readonly ActResult[]; readonly cache: WorkerCacheStats }
  | { readonly kind: 'loaded'; readonly id: number; readonly cache: WorkerCacheStats }
  | { readonly kind: 'failed'; readonly id: number; readonly error: WorkerError };
