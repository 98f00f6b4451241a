/**
 * Environment instances in piscina worker threads. Each thread is a shard holding the instances
 * whose slot maps to it (one piscina pool of one thread per shard, because an environment is
 * stateful and must always reach the same thread). Calls made during one turn of the event loop
 * are collected per shard and sent as one message with one transferred buffer (see
 * `batch-codec.ts`), so the per-message cost (about 90 µs for a piscina round trip) is shared by
 * every step of the batch. At most two batches per shard are in flight: one running, one queued,
 * so the worker never waits for the main thread.
 */
import { Piscina } from 'piscina';
import { EnvironmentError, InvalidArgumentError } from '../../core/errors.js';
import { workerModule } from '../../core/worker-module.js';
import type { Observation, StepResult } from '../../core/types.js';
import { decodeReplies, type EnvOp, type EnvReply, encodeOps, OP, type OpKind, STATUS } from './batch-codec.js';
import type { EnvHandle, EnvPool } from './env-pool.js';
import type { EnvWorkerData } from './env-worker.js';

interface Pending {
  readonly op: EnvOp;
  readonly resolve: (reply: EnvReply) => void;
  readonly reject: (error: Error) => void;
}

const MAX_IN_FLIGHT = 2;

class Shard {
  private queue: Pending[] = [];
  private inFlight = 0;
  private scheduled = false;
  /** Batches sent and ops carried, for diagnostics. */
  batches = 0;
  ops = 0;

  constructor(
    readonly pool: Piscina,
    private readonly envName: string,
  ) {}

  submit(op: EnvOp): Promise<EnvReply> {
    return new Promise((resolve, reject) => {
      this.queue.push({ op, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= MAX_IN_FLIGHT || this.queue.length === 0) return;
    this.scheduled = true;
    // setImmediate runs after the microtasks of this turn: every call made in it joins the batch.
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    if (this.inFlight >= MAX_IN_FLIGHT || this.queue.length === 0) return;
    const batch = this.queue;
    this.queue = [];
    this.inFlight++;
    this.batches++;
    this.ops += batch.length;
    const buffer = encodeOps(batch.map((p) => p.op));
    this.pool.run(buffer, { transferList: [buffer] }).then(
      (answer: ArrayBuffer) => {
        this.inFlight--;
        const replies = decodeReplies(answer);
        for (let i = 0; i < batch.length; i++) (batch[i] as Pending).resolve(replies[i] as EnvReply);
        this.schedule();
      },
      (error: unknown) => {
        this.inFlight--;
        const message = error instanceof Error ? error.message : String(error);
        for (const p of batch) p.reject(new EnvironmentError(this.envName, `worker batch failed: ${message}`, { cause: error }));
        this.schedule();
      },
    );
  }

  /** Rejects what has not been sent yet. */
  abandon(reason: string): void {
    const queued = this.queue;
    this.queue = [];
    for (const p of queued) p.reject(new EnvironmentError(this.envName, reason));
  }
}

function toObservation(reply: EnvReply): Observation {
  return reply.actions === null ? { text: reply.text } : { text: reply.text, availableActions: reply.actions };
}

function toStepResult(reply: EnvReply): StepResult {
  const result: { -readonly [K in keyof StepResult]: StepResult[K] } = { observation: toObservation(reply), reward: reply.reward, done: reply.done };
  if (reply.success !== undefined) result.success = reply.success;
  if (reply.infoJson !== '') result.info = JSON.parse(reply.infoJson) as StepResult['info'];
  return result;
}

/**
 * One single-thread piscina pool per shard, running the environment worker: one thread per pool,
 * kept for the pool's life, because the environments' state lives in it.
 * @example const pools = openShardPools('babyai', { levels: ['GoToRedBall'] }, 2);
 */
export function openShardPools(envName: string, settings: Readonly<Record<string, unknown>>, workers: number): Piscina[] {
  if (!Number.isInteger(workers) || workers < 1) {
    throw InvalidArgumentError.format('env.workers', `expected a positive integer number of worker threads, got ${String(workers)}`);
  }
  // The worker runs the parent's own code: compiled JS from dist/, the .ts source through tsx otherwise.
  const script = workerModule(import.meta.url, './env-worker');
  const workerData: EnvWorkerData = { envName, settings };
  return Array.from({ length: workers }, () => new Piscina({ ...script, minThreads: 1, maxThreads: 1, idleTimeout: Number.POSITIVE_INFINITY, workerData }));
}

/** Options of {@link WorkerEnvPool}. */
export interface WorkerEnvPoolOptions {
  /** Registered environment name (every worker imports the built-in environments). */
  readonly envName: string;
  readonly settings: Readonly<Record<string, unknown>>;
  /** Worker threads (shards). */
  readonly workers: number;
}

/**
 * Environment instances spread over `workers` threads, batched per event-loop turn.
 * @example
 * const pool = new WorkerEnvPool({ envName: 'babyai', settings: { levels: ['GoToRedBall'] }, workers: 2 });
 * const env = pool.open(); const obs = await env.reset(1000); await pool.close();
 */
export class WorkerEnvPool implements EnvPool {
  readonly description: string;
  private readonly shards: Shard[];
  private nextSlot = 0;
  private closed = false;

  constructor(private readonly options: WorkerEnvPoolOptions) {
    this.shards = openShardPools(options.envName, options.settings, options.workers).map((pool) => new Shard(pool, options.envName));
    this.description = `${options.workers} worker thread${options.workers === 1 ? '' : 's'}`;
  }

  open(): EnvHandle {
    if (this.closed) throw new EnvironmentError(this.options.envName, 'the worker pool is closed');
    const slot = this.nextSlot++;
    const shard = this.shards[slot % this.shards.length] as Shard;
    const call = async (kind: OpKind, taskIndex: number, text: string): Promise<EnvReply> => {
      const reply = await shard.submit({ kind, slot, taskIndex, text });
      if (reply.status === STATUS.error) throw new EnvironmentError(this.options.envName, reply.error);
      return reply;
    };
    let closed = false;
    return {
      reset: async (taskIndex) => toObservation(await call(OP.reset, taskIndex, '')),
      step: async (actionText) => toStepResult(await call(OP.step, 0, actionText)),
      close: async () => {
        if (closed || this.closed) return;
        closed = true;
        await call(OP.close, 0, '');
      },
    };
  }

  /** Messages sent and ops carried so far (ops per message shows how well calls batch). */
  stats(): { batches: number; ops: number } {
    return this.shards.reduce((acc, s) => ({ batches: acc.batches + s.batches, ops: acc.ops + s.ops }), { batches: 0, ops: 0 });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const shard of this.shards) shard.abandon('the worker pool closed');
    await Promise.all(this.shards.map((s) => s.pool.destroy()));
  }
}
