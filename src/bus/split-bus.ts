/**
 * A {@link Bus} that sends some subjects to one bus and the rest to another. An episodes worker
 * keeps its env sessions on an in-process bus (they are private to the worker, so their subjects
 * must not collide with another worker's) while its act requests travel over NATS to the samplers.
 *
 * Requests to the remote side are retried while nobody answers (`NoResponderError`): a sampler may
 * be swapping weights or the server restarting; the episode waits instead of failing.
 */
import type { Clock } from '../core/clock.js';
import { systemClock } from '../core/clock.js';
import { NoResponderError } from '../core/errors.js';
import type { Bus, MessageHandler, RequestOptions, SubscribeOptions, Subscription } from './bus.js';

export interface SplitBusOptions {
  /** True for subjects that stay on `local`. */
  readonly isLocal: (subject: string) => boolean;
  /** Retry a remote request that found no responder for up to this long, ms (default: its own timeout). */
  readonly noResponderRetryMs?: number;
  readonly clock?: Clock;
}

/**
 * @example const bus = new SplitBus(new MemoryBus(), natsBus, { isLocal: (s) => s.includes('.env.') });
 */
export class SplitBus implements Bus {
  private readonly clock: Clock;

  constructor(
    private readonly local: Bus,
    private readonly remote: Bus,
    private readonly options: SplitBusOptions,
  ) {
    this.clock = options.clock ?? systemClock;
  }

  private pick(subject: string): Bus {
    return this.options.isLocal(subject) ? this.local : this.remote;
  }

  publish(subject: string, payload: unknown): void {
    this.pick(subject).publish(subject, payload);
  }

  subscribe(subject: string, handler: MessageHandler, options?: SubscribeOptions): Subscription {
    return this.pick(subject).subscribe(subject, handler, options);
  }

  async request(subject: string, payload: unknown, options: RequestOptions): Promise<unknown> {
    const bus = this.pick(subject);
    if (bus === this.local) return bus.request(subject, payload, options);
    const deadline = this.clock.now() + (this.options.noResponderRetryMs ?? options.timeoutMs);
    let wait = 20;
    for (;;) {
      try {
        return await bus.request(subject, payload, options);
      } catch (error) {
        if (!(error instanceof NoResponderError) || this.clock.now() + wait > deadline) throw error;
      }
      await new Promise<void>((resolve) => this.clock.setTimeout(resolve, wait));
      wait = Math.min(wait * 2, 500);
    }
  }

  /** Drains the local bus only: the remote one is shared and closed by its owner. */
  drain(): Promise<void> {
    return this.local.drain();
  }

  close(): Promise<void> {
    return this.local.close();
  }
}
