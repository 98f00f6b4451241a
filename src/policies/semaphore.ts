/**
 * A counting semaphore: at most `limit` holders at once, waiters served first come, first served.
 * Hand-written (25 lines) because the usual package (p-limit) is not a dependency and this is all
 * the remote policy needs.
 */
import { InvalidArgumentError } from '../core/errors.js';

/**
 * @example
 * const gate = new Semaphore(4);
 * const reply = await gate.run(() => client.chat.completions.create(body));
 */
export class Semaphore {
  private active = 0;
  private readonly waiters: (() => void)[] = [];

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw InvalidArgumentError.format('concurrency', `expected an integer >= 1, got ${limit}`);
  }

  /** Holders right now (for tests and progress). */
  get inUse(): number {
    return this.active;
  }

  /** Runs `work` once a slot is free, and frees the slot when it settles. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiters.push(resolve));
    else this.active++;
    try {
      return await work();
    } finally {
      const next = this.waiters.shift();
      // The slot passes straight to the next waiter, so `active` stays the same.
      if (next) next();
      else this.active--;
    }
  }
}
