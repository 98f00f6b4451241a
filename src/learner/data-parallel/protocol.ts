/**
 * What the learner's main thread and its gradient workers exchange (data parallelism, issue #10):
 * the replica shapes a worker builds once, the shared weight buffer it reads after every
 * optimizer update, and one gradient task per micro-batch.
 *
 * Weights travel through ONE SharedArrayBuffer written by the main thread between rounds (every
 * worker reads it; nothing is copied per worker). Gradients come back through the reply slot a task
 * names (a SharedArrayBuffer of the pool's ring, reply-ring.ts): the gradients of the variables in
 * order, then the loss statistics; the task's result is how many floats were written.
 */
import type { BackendPreference, MatmulPreference } from '../../backend/select.js';
import type { GradientOptions } from '../grad-accumulate.js';
import type { MicroBatch } from '../train-contract.js';
import type { TransformerConfig } from '../../models/transformer/config.js';

/** The critic a replica carries: a head on the policy trunk, or a separate small model. */
export type CriticReplicaSpec =
  | { readonly trunk: 'shared'; readonly dModel: number }
  | { readonly trunk: 'separate'; readonly dModel: number; readonly model: TransformerConfig };

/** Shapes of the models a gradient worker replicates (its weights come from the main thread). */
export interface ReplicaSpec {
  readonly policy: TransformerConfig;
  readonly critic: CriticReplicaSpec | null;
}

/** `workerData` of a gradient worker. */
export interface GradientWorkerData {
  readonly spec: ReplicaSpec;
  /** tfjs backend the worker selects (the main thread's). */
  readonly backend: BackendPreference;
  /**
   * Where the worker's wasm matmuls run (the main thread's choice). With native BLAS every worker
   * pins it to one thread: OpenBLAS threads are per process, and N workers × N threads on N cores
   * only contend (measured: 2 workers with 2 BLAS threads each ran at 0.4x of one process).
   */
  readonly matmul: MatmulPreference;
  /** [Σ sizes] float32 weights: the policy variables in `trainableVariables()` order, then the critic's. */
  readonly weights: SharedArrayBuffer;
  /** Element count of each variable, in the same order. */
  readonly sizes: readonly number[];
}

/** One gradient task: the weights version to use (reload from the shared buffer when it changed) and one micro-batch. */
export interface GradientTask {
  readonly weightsVersion: number;
  readonly micro: MicroBatch;
  /** The micro-batch's proximal log-probs for decoupled PPO (null otherwise). */
  readonly proximal: Float32Array | null;
  readonly options: GradientOptions;
  /** Where the reply goes (at least {@link replyLength} floats; the main thread reads it once the task resolves). */
  readonly reply: SharedArrayBuffer;
}

/**
 * Total float count of the reply of a task: the gradients (actor variables unless warming up,
 * then the critic's) followed by `statCount` statistics.
 * @example replyLength([10, 4], 1, false, 11) // 25
 */
export function replyLength(sizes: readonly number[], policyVariables: number, warmingUp: boolean, statCount: number): number {
  let n = statCount;
  sizes.forEach((size, i) => {
    if (!(warmingUp && i < policyVariables)) n += size;
  });
  return n;
}
