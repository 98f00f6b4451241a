/**
 * Riding out a NATS server restart. The connection reconnects by itself (forever, see
 * `../../bus/nats-connect.ts`), but a JetStream call made while the server is down or still recovering its
 * store fails: a request `timeout`, `no responders`, a 503 from the JetStream API. JetStream keeps
 * what it acknowledged on disk, so the caller only has to repeat what was not acknowledged — every
 * call wrapped here is safe to repeat (a publish carries `Nats-Msg-Id`, a put replaces, a step's
 * collection replays the step from the stream).
 *
 * {@link outlastOutage} repeats such a call until it succeeds or the outage has lasted `waitMs`;
 * any other error (a refused message, a missing stream) passes through at once.
 */
import { ConnectionError, NoRespondersError, RequestError, TimeoutError } from '@nats-io/transport-node';
import { type Clock, systemClock } from '../../core/clock.js';
import { TurnwiseError } from '../../core/errors.js';

/** Default {@link OutageOptions.waitMs}: 5 minutes, as long as a run waits for a lost worker. */
export const DEFAULT_OUTAGE_WAIT_MS = 300_000;

/** How long to keep trying, and where to say so. */
export interface OutageOptions {
  /** Give up once the server has been unreachable this long, ms. Default {@link DEFAULT_OUTAGE_WAIT_MS}. */
  readonly waitMs?: number;
  /** One line when an outage starts and one when it ends. */
  readonly log?: (line: string) => void;
  readonly clock?: Clock;
}

/**
 * The server stayed unreachable for longer than the run waits.
 * @example catch (e) { if (e instanceof NatsOutageError) console.error(e.action, e.waitedMs); }
 */
export class NatsOutageError extends TurnwiseError {
  constructor(
    readonly action: string,
    readonly waitedMs: number,
    options?: { cause?: unknown },
  ) {
    super(`NATS was unreachable for ${Math.round(waitedMs / 1000)} s while ${action} (${(options?.cause as Error | undefined)?.message ?? 'no reply'}); the run is resumable once the server is back`, options);
  }
}

/**
 * Whether an error means "the server is not answering right now" (repeat later) rather than "the
 * server answered no" (a real error).
 * @example isOutage(new TimeoutError()) // true
 */
export function isOutage(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    if (e instanceof TimeoutError || e instanceof NoRespondersError || e instanceof ConnectionError) return true;
    if (e instanceof RequestError && e.isNoResponders()) return true;
    // JetStream's API answers 503 while it recovers its streams after a restart.
    const status = (e as { status?: unknown }).status;
    if (e.name === 'JetStreamApiError' && status === 503) return true;
    if (e.name === 'JetStreamNotEnabled' || /jetstream (system )?temporarily unavailable|jetstream not enabled/i.test(e.message)) return true;
  }
  return false;
}

/**
 * Runs `op`, repeating it while the server is unreachable (backing off from 250 ms to 2 s).
 * @throws NatsOutageError once the outage has lasted `waitMs`; any error that is not an outage as it is.
 * @example await outlastOutage('publishing weights v3', () => putBlob(infra, 'weights-v3', w), { log });
 */
export async function outlastOutage<T>(action: string, op: () => Promise<T>, options: OutageOptions = {}): Promise<T> {
  const clock = options.clock ?? systemClock;
  const waitMs = options.waitMs ?? DEFAULT_OUTAGE_WAIT_MS;
  let since: number | null = null;
  for (let pause = 250; ; pause = Math.min(2 * pause, 2000)) {
    try {
      const result = await op();
      if (since !== null) options.log?.(`NATS is back: ${action} done after ${((clock.now() - since) / 1000).toFixed(1)} s`);
      return result;
    } catch (error) {
      if (!isOutage(error)) throw error;
      const now = clock.now();
      if (since === null) {
        since = now;
        options.log?.(`NATS unreachable while ${action} (${(error as Error).message}); retrying for up to ${Math.round(waitMs / 1000)} s`);
      }
      if (now - since >= waitMs) throw new NatsOutageError(action, now - since, { cause: error });
      await new Promise<void>((resolve) => clock.setTimeout(resolve, pause));
    }
  }
}
