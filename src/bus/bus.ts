/**
 * The Bus: how actors talk. Kept as small as Hono's Router — publish, subscribe, request, drain,
 * close — so that the in-process implementation and the NATS one are interchangeable.
 *
 * Subjects are dot-separated tokens with NATS wildcards (`*` one token, `>` the rest).
 * Payloads are plain data (see `src/bus/codec.ts`); implementations may encode them.
 */

/** Metadata passed to a subscriber with each message. */
export interface MessageContext {
  /** Concrete subject the message was published on. */
  readonly subject: string;
  /** True when the sender awaits a reply (the handler's return value is the reply). */
  readonly isRequest: boolean;
}

/**
 * A subscriber. For requests, the resolved return value is sent back as the reply; a thrown error
 * is sent back as an error and rejects the requester's promise with a `RemoteError`.
 */
export type MessageHandler = (payload: unknown, context: MessageContext) => unknown;

export interface SubscribeOptions {
  /** Queue group: each message goes to one member of the group (load sharing), as in NATS. */
  readonly queue?: string;
}

export interface RequestOptions {
  /** Reject with `RequestTimeoutError` after this many milliseconds. */
  readonly timeoutMs: number;
}

export interface Subscription {
  readonly subject: string;
  unsubscribe(): void;
}

export interface Bus {
  /** Fire-and-forget delivery to every matching subscriber (one per queue group). */
  publish(subject: string, payload: unknown): void;
  subscribe(subject: string, handler: MessageHandler, options?: SubscribeOptions): Subscription;
  /** Sends to one responder and resolves with its reply. Rejects with `NoResponderError` or `RequestTimeoutError`. */
  request(subject: string, payload: unknown, options: RequestOptions): Promise<unknown>;
  /** Waits until every handler invoked so far has settled. */
  drain(): Promise<void>;
  /** Drains, then refuses further traffic. Idempotent. */
  close(): Promise<void>;
}
