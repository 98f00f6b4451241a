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
 * before: such an id is {@link FutureStore.isFromEarlier} (the server answers 410, and the SDK
 * re-sends the original request).
 * @example
 * const id = futures.submit('model_1', async () => ({ kind: 'json', body: { ok: true } }));
 * const entry = await futures.wait(id, 30_000, signal);
 */
export class FutureStore {
  private nextId: number;
  constructor(private readonly firstId: number = Date.now() * 1000) {
    this.nextId = firstId;
  }

  /**
   * True when `id` is a request id this store never handed out but an earlier run of the server
   * could have: a start-time id (at or past 1e15 µs, the year 2001) before this run's first.
   */
  isFromEarlier(id: string): boolean {
    return /^\d{16}$/.test(id) && Number(id) < this.firstId;
  }

  private readonly entries = new Map<string, FutureEntry>();
  private readonly waiters = new Map<string, Set<() => void>>();
  private readonly queues = new Map<string, Promise<void>>();

  /** Runs `work` on `queue` after everything queued there before; returns the new request id. */
  submit(queue: string, work: () => Promise<FutureResult>): string {
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
    });
    this.queues.set(queue, run);
    return id;
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
