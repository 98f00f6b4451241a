/**
 * Back-pressure for a worker: at most `maxInFlight` requests are handled at once; the rest wait
 * in arrival order (never dropped) until a slot frees. Wraps any {@link Bus}, so the sampler
 * adapter (`serveSampler`) is used unchanged; only request handlers are limited — publishes
 * (weights, episode releases) pass straight through so that control is never stuck behind work.
 */
import { InvalidArgumentError } from '../core/errors.js';
import type { Bus, MessageHandler, RequestOptions, SubscribeOptions, Subscription } from './bus.js';

/** A bus whose request handlers share a bounded number of slots. */
export interface LimitedBus extends Bus {
  /** Requests being handled now (at most `maxInFlight`). */
  readonly inFlight: () => number;
  /** Requests waiting for a slot. */
  readonly waiting: () => number;
}

/**
 * Limits concurrent request handling on `bus` to `maxInFlight`.
 * @example serveSampler(limitInFlight(bus, 256), runId, sampler);
 */
export function limitInFlight(bus: Bus, maxInFlight: number): LimitedBus {
  if (!Number.isInteger(maxInFlight) || maxInFlight < 1) throw InvalidArgumentError.format('maxInFlight', `expected an integer >= 1, got ${maxInFlight}`);
  let active = 0;
  const queue: (() => void)[] = [];
  const acquire = (): Promise<void> | undefined => {
    if (active < maxInFlight) {
      active++;
      return undefined;
    }
    return new Promise<void>((resolve) => queue.push(resolve));
  };
  const releaseSlot = () => {
    const next = queue.shift();
    // Hand the slot straight to the oldest waiter (active stays the same), else free it.
    if (next) next();
    else active--;
  };
  const limited = (handler: MessageHandler): MessageHandler => (payload, context) => {
    if (!context.isRequest) return handler(payload, context);
    const run = async () => {
      try {
        return await handler(payload, context);
      } finally {
        releaseSlot();
      }
    };
    const wait = acquire();
    return wait === undefined ? run() : wait.then(run);
  };
  return {
    inFlight: () => active,
    waiting: () => queue.length,
    publish: (subject: string, payload: unknown) => bus.publish(subject, payload),
    subscribe: (subject: string, handler: MessageHandler, options?: SubscribeOptions): Subscription => bus.subscribe(subject, limited(handler), options),
    request: (subject: string, payload: unknown, options: RequestOptions) => bus.request(subject, payload, options),
    drain: () => bus.drain(),
    close: () => bus.close(),
  };
}
