/**
 * The NATS Bus: the same {@link Bus} contract as `MemoryBus`, over a real NATS server, so the
 * same actors run across processes and machines. Payloads are msgpackr (`src/bus/codec.ts`).
 *
 * Requests use NATS request/reply (queue groups share the load among responders). A reply is an
 * envelope, `{ ok: true, value }` or `{ ok: false, name, message }`, so that an error thrown by a
 * responder reaches the requester as a `RemoteError` instead of a timeout.
 *
 * Bad input never crashes an actor: a message that does not decode, is larger than the bus allows
 * or makes its handler throw is logged with its subject (and answered with an error when it was a
 * request). An outgoing message larger than the server's `max_payload` is refused at the sender
 * with an `InvalidMessageError` naming the subject (weights go through the object store).
 */
import { errors, type Msg, type NatsConnection, type Subscription as NatsSubscription } from '@nats-io/transport-node';
import { InvalidArgumentError, InvalidMessageError, NoResponderError, RequestTimeoutError } from '../core/errors.js';
import type { Bus, MessageContext, MessageHandler, RequestOptions, SubscribeOptions, Subscription } from './bus.js';
import { decode, encode } from './codec.js';
import { BusClosedError, RemoteError } from './memory-bus.js';
import { assertPublishSubject, assertSubscribePattern } from './subjects.js';
import { connectNats, type NatsConnectOptions } from './nats-connect.js';

/** Where the bus reports what it refused or what failed without a requester to tell. */
export type BusLogger = (line: string, error?: unknown) => void;

export interface NatsBusOptions {
  /** Default: `console.error` with a `[turnwise nats]` prefix. */
  readonly log?: BusLogger;
  /** Refuse incoming messages larger than this many bytes (default: the server's max_payload). */
  readonly maxMessageBytes?: number;
  /** Close the NATS connection when the bus closes (default true). */
  readonly ownsConnection?: boolean;
}

type Envelope = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly name: string; readonly message: string };

const defaultLog: BusLogger = (line, error) => {
  if (error === undefined) console.error(`[turnwise nats] ${line}`);
  else console.error(`[turnwise nats] ${line}`, error instanceof Error ? `${error.name}: ${error.message}` : error);
};

/**
 * {@link Bus} over NATS.
 * @example
 * const bus = await NatsBus.connect({ servers: 'nats://127.0.0.1:4222' });
 * bus.subscribe('math.double', (n) => (n as number) * 2, { queue: 'math' });
 * await bus.request('math.double', 21, { timeoutMs: 1000 }); // 42
 * await bus.close();
 */
export class NatsBus implements Bus {
  private readonly log: BusLogger;
  private readonly maxMessageBytes: number;
  private readonly ownsConnection: boolean;
  private readonly subs = new Set<NatsSubscription>();
  private pending = 0;
  private idleWaiters: (() => void)[] = [];
  private closing: Promise<void> | null = null;
  private closed = false;

  constructor(
    /** The underlying connection (JetStream, KV and the object store are opened on it). */
    readonly connection: NatsConnection,
    options: NatsBusOptions = {},
  ) {
    this.log = options.log ?? defaultLog;
    this.maxMessageBytes = options.maxMessageBytes ?? connection.info?.max_payload ?? 1024 * 1024;
    this.ownsConnection = options.ownsConnection ?? true;
  }

  /**
   * Connects and wraps the connection.
   * @example const bus = await NatsBus.connect({ servers: url, token });
   */
  static async connect(options: NatsConnectOptions, busOptions: NatsBusOptions = {}): Promise<NatsBus> {
    return new NatsBus(await connectNats(options), busOptions);
  }

  /** Largest message the server accepts, bytes. */
  get maxPayload(): number {
    return this.connection.info?.max_payload ?? 1024 * 1024;
  }

  publish(subject: string, payload: unknown): void {
    this.assertOpen('publish', subject);
    assertPublishSubject(subject);
    this.connection.publish(subject, this.encodeChecked(payload, subject));
  }

  subscribe(subject: string, handler: MessageHandler, options: SubscribeOptions = {}): Subscription {
    this.assertOpen('subscribe', subject);
    assertSubscribePattern(subject);
    if (typeof handler !== 'function') throw InvalidArgumentError.format('handler', `expected a function, got ${typeof handler}`);
    const queue = options.queue;
    if (queue !== undefined && (typeof queue !== 'string' || queue.length === 0 || /\s/.test(queue))) {
      throw InvalidArgumentError.format('queue', `expected a non-empty queue name without whitespace, got ${JSON.stringify(queue)}`);
    }
    const sub = this.connection.subscribe(subject, {
      ...(queue !== undefined ? { queue } : {}),
      callback: (error, msg) => {
        if (error !== null) {
          this.log(`subscription '${subject}' failed`, error);
          return;
        }
        this.handle(msg, handler);
      },
    });
    this.subs.add(sub);
    return {
      subject,
      unsubscribe: () => {
        if (!this.subs.delete(sub)) return;
        sub.unsubscribe();
      },
    };
  }

  async request(subject: string, payload: unknown, options: RequestOptions): Promise<unknown> {
    this.assertOpen('request', subject);
    assertPublishSubject(subject);
    const timeoutMs = options?.timeoutMs;
    if (typeof timeoutMs !== 'number' || !(timeoutMs > 0) || !Number.isFinite(timeoutMs)) {
      throw InvalidArgumentError.format('timeoutMs', `expected a positive finite number of milliseconds, got ${String(timeoutMs)}`);
    }
    const bytes = this.encodeChecked(payload, subject);
    let reply: Msg;
    try {
      reply = await this.connection.request(subject, bytes, { timeout: Math.ceil(timeoutMs) });
    } catch (error) {
      throw translateRequestError(error, subject, timeoutMs);
    }
    const envelope = decode(reply.data, `${subject} (reply)`);
    if (!isEnvelope(envelope)) throw new InvalidMessageError(`${subject} (reply)`, 'expected a reply envelope { ok, value } or { ok: false, name, message }');
    if (envelope.ok) return envelope.value;
    throw new RemoteError(subject, envelope.name, envelope.message);
  }

  async drain(): Promise<void> {
    // A flush is a PING/PONG round trip: everything we published has reached the server, and what
    // it routed back to us on this connection has been handed to our callbacks, before the PONG.
    for (;;) {
      if (!this.closed && !this.connection.isClosed()) await this.connection.flush().catch(() => undefined);
      // The client may hand messages that arrived before the PONG to their callbacks a little
      // later than it resolves the flush; one macrotask turn lets those callbacks run (and count).
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (this.pending === 0) {
        // Confirm with a second round trip: a message published by the last handler may still
        // be on its way back from the server.
        if (!this.closed && !this.connection.isClosed()) await this.connection.flush().catch(() => undefined);
        await new Promise<void>((resolve) => setTimeout(resolve, 1));
        if (this.pending === 0) return;
        continue;
      }
      await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    }
  }

  close(): Promise<void> {
    if (this.closing === null) {
      this.closing = (async () => {
        await this.drain();
        this.closed = true;
        for (const sub of this.subs) sub.unsubscribe();
        this.subs.clear();
        if (this.ownsConnection && !this.connection.isClosed()) await this.connection.drain().catch(() => this.connection.close());
      })();
    }
    return this.closing;
  }

  private assertOpen(operation: string, subject: string): void {
    if (this.closed || this.closing !== null) throw new BusClosedError(operation, subject);
  }

  private encodeChecked(payload: unknown, subject: string): Uint8Array {
    const bytes = encode(payload, subject);
    const limit = this.maxPayload;
    if (bytes.byteLength > limit) {
      throw new InvalidMessageError(subject, `message of ${bytes.byteLength} bytes exceeds the server's max_payload of ${limit} bytes (large blobs such as weights go through the object store)`);
    }
    return bytes;
  }

  private handle(msg: Msg, handler: MessageHandler): void {
    const subject = msg.subject;
    const isRequest = typeof msg.reply === 'string' && msg.reply.length > 0;
    const context: MessageContext = { subject, isRequest };
    this.pending++;
    // Run the handler outside the client's parser loop (and never inside `publish`).
    queueMicrotask(() => {
      let result: unknown;
      try {
        if (msg.data.byteLength > this.maxMessageBytes) {
          throw new InvalidMessageError(subject, `message of ${msg.data.byteLength} bytes exceeds this bus's limit of ${this.maxMessageBytes} bytes`);
        }
        result = handler(decode(msg.data, subject), context);
      } catch (error) {
        this.fail(msg, context, error);
        this.finishOne();
        return;
      }
      Promise.resolve(result).then(
        (value) => {
          if (isRequest) this.respond(msg, { ok: true, value });
          this.finishOne();
        },
        (error: unknown) => {
          this.fail(msg, context, error);
          this.finishOne();
        },
      );
    });
  }

  private fail(msg: Msg, context: MessageContext, error: unknown): void {
    const name = error instanceof Error ? error.name : 'Error';
    const message = error instanceof Error ? error.message : String(error);
    if (context.isRequest) {
      // The requester learns why; a refused message is also worth a line in this process's log.
      if (error instanceof InvalidMessageError) this.log(`rejected request on '${context.subject}'`, error);
      this.respond(msg, { ok: false, name, message });
    } else {
      this.log(`handler for '${context.subject}' failed`, error);
    }
  }

  private respond(msg: Msg, envelope: Envelope): void {
    if (this.connection.isClosed()) return;
    let bytes: Uint8Array;
    try {
      bytes = this.encodeChecked(envelope, `${msg.subject} (reply)`);
    } catch (error) {
      this.log(`cannot send the reply on '${msg.subject}'`, error);
      const name = error instanceof Error ? error.name : 'Error';
      bytes = encode({ ok: false, name, message: error instanceof Error ? error.message : String(error) });
    }
    try {
      msg.respond(bytes);
    } catch (error) {
      this.log(`cannot send the reply on '${msg.subject}'`, error);
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

function isEnvelope(value: unknown): value is Envelope {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return v.ok === true || (v.ok === false && typeof v.name === 'string' && typeof v.message === 'string');
}

function translateRequestError(error: unknown, subject: string, timeoutMs: number): Error {
  if (error instanceof errors.RequestError && error.isNoResponders()) return new NoResponderError(subject);
  if (error instanceof errors.NoRespondersError) return new NoResponderError(subject);
  if (error instanceof errors.TimeoutError || (error instanceof Error && error.cause instanceof errors.TimeoutError)) return new RequestTimeoutError(subject, timeoutMs);
  if (error instanceof errors.ClosedConnectionError) return new BusClosedError('request', subject);
  return error instanceof Error ? error : new Error(String(error));
}
