/**
 * The sampler's model in worker threads (issue #20): N inference workers (`inference-worker.ts`),
 * each with its own tfjs backend and a copy of the policy model, behind one {@link ServingPolicy}.
 * The calling thread only routes: a batch from the sampler's dynamic batcher is split into one
 * sub-batch per worker, the answers are put back in request order. Sampling takes 0 ms of the
 * caller's event loop beyond cloning the requests and results.
 *
 * - Same numbers as the in-thread path: each worker runs the same `TransformerPolicy` on the same
 *   backend, and every request draws from its own seed (requests without one get a seed drawn
 *   from the batch `rng` here, in request order), so results never depend on which worker or which
 *   other requests shared a batch.
 * - KV caches: an episode sticks to the worker that served its first turn, so its cached prefix is
 *   there next turn; new episodes go to the worker with the least work in the batch.
 * - Weights: one copy per version into a `SharedArrayBuffer` that every worker reads (no copy per
 *   worker or request); `loadWeights` resolves once every worker serves the new version.
 *
 * Why `node:worker_threads` and not piscina (the project's pool elsewhere): weights go to every
 * worker and an episode's turns to one chosen worker, and piscina picks the worker itself.
 */
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { InvalidArgumentError, TurnwiseError } from '../../core/errors.js';
import type { ActRequest, ActResult, SamplingOptions } from '../../core/policy.js';
import type { Rng } from '../../core/rng.js';
import type { NamedTensors } from '../checkpoint.js';
import type { FromWorker, InferenceSpec, ToWorker, WorkerCacheStats, WorkerError } from './protocol.js';
import type { ServingCacheStats, ServingPolicy } from './serving-policy.js';
import { shareWeights } from './shared-weights.js';
import { startWorker } from './start-worker.js';

/** Options of {@link InferencePool}. */
export interface InferencePoolOptions {
  /** Worker threads (≥ 1). */
  readonly workers: number;
  /** What each worker builds (weights and version come from the fields below). */
  readonly spec: Omit<InferenceSpec, 'weights' | 'version' | 'nice'>;
  /** Nice increment of the worker threads (default {@link INFERENCE_NICE}). */
  readonly nice?: number;
  /** The weights to serve first (HF layout) and their version. */
  readonly weights: NamedTensors;
  readonly version: number;
}

interface Waiting {
  readonly resolve: (message: FromWorker) => void;
  readonly reject: (error: Error) => void;
}

interface Slot {
  readonly worker: Worker;
  readonly waiting: Map<number, Waiting>;
  cache: WorkerCacheStats;
}

const NO_CACHE: WorkerCacheStats = { hits: 0, misses: 0, evictions: 0, released: 0, episodes: 0, bytes: 0 };

/**
 * Default nice increment of inference threads: the event loop of the main thread (routing, actors,
 * I/O) preempts them when it has work (weight 335 against 1024 when both want the same core).
 */
export const INFERENCE_NICE = 5;

/** Most episode → worker routes remembered (oldest forgotten beyond: only a cache miss follows). */
const MAX_ROUTES = 1 << 17;

function rebuild(error: WorkerError): Error {
  if (error.name === 'InvalidArgumentError' && error.property !== undefined && error.detail !== undefined) return new InvalidArgumentError(error.property, error.detail);
  const rebuilt = new TurnwiseError(error.message);
  rebuilt.name = error.name;
  return rebuilt;
}

/**
 * The default number of inference workers: one per core, less `reserved` cores kept for work that
 * runs at the same time (an asynchronous learner), at least 1.
 * @example defaultInferenceWorkers(0) // 2 on a 2-core machine
 */
export function defaultInferenceWorkers(reserved: number): number {
  return Math.max(1, availableParallelism() - reserved);
}

/**
 * A policy served by inference worker threads.
 * @example
 * const pool = new InferencePool({ workers: 2, spec: { model: model.config, policy: { endTokenId }, backend: 'wasm', matmul: 'auto' }, weights: model.namedWeights(), version: 0 });
 * const results = await pool.sampleActions(requests, { temperature: 1, topP: 1, maxNewTokens: 8 }, rng);
 * await pool.close();
 */
export class InferencePool implements ServingPolicy {
  readonly placement: string;
  private readonly slots: Slot[];
  private readonly routes = new Map<string, number>();
  private readonly ready: Promise<string>;
  private currentVersion: number;
  private nextId = 0;
  private failure: Error | null = null;
  private closed = false;

  constructor(options: InferencePoolOptions) {
    const { workers, spec, weights, version } = options;
    if (!(Number.isInteger(workers) && workers >= 1)) throw InvalidArgumentError.format('workers', `expected an integer >= 1, got ${String(workers)}`);
    this.currentVersion = version;
    this.placement = `${workers} inference worker${workers === 1 ? '' : 's'}`;
    const workerData: InferenceSpec = { ...spec, nice: options.nice ?? INFERENCE_NICE, weights: shareWeights(weights), version };
    const started: Promise<string>[] = [];
    this.slots = Array.from({ length: workers }, (_, index) => {
      const worker = startWorker(import.meta.url, './inference-worker', { workerData });
      const slot: Slot = { worker, waiting: new Map(), cache: NO_CACHE };
      started.push(
        new Promise<string>((resolve, reject) => {
          worker.on('message', (message: FromWorker) => {
            if (message.kind === 'ready') resolve(message.backend);
            else if (message.kind === 'startFailed') {
              const error = new TurnwiseError(`inference worker ${index} failed to start: ${message.error.message}`);
              reject(error);
              this.fail(error);
            } else this.answer(slot, message);
          });
          worker.on('error', (error) => {
            const failed = new TurnwiseError(`inference worker ${index} failed: ${error.message}`, { cause: error });
            reject(failed);
            this.fail(failed);
          });
          worker.on('exit', (code) => {
            if (this.closed) return;
            const failed = new TurnwiseError(`inference worker ${index} exited (code ${code})`);
            reject(failed);
            this.fail(failed);
          });
        }),
      );
      return slot;
    });
    this.ready = Promise.all(started).then((backends) => backends[0] as string);
    this.ready.catch(() => {}); // observed by every call
  }

  /** The tensor backend the workers run, e.g. `backend: wasm (SIMD, 1 thread; …), matmul: native BLAS …`. */
  backend(): Promise<string> {
    return this.ready;
  }

  get version(): number {
    return this.currentVersion;
  }

  get cacheStats(): ServingCacheStats {
    const sum = { hits: 0, misses: 0, evictions: 0, released: 0, episodes: 0, bytes: 0 };
    for (const { cache } of this.slots) for (const key of Object.keys(sum) as (keyof typeof sum)[]) sum[key] += cache[key];
    return sum;
  }

  sampleActions(requests: readonly ActRequest[], options: SamplingOptions, rng: Rng): Promise<ActResult[]> {
    // Seedless requests get theirs here, in order: the workers never share the batch stream.
    const seeded = requests.some((r) => r.seed === undefined) ? requests.map((r) => (r.seed === undefined ? { ...r, seed: rng.int(0x7fffffff) } : r)) : requests;
    return this.act(seeded, options, false);
  }

  greedyActions(requests: readonly ActRequest[], maxNewTokens: number): Promise<ActResult[]> {
    return this.act(requests, { temperature: 1, topP: 1, maxNewTokens }, true);
  }

  releaseEpisodes(episodeIds: readonly string[]): void {
    if (this.closed || this.failure !== null) return;
    const byWorker = this.slots.map((): string[] => []);
    for (const id of episodeIds) {
      const worker = this.routes.get(id);
      if (worker === undefined) continue; // never seen (or already forgotten): nothing to free
      this.routes.delete(id);
      byWorker[worker]?.push(id);
    }
    byWorker.forEach((ids, worker) => {
      if (ids.length > 0) this.post(worker, { kind: 'release', episodeIds: ids });
    });
  }

  async loadWeights(version: number, weights: NamedTensors): Promise<void> {
    if (!(Number.isInteger(version) && version >= 0)) throw InvalidArgumentError.format('version', `expected an integer >= 0, got ${String(version)}`);
    await this.usable();
    const shared = shareWeights(weights);
    await Promise.all(this.slots.map((_, worker) => this.call(worker, (id) => ({ kind: 'weights', id, version, weights: shared }))));
    this.currentVersion = version;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const error = new TurnwiseError('inference pool closed');
    for (const slot of this.slots) for (const w of slot.waiting.values()) w.reject(error);
    await Promise.all(this.slots.map((slot) => slot.worker.terminate()));
  }

  private async act(requests: readonly ActRequest[], options: SamplingOptions, greedy: boolean): Promise<ActResult[]> {
    const grammared = requests.findIndex((r) => r.grammar !== undefined);
    if (grammared >= 0) throw InvalidArgumentError.format(`requests[${grammared}].grammar`, 'a grammar is consulted while decoding and cannot reach an inference worker; decode on the main thread');
    await this.usable();
    if (requests.length === 0) return [];
    const parts = this.route(requests);
    const results: ActResult[] = new Array(requests.length);
    await Promise.all(
      parts.map(async (indices, worker) => {
        if (indices.length === 0) return;
        const sub = indices.map((i) => requests[i] as ActRequest);
        const reply = await this.call(worker, (id) => ({ kind: 'act', id, greedy, requests: sub, options }));
        if (reply.kind !== 'acted' || reply.results.length !== indices.length) throw new TurnwiseError(`inference worker ${worker} answered ${reply.kind} for an act of ${indices.length} requests`);
        indices.forEach((i, k) => {
          results[i] = reply.results[k] as ActResult;
        });
      }),
    );
    // A last turn keeps nothing in its worker: the route goes too.
    for (const r of requests) {
      if (r.lastTurn === true && r.episodeId !== undefined) this.routes.delete(r.episodeId);
    }
    return results;
  }

  /** Request indices per worker: episodes where their cache is, the rest to the least-loaded worker. */
  private route(requests: readonly ActRequest[]): number[][] {
    const parts = this.slots.map((): number[] => []);
    const load = this.slots.map(() => 0);
    const fresh: number[] = [];
    requests.forEach((r, i) => {
      const worker = r.episodeId === undefined ? undefined : this.routes.get(r.episodeId);
      if (worker === undefined) {
        fresh.push(i);
        return;
      }
      parts[worker]?.push(i);
      load[worker] = (load[worker] as number) + r.contextTokens.length;
    });
    for (const i of fresh) {
      let worker = 0;
      for (let w = 1; w < load.length; w++) if ((load[w] as number) < (load[worker] as number)) worker = w;
      const r = requests[i] as ActRequest;
      parts[worker]?.push(i);
      load[worker] = (load[worker] as number) + r.contextTokens.length;
      if (r.episodeId !== undefined && r.lastTurn !== true) this.remember(r.episodeId, worker);
    }
    // Sub-batches in request order, as the in-thread policy would see them.
    for (const part of parts) part.sort((a, b) => a - b);
    return parts;
  }

  private remember(episodeId: string, worker: number): void {
    if (this.routes.size >= MAX_ROUTES) this.routes.delete(this.routes.keys().next().value as string);
    this.routes.set(episodeId, worker);
  }

  private async usable(): Promise<void> {
    if (this.closed) throw new TurnwiseError('inference pool used after close()');
    if (this.failure !== null) throw this.failure;
    await this.ready;
  }

  private call(worker: number, message: (id: number) => ToWorker): Promise<FromWorker> {
    const slot = this.slots[worker] as Slot;
    const id = this.nextId++;
    return new Promise<FromWorker>((resolve, reject) => {
      if (this.failure !== null) {
        reject(this.failure);
        return;
      }
      slot.waiting.set(id, { resolve, reject });
      this.post(worker, message(id));
    });
  }

  private post(worker: number, message: ToWorker): void {
    (this.slots[worker] as Slot).worker.postMessage(message);
  }

  private answer(slot: Slot, message: FromWorker): void {
    if (message.kind !== 'acted' && message.kind !== 'loaded' && message.kind !== 'failed') return;
    const waiting = slot.waiting.get(message.id);
    if (waiting === undefined) return;
    slot.waiting.delete(message.id);
    if (message.kind === 'failed') {
      waiting.reject(rebuild(message.error));
      return;
    }
    slot.cache = message.cache;
    waiting.resolve(message);
  }

  /** A worker is gone: every call in flight and every later one fails with its error. */
  private fail(error: Error): void {
    if (this.closed) return;
    this.failure ??= error;
    for (const slot of this.slots) {
      for (const w of slot.waiting.values()) w.reject(this.failure);
      slot.waiting.clear();
    }
  }
}
