/**
 * Batch-level access to environment instances, for drivers that collect many episodes' calls
 * themselves (the flow episodes of `turnwise simulate`): one call — and one promise — per batch of
 * ops for one shard, instead of one promise per op as {@link EnvHandle} gives. In-process, a batch
 * runs synchronously on the environment objects (no copies: the answers are the environments' own
 * results); in workers, it is one transferred buffer each way (`batch-codec.ts`) to the shard's
 * thread, the same worker script and shard logic as {@link WorkerEnvPool}.
 */
import type { Piscina } from 'piscina';
import type { Observation, StepResult } from '../../core/types.js';
import type { EnvironmentSpec } from '../../envs/environment.js';
import { decodeReplies, type EnvOp, type EnvReply, encodeOps, STATUS } from './batch-codec.js';
import { EnvShard } from './env-shard.js';
import { openShardPools } from './worker-pool.js';

/** One op's answer: the step result (a reset answers `{ observation, reward: 0, done: false }`), or the error it raised. */
export type EnvAnswer = StepResult | Error;

/** Environment instances addressed by slot, spread over shards, driven a batch at a time. */
export interface BatchEnv {
  /** `in-process`, or `N worker threads`. */
  readonly description: string;
  /** Number of shards; a slot's ops must go to `shardOf(slot)`. */
  readonly shards: number;
  shardOf(slot: number): number;
  /** Applies `ops` (all of one shard) in order; answers in the same order. Rejects only when the whole batch is lost (a dead worker). */
  run(shard: number, ops: readonly EnvOp[]): Promise<readonly EnvAnswer[]>;
  close(): Promise<void>;
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * How long an in-process batch may hold the event loop before it yields (a turn for timers, I/O,
 * NATS and the model's replies). Why: a batch of 1,024 BabyAI steps is 40–60 ms of synchronous
 * work, which was the whole p99 event-loop lag of 10,000 model-driven agents.
 */
export const IN_PROCESS_SLICE_MS = 4;
/** Ops between two clock reads (a BabyAI op is 20–60 µs). */
const OPS_PER_CLOCK_READ = 16;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Environments in this thread, one shard: the same slot table as a worker's {@link EnvShard}, but
 * answers are the environments' own results (no encoding, no copies). A batch runs in slices of
 * {@link IN_PROCESS_SLICE_MS}; batches run one after another in the order they were given, so a
 * slot's ops keep their order as if each batch ran at once.
 * @example const env = new InProcessBatchEnv(spec, settings); const [answer] = await env.run(0, [{ kind: OP.reset, slot: 0, taskIndex: 1, text: '' }]);
 */
export class InProcessBatchEnv implements BatchEnv {
  readonly description = 'in-process';
  readonly shards = 1;
  private readonly shard: EnvShard;
  /** The batch running now (the next one waits for it). */
  private tail: Promise<unknown> = Promise.resolve();

  constructor(
    spec: EnvironmentSpec,
    settings: Readonly<Record<string, unknown>>,
    private readonly sliceMs: number = IN_PROCESS_SLICE_MS,
  ) {
    this.shard = new EnvShard(spec, settings);
  }

  shardOf(): number {
    return 0;
  }

  run(_shard: number, ops: readonly EnvOp[]): Promise<readonly EnvAnswer[]> {
    const batch = this.tail.then(() => this.apply(ops));
    this.tail = batch.catch(() => undefined);
    return batch;
  }

  private async apply(ops: readonly EnvOp[]): Promise<readonly EnvAnswer[]> {
    const answers: EnvAnswer[] = new Array(ops.length);
    let sliceStart = performance.now();
    for (let i = 0; i < ops.length; i++) {
      if (i % OPS_PER_CLOCK_READ === 0 && i > 0 && performance.now() - sliceStart >= this.sliceMs) {
        await nextTurn();
        sliceStart = performance.now();
      }
      try {
        const answer = this.shard.answer(ops[i] as EnvOp);
        // Synchronous environments (BabyAI) answer directly: no microtask per op.
        answers[i] = answer instanceof Promise ? await answer : answer;
      } catch (error) {
        answers[i] = asError(error);
      }
    }
    return answers;
  }

  close(): Promise<void> {
    // After the batch in progress: closing under it would fail its remaining ops.
    return this.tail.then(() => this.shard.closeAll());
  }
}

/** A decoded step whose `info` is parsed only when read (most drivers never read it). */
class DecodedStep implements StepResult {
  readonly observation: Observation;
  readonly reward: number;
  readonly done: boolean;
  readonly success?: boolean;
  private readonly infoJson: string;

  constructor(reply: EnvReply) {
    this.observation = reply.actions === null ? { text: reply.text } : { text: reply.text, availableActions: reply.actions };
    this.reward = reply.reward;
    this.done = reply.done;
    if (reply.success !== undefined) this.success = reply.success;
    this.infoJson = reply.infoJson;
  }

  get info(): StepResult['info'] {
    return this.infoJson === '' ? undefined : (JSON.parse(this.infoJson) as StepResult['info']);
  }
}

/**
 * Environments in `workers` piscina threads (slot `s` lives in thread `s % workers`).
 * @example const env = new WorkerBatchEnv('babyai', { levels: ['GoToRedBall'] }, 2);
 */
export class WorkerBatchEnv implements BatchEnv {
  readonly description: string;
  readonly shards: number;
  private readonly pools: Piscina[];

  constructor(envName: string, settings: Readonly<Record<string, unknown>>, workers: number) {
    this.pools = openShardPools(envName, settings, workers);
    this.shards = workers;
    this.description = `${workers} worker thread${workers === 1 ? '' : 's'}`;
  }

  shardOf(slot: number): number {
    return slot % this.shards;
  }

  async run(shard: number, ops: readonly EnvOp[]): Promise<readonly EnvAnswer[]> {
    const buffer = encodeOps(ops);
    const answer = (await (this.pools[shard] as Piscina).run(buffer, { transferList: [buffer] })) as ArrayBuffer;
    const replies = decodeReplies(answer);
    const answers: EnvAnswer[] = new Array(replies.length);
    for (let i = 0; i < replies.length; i++) {
      const reply = replies[i] as EnvReply;
      answers[i] = reply.status === STATUS.error ? new Error(reply.error) : new DecodedStep(reply);
    }
    return answers;
  }

  async close(): Promise<void> {
    await Promise.all(this.pools.map((pool) => pool.destroy()));
  }
}

/**
 * The batch environment a placement asks for: in this thread when `workers` is 0, else that many worker threads.
 * @example const env = createBatchEnv(spec, settings, 2);
 */
export function createBatchEnv(spec: EnvironmentSpec, settings: Readonly<Record<string, unknown>>, workers: number): BatchEnv {
  return workers === 0 ? new InProcessBatchEnv(spec, settings) : new WorkerBatchEnv(spec.name, settings, workers);
}
