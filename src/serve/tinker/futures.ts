/**
 * Futures of the Tinker server: every queued call gets the next request id (consecutive integers
 * shared by all request types, as strings) and runs on its queue — one per model, so a model's
 * work runs one call at a time in request order — and `retrieve_future` waits on the result.
 */
import { TurnwiseError } from '../../core/errors.js';
import type { EngineSampleResult, ForwardOutput } from '../../engines/engine.js';
import type { RequestErrorCategory } from '../../engines/tinker/wire.js';

/** What a finished future holds: a JSON body, or a result that may also travel as protobuf. */
export type FutureResult = { readonly kind: 'json'; readonly body: unknown } | { readonly kind: 'forward'; readonly output: ForwardOutput } | { readonly kind: 'sample'; readonly result: EngineSampleResult };

/** One future. */
export interface FutureEntry {
  readonly id: string;
  state: 'pending' | 'done' | 'failed';
  result?: FutureResult;
  error?: { readonly message: string; readonly category: RequestErrorCategory };
}

/**
 * The futures and the queues that run them. Request ids start at `firstId` (by default the start
 * time in microseconds), so a restarted server never hands out an id a client still holds from
 * before: such an id is {@link FutureStore.isGone} (the server answers 410, and the SDK re-sends
 * the original request), as is the id of a finished future forgotten to bound memory.
 * @example
 * const id = futures.submit('model_1', async () => ({ kind: 'json', body: { ok: true } }));
 * const entry = await futures.wait(id, 30_000, signal);
 */
export class FutureStore {
  private nextId: number;
  private readonly entries = new Map<string, FutureEntry>();
  private readonly waiters = new Map<string, Set<() => void>>();
  private readonly queues = new Map<string, Promise<void>>();
  /** Finished futures that may be forgotten, oldest first (pinned ones never are). */
  private readonly evictable: string[] = [];

  /**
   * @param firstId the first request id (default: now in microseconds)
   * @param keepFinished how many finished, unpinned futures are kept before the oldest are
   *   forgotten (their ids then answer 410, as a gone future does); default 50,000
   */
  constructor(
    firstId: number = Date.now() * 1000,
    private readonly keepFinished = 50_000,
  ) {
    this.nextId = firstId;
  }

  /**
   * True when `id` was handed out (by this run, and since forgotten, or by an earlier run of the
   * server: a start-time id at or past 1e15 µs, the year 2001) but is no longer here.
   */
  isGone(id: string): boolean {
    if (!/^\d{16}$/.test(id) || this.entries.has(id)) return false;
    return Number(id) < this.nextId;
  }

  /**
   * Runs `work` on `queue` after everything queued there before; returns the new request id. A
   * `pinned` future is never forgotten (training calls, whose seq_id retries must find it).
   */
  submit(queue: string, work: () => Promise<FutureResult>, pinned = false): string {
    const id = String(this.nextId++);
    const entry: FutureEntry = { id, state: 'pending' };
    this.entries.set(id, entry);
    const previous = this.queues.get(queue) ?? Promise.resolve();
    const run = previous.then(async () => {
      try {
        entry.result = await work();
        entry.state = 'done';
      } catch (err) {
        entry.error = { message: (err as Error).message, category: err instanceof TurnwiseError ? 'user' : 'server' };
        entry.state = 'failed';
      }
      this.wake(id);
      if (!pinned) this.forgetBeyond(id);
    });
    this.queues.set(queue, run);
    return id;
  }

  /** Records `id` as finished and forgets the oldest unpinned finished futures past the bound. */
  private forgetBeyond(id: string): void {
    this.evictable.push(id);
    while (this.evictable.length > this.keepFinished) this.entries.delete(this.evictable.shift() as string);
  }

  /** The future, or undefined for an unknown id. */
  get(id: string): FutureEntry | undefined {
    return this.entries.get(id);
  }

  /** Waits until the future finishes, `timeoutMs` passes or `signal` aborts; returns it as it then is. */
  async wait(id: string, timeoutMs: number, signal?: AbortSignal): Promise<FutureEntry | undefined> {
    const entry = this.entries.get(id);
    if (entry === undefined || entry.state !== 'pending') return entry;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        this.waiters.get(id)?.delete(done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      signal?.addEventListener('abort', done, { once: true });
      const set = this.waiters.get(id) ?? new Set<() => void>();
      this.waiters.set(id, set);
      set.add(done);
    });
    return entry;
  }

  /** Resolves once every queue has run what was submitted so far (for shutdown). */
  async drain(): Promise<void> {
    await Promise.all(this.queues.values());
  }

  private wake(id: string): void {
    const set = this.waiters.get(id);
    this.waiters.delete(id);
    for (const done of set ?? []) done();
  }
}
