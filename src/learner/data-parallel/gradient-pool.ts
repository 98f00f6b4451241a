/**
 * Data-parallel gradients for the learner (issue #10): N piscina worker threads, each with its own
 * tfjs backend and a replica of the policy (and critic). For one mini-batch the main thread
 * publishes the current weights into a shared buffer, hands each micro-batch to a free worker,
 * and adds the returned gradients; the optimizer step then runs once, on the main thread, so
 * optimizer state, checkpoints and resume are exactly those of a single process.
 *
 * Exactness: the micro-batches are the single process's (the packing does not depend on the
 * workers), each worker computes a micro-batch's gradient with the same code and kernels, and the
 * gradients are added here in micro-batch order with float32 adds: the step is bit-identical to
 * `train.dataParallel: 1`. A mini-batch of one micro-batch therefore runs on one worker.
 */
import type { Worker } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { InvalidArgumentError, TurnwiseError } from '../../core/errors.js';
import { workerModule } from '../../core/worker-module.js';
import type { BackendPreference } from '../../backend/select.js';
import { nativeUse } from '../../backend/native.js';
import { copyFloatsInto } from '../../backend/read-into.js';
import { tf } from '../../backend/tf.js';
import type { Critic } from '../critic.js';
import { type AccumulatedGradients, type GradientOptions, STATS } from '../grad-accumulate.js';
import type { MicroBatch, TrainableModel } from '../train-contract.js';
import { type GradientTask, type GradientWorkerData, type ReplicaSpec, replyLength } from './protocol.js';
import { ReplyRing } from './reply-ring.js';

export type { ReplicaSpec } from './protocol.js';

/** Options of {@link GradientPool}. */
export interface GradientPoolOptions {
  /** Worker threads, ≥ 2. */
  readonly workers: number;
  /** Shapes of the replicas the workers build. */
  readonly spec: ReplicaSpec;
  /** The learner's models: their weights are published to the workers before every round. */
  readonly policy: TrainableModel;
  readonly critic: Critic | null;
  /** Backend the workers select (default: the main thread's current tfjs backend). */
  readonly backend?: BackendPreference;
}

function currentBackend(): BackendPreference {
  const name = tf.getBackend();
  return name === 'wasm' || name === 'cpu' || name === 'tensorflow' ? name : 'auto';
}

/**
 * The learner's gradient workers.
 * @example
 * const pool = new GradientPool({ workers: 2, spec: { policy: model.config, critic: null }, policy: model, critic: null });
 * const trainer = new PolicyTrainer({ policy: model, lr: 1e-3, gradientPool: pool });
 * await trainer.trainStep(trajectories); await pool.close();
 */
export class GradientPool {
  readonly size: number;
  /** Started on the first round (a pool built for a stack that never trains starts no thread). */
  private piscina: Piscina<GradientTask, number> | null = null;
  private readonly workerData: GradientWorkerData;
  private readonly policy: TrainableModel;
  private readonly critic: Critic | null;
  private readonly weights: Float32Array;
  private readonly sizes: number[];
  /** Where the workers write their replies (twice the workers: one ahead for each while a slower one finishes). */
  private readonly ring: ReplyRing;
  private version = 0;
  private closed = false;
  /** A worker that failed outside a task (e.g. at start-up); later rounds fail with it instead of hanging. */
  private failure: Error | null = null;
  /** Rejects on the first worker failure, so a round in flight fails instead of waiting forever. */
  private readonly failed: Promise<never>;
  private rejectFailed: (error: Error) => void = () => {};

  constructor(options: GradientPoolOptions) {
    if (!(Number.isInteger(options.workers) && options.workers >= 2)) {
      throw InvalidArgumentError.format('workers', `expected an integer ≥ 2 (1 is the single-process path), got ${options.workers}`);
    }
    if ((options.spec.critic === null) !== (options.critic === null)) {
      throw InvalidArgumentError.format('spec.critic', 'must describe the learner critic exactly when there is one');
    }
    this.size = options.workers;
    this.policy = options.policy;
    this.critic = options.critic;
    this.sizes = this.variables().map((v) => v.size);
    const total = this.sizes.reduce((a, b) => a + b, 0);
    this.weights = new Float32Array(new SharedArrayBuffer(total * Float32Array.BYTES_PER_ELEMENT));
    this.ring = new ReplyRing(2 * options.workers, total + STATS.length);
    this.workerData = {
      spec: options.spec,
      backend: options.backend ?? currentBackend(),
      matmul: nativeUse() === 'off' ? 'wasm' : 'auto',
      weights: this.weights.buffer as SharedArrayBuffer,
      sizes: this.sizes,
    };
    this.failed = new Promise<never>((_, reject) => {
      this.rejectFailed = reject;
    });
    this.failed.catch(() => {}); // observed through accumulate(); never an unhandled rejection
  }

  /** Gradient tasks the workers have finished (one per micro-batch). */
  get tasksCompleted(): number {
    return this.piscina?.completed ?? 0;
  }

  /** The worker threads (for shutdown checks). */
  get threads(): readonly Worker[] {
    return this.piscina?.threads ?? [];
  }

  /**
   * Summed gradients of `chunk` (one mini-batch) under the learner's current weights: each
   * micro-batch on whichever worker is free, the replies added in micro-batch order from the first
   * (as `accumulateGradients` adds them in one thread), so the sum is bit-identical to the
   * single-process one whatever the number of workers or the order the replies come back in.
   */
  async accumulate(chunk: readonly MicroBatch[], options: GradientOptions, proximalOf: (micro: MicroBatch) => Float32Array | undefined): Promise<AccumulatedGradients> {
    if (this.closed) throw new TurnwiseError('gradient pool used after close()');
    if (this.failure !== null) throw new TurnwiseError(`a gradient worker failed: ${this.failure.message}`, { cause: this.failure });
    if (chunk.length === 0 || chunk[0].tokenCount === 0) throw new TurnwiseError('accumulate: no trained tokens in this mini-batch');
    this.publishWeights();
    const weightsVersion = this.version;
    const pool = this.start();
    const policyVariables = this.policy.trainableVariables().length;
    const length = replyLength(this.sizes, policyVariables, options.warmingUp, STATS.length);
    const ring = this.ring;
    ring.begin(length);
    const runs = chunk.map(async (micro, index) => {
      try {
        const reply = await ring.slotFor(index);
        ring.arrived(index, await pool.run({ weightsVersion, micro, proximal: proximalOf(micro) ?? null, options, reply }));
      } catch (error) {
        ring.abort(error instanceof Error ? error : new Error(String(error)));
        throw error;
      }
    });
    // Every task of the round settles before it fails: none may still write into a slot the next round uses.
    const settled = await Promise.race([Promise.allSettled(runs), this.failed]);
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    const total = ring.result(chunk.length);
    const grads: tf.Tensor[] = [];
    let offset = 0;
    const variables = this.variables();
    variables.forEach((v, i) => {
      if (options.warmingUp && i < policyVariables) return;
      grads.push(tf.tensor(total.subarray(offset, offset + v.size), v.shape, 'float32'));
      offset += v.size;
    });
    const actorCount = options.warmingUp ? 0 : policyVariables;
    return { actorGrads: grads.slice(0, actorCount), criticGrads: grads.slice(actorCount), stats: Array.from(total.subarray(offset)) };
  }

  /** Stops every worker thread; resolves once they have exited. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.piscina?.destroy();
  }

  /** The piscina pool, started on first use. */
  private start(): Piscina<GradientTask, number> {
    if (this.piscina !== null) return this.piscina;
    const pool = new Piscina<GradientTask, number>({
      ...workerModule(import.meta.url, './grad-worker'),
      workerData: this.workerData,
      minThreads: this.size,
      maxThreads: this.size,
      idleTimeout: Number.POSITIVE_INFINITY,
      concurrentTasksPerWorker: 1,
    });
    // Without a listener, a worker's start-up error would be an uncaught 'error' event (a crash).
    pool.on('error', (error: unknown) => {
      this.failure ??= error instanceof Error ? error : new Error(String(error));
      this.rejectFailed(new TurnwiseError(`a gradient worker failed: ${this.failure.message}`, { cause: this.failure }));
    });
    this.piscina = pool;
    return pool;
  }

  private variables(): tf.Variable[] {
    return [...this.policy.trainableVariables(), ...(this.critic?.trainableVariables() ?? [])];
  }

  /** Writes the learner's current weights into the shared buffer (between rounds only: no worker is reading). */
  private publishWeights(): void {
    let offset = 0;
    for (const v of this.variables()) {
      // Straight from the tensor's memory into the shared buffer: no `dataSync` copy per variable on wasm (see reply-ring.ts).
      copyFloatsInto(v, this.weights.subarray(offset, offset + v.size));
      offset += v.size;
    }
    this.version++;
  }
}
