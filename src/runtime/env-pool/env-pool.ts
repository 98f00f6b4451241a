/**
 * Where environment instances live: in this thread (the default, for light environments), or in
 * piscina worker threads ({@link WorkerEnvPool}, `env.workers > 0`). Either way each env-session
 * actor gets an {@link EnvHandle} with the same three calls, so nothing above it changes.
 */
import type { Observation, StepResult } from '../../core/types.js';
import type { EnvironmentSpec } from '../../envs/environment.js';

/** One environment instance, wherever it runs. */
export interface EnvHandle {
  reset(taskIndex: number): Promise<Observation>;
  step(actionText: string): Promise<StepResult>;
  /** Releases the instance. Idempotent. */
  close(): Promise<void>;
}

/** A source of environment instances. */
export interface EnvPool {
  /** `in-process`, or `workers` with the number of threads. */
  readonly description: string;
  /** A new environment instance. */
  open(): EnvHandle;
  /** Releases every instance and thread; the process can exit afterwards. */
  close(): Promise<void>;
}

/**
 * Environment instances in this thread. Calls are queued and run together in the next
 * `setImmediate`, in arrival order: the steps of thousands of episodes run back to back (warm
 * caches, no promise per step on the hot path), and the event loop gets a turn between waves, so
 * timers — deadlines, progress, the lag monitor — still fire (a chain of resolved promises alone
 * would starve them for the whole run).
 * @example const pool = new InProcessEnvPool(spec, settings); const env = pool.open(); await env.reset(1);
 */
export class InProcessEnvPool implements EnvPool {
  readonly description = 'in-process';
  private readonly open_ = new Set<EnvHandle>();
  private queue: (() => void)[] = [];
  private scheduled = false;

  constructor(
    private readonly spec: EnvironmentSpec,
    private readonly settings: Readonly<Record<string, unknown>>,
  ) {}

  private enqueue<T>(work: () => T | Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push(() => {
        try {
          const value = work();
          if (value instanceof Promise) value.then(resolve, reject);
          else resolve(value);
        } catch (error) {
          reject(error);
        }
      });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.flush);
      }
    });
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    const batch = this.queue;
    this.queue = [];
    for (const run of batch) run();
  };

  open(): EnvHandle {
    const env = this.spec.create({ settings: this.settings });
    let closed = false;
    const handle: EnvHandle = {
      reset: (taskIndex) => this.enqueue(() => env.reset(taskIndex)),
      step: (actionText) => this.enqueue(() => env.step(actionText)),
      close: async () => {
        if (closed) return;
        closed = true;
        this.open_.delete(handle);
        await env.close();
      },
    };
    this.open_.add(handle);
    return handle;
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.open_].map((h) => h.close()));
  }
}
