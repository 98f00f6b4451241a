/**
 * Time as a parameter (xstate's Clock idea): actors take a `Clock` through their input so tests
 * can use {@link SimulatedClock} and never sleep.
 */

/** The operations actors need from time. */
export interface Clock {
  /** Milliseconds since an arbitrary origin. */
  now(): number;
  setTimeout(callback: () => void, delayMs: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Wall-clock time. */
export const systemClock: Clock = {
  now: () => performance.now(),
  setTimeout: (callback, delayMs) => setTimeout(callback, delayMs),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * A clock that only moves when told to; timers fire in order inside {@link SimulatedClock.advance}.
 * @example
 * const clock = new SimulatedClock();
 * clock.setTimeout(() => console.log('fired'), 100);
 * clock.advance(100); // prints "fired"
 */
export class SimulatedClock implements Clock {
  private time = 0;
  private nextId = 1;
  private readonly timers = new Map<number, { at: number; callback: () => void }>();

  now(): number {
    return this.time;
  }

  setTimeout(callback: () => void, delayMs: number): unknown {
    const id = this.nextId++;
    this.timers.set(id, { at: this.time + Math.max(0, delayMs), callback });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  /** Moves time forward, firing due timers in time order. */
  advance(deltaMs: number): void {
    const target = this.time + deltaMs;
    for (;;) {
      let dueId = -1;
      let dueAt = Number.POSITIVE_INFINITY;
      for (const [id, timer] of this.timers) {
        if (timer.at <= target && timer.at < dueAt) {
          dueAt = timer.at;
          dueId = id;
        }
      }
      if (dueId < 0) break;
      const timer = this.timers.get(dueId);
      this.timers.delete(dueId);
      this.time = dueAt;
      timer?.callback();
    }
    this.time = target;
  }
}
