/**
 * The in-process Bus: no server, same semantics as the NATS one (subjects with `*`/`>` wildcards,
 * queue groups, request/reply with timeouts), so actors cannot tell them apart.
 *
 * Delivery is asynchronous (each handler runs in its own microtask, never inside `publish`), and
 * a request is delivered exactly like a publish (every plain subscriber, one member per queue group)
 * with the first reply winning, as in NATS. Give responders a subject of their own: a wildcard
 * listener would otherwise also answer.
 */
import type { Clock } from '../core/clock.js';
import { systemClock } from '../core/clock.js';
import { InvalidArgumentError, NoResponderError, RequestTimeoutError, TurnwiseError } from '../core/errors.js';
import type { Bus, MessageContext, MessageHandler, RequestOptions, SubscribeOptions, Subscription } from './bus.js';
import { decode, encode, roundTrip } from './codec.js';
import { assertPublishSubject, compileSubjectPattern, type SubjectMatcher } from './subjects.js';

/**
 * A request handler threw; carries the remote error's name and message (its stack and class stay
 * on the responder's side, since they cannot cross a process boundary). Shared by every Bus.
 * @example
 * try { await bus.request('env.step', msg, { timeoutMs: 1000 }); }
 * catch (e) { if (e instanceof RemoteError) console.log(e.remoteName, e.remoteMessage); }
 */
export class RemoteError extends TurnwiseError {
  constructor(
    readonly subject: string,
    readonly remoteName: string,
    readonly remoteMessage: string,
  ) {
    super(`handler for '${subject}' failed: ${remoteName}: ${remoteMessage}`);
  }

  /** Wraps whatever a handler threw. */
  static from(subject: string, error: unknown): RemoteError {
    if (error instanceof Error) return new RemoteError(subject, error.name, error.message);
    return new RemoteError(subject, 'Error', String(error));
  }
}

/**
 * `publish`, `subscribe` or `request` on a closed bus. Shared by every Bus.
 * @example expect(() => bus.publish('a', 1)).toThrow(BusClosedError)
 */
export class BusClosedError extends TurnwiseError {
  constructor(
    readonly operation: string,
    readonly subject: string,
  ) {
    super(`cannot ${operation} on '${subject}': the bus is closed`);
  }
}

export interface MemoryBusOptions {
  /** Timer source for request timeouts (default: wall clock). */
  readonly clock?: Clock;
  /** Pass every payload and reply through the msgpackr codec, as a process boundary would (default false: faster). */
  readonly encode?: boolean;
  /** Called when a handler of a published (not requested) message throws. Default: `console.error`. */
  readonly onHandlerError?: (error: unknown, context: MessageContext) => void;
}

interface Entry {
  readonly id: number;
  readonly pattern: string;
  readonly match: SubjectMatcher;
  readonly handler: MessageHandler;
  /** Pattern + queue name: NATS groups queue subscribers per subscription subject and queue name. */
  readonly groupKey: string | null;
  active: boolean;
}

type Settle = (ok: boolean, value: unknown) => void;

const ROUTE_CACHE_LIMIT = 4096;

function defaultOnHandlerError(error: unknown, context: MessageContext): void {
  console.error(`[turnwise] handler for '${context.subject}' threw:`, error);
}

/**
 * In-process {@link Bus}.
 * @example
 * const bus = new MemoryBus({ encode: true });
 * bus.subscribe('math.double', (n) => (n as number) * 2);
 * await bus.request('math.double', 21, { timeoutMs: 1000 }); // 42
 * await bus.close();
 */
export class MemoryBus implements Bus {
  private readonly clock: Clock;
  private readonly encodes: boolean;
  private readonly onHandlerError: (error: unknown, context: MessageContext) => void;
  /** Live subscriptions in subscription order (a Map: O(1) unsubscribe with thousands of sessions). */
  private entries = new Map<number, Entry>();
  /**
   * Wildcard-free patterns indexed by subject, so a route lookup scans only the wildcard entries:
   * with one subject per env session, a linear scan made every cache miss O(subscriptions), and
   * 10,000 sessions (30,000 subjects) overflow the route cache, so every request missed.
   */
  private readonly exact = new Map<string, Entry[]>();
  private wild: Entry[] = [];
  private nextId = 1;
  /** Concrete subject -> matching plain entries and queue groups; cleared on (un)subscribe. */
  private readonly routes = new Map<string, { plain: Entry[]; groups: Entry[][] }>();
  private readonly roundRobin = new Map<string, number>();
  private pending = 0;
  private idleWaiters: (() => void)[] = [];
  private closing: Promise<void> | null = null;
  private closed = false;

  constructor(options: MemoryBusOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.encodes = options.encode ?? false;
    this.onHandlerError = options.onHandlerError ?? defaultOnHandlerError;
  }

  publish(subject: string, payload: unknown): void {
    this.assertOpen('publish', subject);
    assertPublishSubject(subject);
    const bytes = this.encodes ? encode(payload, subject) : null;
    const context: MessageContext = { subject, isRequest: false };
    for (const entry of this.targets(subject)) {
      this.deliver(entry, bytes, payload, context, null);
    }
  }

  subscribe(subject: string, handler: MessageHandler, options: SubscribeOptions = {}): Subscription {
    this.assertOpen('subscribe', subject);
    if (typeof handler !== 'function') throw InvalidArgumentError.format('handler', `expected a function, got ${typeof handler}`);
    const match = compileSubjectPattern(subject);
    const queue = options.queue;
    if (queue !== undefined && (typeof queue !== 'string' || queue.length === 0 || /\s/.test(queue))) {
      throw InvalidArgumentError.format('queue', `expected a non-empty queue name without whitespace, got ${JSON.stringify(queue)}`);
    }
    const entry: Entry = {
      id: this.nextId++,
      pattern: subject,
      match,
      handler,
      groupKey: queue === undefined ? null : `${subject}\u0000${queue}`,
      active: true,
    };
    this.entries.set(entry.id, entry);
    if (subject.includes('*') || subject.includes('>')) this.wild.push(entry);
    else {
      const list = this.exact.get(subject);
      if (list === undefined) this.exact.set(subject, [entry]);
      else list.push(entry);
    }
    this.routes.clear();
    return {
      subject,
      unsubscribe: () => {
        if (!entry.active) return;
        entry.active = false;
        this.entries.delete(entry.id);
        const list = this.exact.get(entry.pattern);
        if (list !== undefined) {
          const rest = list.filter((e) => e !== entry);
          if (rest.length === 0) this.exact.delete(entry.pattern);
          else this.exact.set(entry.pattern, rest);
        } else this.wild = this.wild.filter((e) => e !== entry);
        this.routes.clear();
      },
    };
  }

  request(subject: string, payload: unknown, options: RequestOptions): Promise<unknown> {
    try {
      this.assertOpen('request', subject);
      assertPublishSubject(subject);
      const timeoutMs = options?.timeoutMs;
      if (typeof timeoutMs !== 'number' || !(timeoutMs > 0) || !Number.isFinite(timeoutMs)) {
        throw InvalidArgumentError.format('timeoutMs', `expected a positive finite number of milliseconds, got ${String(timeoutMs)}`);
      }
      const bytes = this.encodes ? encode(payload, subject) : null;
      const targets = this.targets(subject);
      if (targets.length === 0) throw new NoResponderError(subject);
      return new Promise((resolve, reject) => {
        let done = false;
        const timer = this.clock.setTimeout(() => {
          if (done) return;
          done = true;
          reject(new RequestTimeoutError(subject, timeoutMs));
        }, timeoutMs);
        const settle: Settle = (ok, value) => {
          if (done) return;
          done = true;
          this.clock.clearTimeout(timer);
          if (ok) resolve(value);
          else reject(value);
        };
        const context: MessageContext = { subject, isRequest: true };
        for (const entry of targets) this.deliver(entry, bytes, payload, context, settle);
      });
    } catch (error) {
      return Promise.reject(error);
    }
  }

  drain(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  close(): Promise<void> {
    if (this.closing === null) {
      this.closing = this.drain().then(() => {
        this.closed = true;
        for (const entry of this.entries.values()) entry.active = false;
        this.entries.clear();
        this.exact.clear();
        this.wild = [];
        this.routes.clear();
      });
    }
    return this.closing;
  }

  /** Number of live subscriptions (for tests and diagnostics). */
  get subscriptionCount(): number {
    return this.entries.size;
  }

  private assertOpen(operation: string, subject: string): void {
    if (this.closed) throw new BusClosedError(operation, subject);
  }

  /** Every plain subscriber plus the next member of each queue group, in subscription order. */
  private targets(subject: string): Entry[] {
    let route = this.routes.get(subject);
    if (route === undefined) {
      const plain: Entry[] = [];
      const groups = new Map<string, Entry[]>();
      const exact = this.exact.get(subject) ?? [];
      const wild = this.wild.filter((entry) => entry.match(subject));
      // Subscription order, as a single list scan would give.
      const matching = wild.length === 0 ? exact : exact.length === 0 ? wild : [...exact, ...wild].sort((a, b) => a.id - b.id);
      for (const entry of matching) {
        if (entry.groupKey === null) plain.push(entry);
        else {
          const members = groups.get(entry.groupKey);
          if (members === undefined) groups.set(entry.groupKey, [entry]);
          else members.push(entry);
        }
      }
      route = { plain, groups: [...groups.values()] };
      if (this.routes.size >= ROUTE_CACHE_LIMIT) this.routes.clear();
      this.routes.set(subject, route);
    }
    if (route.groups.length === 0) return route.plain;
    const chosen = route.plain.slice();
    for (const members of route.groups) {
      const key = members[0].groupKey as string;
      const turn = this.roundRobin.get(key) ?? 0;
      this.roundRobin.set(key, turn + 1);
      chosen.push(members[turn % members.length]);
    }
    return chosen;
  }

  private deliver(entry: Entry, bytes: Uint8Array | null, payload: unknown, context: MessageContext, settle: Settle | null): void {
    this.pending++;
    queueMicrotask(() => {
      if (!entry.active) {
        this.finishOne();
        return;
      }
      let result: unknown;
      try {
        const message = bytes === null ? payload : decode(bytes, context.subject);
        result = entry.handler(message, context);
      } catch (error) {
        this.fail(error, context, settle);
        this.finishOne();
        return;
      }
      Promise.resolve(result).then(
        (reply) => {
          if (settle !== null) {
            try {
              settle(true, this.encodes ? roundTrip(reply, `${context.subject} (reply)`) : reply);
            } catch (error) {
              settle(false, error);
            }
          }
          this.finishOne();
        },
        (error: unknown) => {
          this.fail(error, context, settle);
          this.finishOne();
        },
      );
    });
  }

  private fail(error: unknown, context: MessageContext, settle: Settle | null): void {
    if (settle !== null) settle(false, RemoteError.from(context.subject, error));
    else {
      try {
        this.onHandlerError(error, context);
      } catch (hookError) {
        defaultOnHandlerError(hookError, context);
      }
    }
  }

  private finishOne(): void {
    this.pending--;
    if (this.pending === 0 && this.idleWaiters.length > 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const wake of waiters) wake();
    }
  }
}
