/**
 * Sending a request until it gets an answer, and waiting for a future until it has a result:
 * the retry loops of the Tinker client. Retries resend the very same body (so a training call
 * keeps its `seq_id` and a server that de-duplicates, as SkyRL tx does on `(model_id, seq_id)`,
 * answers with the original future), after an exponential back-off with jitter drawn from the
 * injected `random`, slept on the injected clock.
 *
 * Submission: connection loss, a request timeout, 408, 425, 429 and 5xx are retried (a server's
 * `retry-after` is honoured); any other status is final. Polling `retrieve_future`: a result is
 * returned, `try_again` / 408 / a poll that timed out mean "still running" and poll again without
 * using up retries, a failure (`{error, category}` or 400 `{detail}`) throws
 * {@link TinkerRequestError}, 404/410 throw {@link TinkerFutureGoneError}, and connection loss,
 * 5xx, 429 or a bare 400 poll again after a back-off, up to the retry budget.
 */
import type { z } from 'zod';
import type { Clock } from '../../core/clock.js';
import { backoffDelay, retryAfterMs } from '../../policies/retry.js';
import { failureDetail, isTransientStatus, type PollOutcome, readPollAnswer } from './answers.js';
import { type TinkerCallSite, TinkerFutureGoneError, TinkerProtocolError, TinkerRequestError, TinkerUnavailableError } from './errors.js';
import { type HttpAnswer, type HttpRequest, type TinkerHttp, TransportFailure } from './http.js';
import { TINKER_API_PREFIX } from './wire.js';
import { type ResolvedTinkerSettings, serverLabel } from './settings.js';

/** Something the client did that a log may want (never a secret: the key is redacted from every text). */
export type TinkerEvent =
  | { readonly kind: 'retry'; readonly call: string; readonly attempt: number; readonly delayMs: number; readonly reason: string }
  | { readonly kind: 'pending'; readonly call: string; readonly requestId: string; readonly reason: string; readonly queueState?: string }
  | { readonly kind: 'heartbeat-failed'; readonly call: 'session_heartbeat'; readonly reason: string; readonly sinceLastOkMs: number }
  | { readonly kind: 'server-message'; readonly call: string; readonly level: 'info' | 'warning' | 'error'; readonly message: string };

/** What the loops need from the outside world. */
export interface RequestDeps {
  readonly http: TinkerHttp;
  readonly settings: ResolvedTinkerSettings;
  readonly clock: Clock;
  /** Uniform draw in [0, 1) for back-off jitter. */
  readonly random: () => number;
  /** ms since the epoch, for HTTP-date `retry-after` values. */
  readonly epochMs: () => number;
  readonly onEvent?: (event: TinkerEvent) => void;
}

/**
 * @example
 * const requests = new TinkerRequests(deps);
 * const { request_id } = requests.parse('forward', submittedSchema, (await requests.send(req)).json);
 * const result = await requests.awaitFuture('forward', request_id);
 */
export class TinkerRequests {
  /** The server's origin, for messages. */
  readonly server: string;

  constructor(private readonly deps: RequestDeps) {
    this.server = serverLabel(deps.settings.url);
  }

  /** Where a call went, for errors. */
  site(call: string, requestId?: string): TinkerCallSite {
    return { call, server: this.server, requestId };
  }

  /** Tells the listener, if any; a listener that throws is not the call's problem. */
  emit(event: TinkerEvent): void {
    try {
      this.deps.onEvent?.(event);
    } catch {
      // A broken log sink must not fail training.
    }
  }

  /** Waits `ms` on the injected clock; rejects when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    const { clock } = this.deps;
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = () => {
        clock.clearTimeout(handle);
        reject(signal?.reason);
      };
      const handle = clock.setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Sends `request` until it gets a final answer: 2xx (or 3xx when redirects are manual) is
   * returned; a final failure throws {@link TinkerRequestError}; transient trouble that outlasts
   * the retry budget throws {@link TinkerUnavailableError}.
   */
  async send(request: HttpRequest): Promise<HttpAnswer> {
    const { retry } = this.deps.settings;
    const site = this.site(request.route);
    for (let attempt = 0; ; attempt++) {
      let reason: string;
      let serverDelayMs: number | undefined;
      try {
        const answer = await this.deps.http.send(request);
        if (answer.status < 300 || (request.manualRedirect && answer.status < 400)) return answer;
        const detail = failureDetail(answer);
        if (!isTransientStatus(answer.status)) throw new TinkerRequestError(site, answer.status, detail, answer.status >= 500 ? 'server' : 'user', attempt + 1);
        reason = `HTTP ${answer.status}: ${detail}`;
        serverDelayMs = retryAfterMs(answer.headers, this.deps.epochMs());
      } catch (error) {
        if (!(error instanceof TransportFailure)) throw error;
        reason = `${error.kind}: ${error.message}`;
      }
      if (attempt >= retry.maxRetries) throw new TinkerUnavailableError(site, attempt + 1, reason);
      const delayMs = backoffDelay(retry, attempt, this.deps.random, serverDelayMs);
      this.emit({ kind: 'retry', call: request.route, attempt: attempt + 1, delayMs, reason });
      await this.sleep(delayMs, request.signal);
    }
  }

  /**
   * Polls `retrieve_future` for `requestId` until it has a result (returned as parsed JSON).
   * `call` is the name of the call that made the future, for messages.
   */
  async awaitFuture(call: string, requestId: string, signal?: AbortSignal): Promise<unknown> {
    const { settings, clock } = this.deps;
    const site = this.site(call, requestId);
    const started = clock.now();
    let troubles = 0;
    let polls = 0;
    let last = 'nothing yet';
    for (;;) {
      if (settings.futureTimeoutMs > 0 && clock.now() - started >= settings.futureTimeoutMs) {
        throw new TinkerUnavailableError(site, polls, `no result within futureTimeoutMs = ${settings.futureTimeoutMs} ms (last answer: ${last})`);
      }
      polls++;
      const outcome = await this.pollOnce(requestId, signal);
      switch (outcome.kind) {
        case 'result':
          return outcome.body;
        case 'failed':
          throw new TinkerRequestError(site, outcome.status, outcome.detail, outcome.category);
        case 'gone':
          throw new TinkerFutureGoneError(site, outcome.status, outcome.detail);
        case 'pending':
          troubles = 0;
          last = outcome.reason;
          this.emit({ kind: 'pending', call, requestId, reason: outcome.reason, queueState: outcome.queueState });
          if (outcome.reason === 'try_again' && settings.tryAgainDelayMs > 0) await this.sleep(settings.tryAgainDelayMs, signal);
          break;
        case 'transient': {
          last = outcome.status === 0 ? outcome.detail : `HTTP ${outcome.status}: ${outcome.detail}`;
          if (troubles >= settings.retry.maxRetries) throw new TinkerUnavailableError(site, polls, last);
          const delayMs = backoffDelay(settings.retry, troubles, this.deps.random);
          troubles++;
          this.emit({ kind: 'retry', call: 'retrieve_future', attempt: troubles, delayMs, reason: last });
          await this.sleep(delayMs, signal);
          break;
        }
      }
    }
  }

  private async pollOnce(requestId: string, signal?: AbortSignal): Promise<PollOutcome> {
    try {
      const answer = await this.deps.http.send({
        route: 'retrieve_future',
        method: 'POST',
        path: `${TINKER_API_PREFIX}/retrieve_future`,
        body: { request_id: requestId },
        timeoutMs: this.deps.settings.pollTimeoutMs,
        signal,
      });
      return readPollAnswer(answer);
    } catch (error) {
      if (!(error instanceof TransportFailure)) throw error;
      // A long poll that outlives our timeout is "still running", like the server's own 408.
      if (error.kind === 'timeout') return { kind: 'pending', reason: 'poll timed out' };
      return { kind: 'transient', status: 0, detail: `connection: ${error.message}` };
    }
  }

  /**
   * Reads a body with `schema`, or throws {@link TinkerProtocolError} naming the first field at fault.
   * @example const { model_id } = requests.parse('create_model', createModelResultSchema, body);
   */
  parse<S extends z.ZodType>(call: string, schema: S, body: unknown, requestId?: string): z.infer<S> {
    const parsed = schema.safeParse(body);
    if (parsed.success) return parsed.data;
    const issue = parsed.error.issues[0];
    const field = issue && issue.path.length > 0 ? issue.path.join('.') : '(body)';
    throw new TinkerProtocolError(this.site(call, requestId), field, issue?.message ?? 'unexpected shape');
  }
}
