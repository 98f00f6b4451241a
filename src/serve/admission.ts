/**
 * Admission control for the generation routes: at most `maxQueue` requests are in the server at
 * once (being generated or waiting for the model); one more is answered at once with 429, a
 * `Retry-After` header and OpenAI's rate-limit error body, instead of waiting behind hundreds of
 * others (500 clients once drained in 58 s, p99 58 s). OpenAI's clients retry a 429 after
 * `Retry-After` by themselves.
 *
 * A request leaves the queue when its answer is complete: for a streamed answer, when the stream
 * ends or the client goes away. The depth, limit and refusals are on `GET /metrics` (Prometheus
 * text, as vLLM's server has one).
 */
import type { MiddlewareHandler } from 'hono';
import { ApiError } from './openai-errors.js';

/** Default {@link AdmissionOptions.maxQueue}. */
export const DEFAULT_MAX_QUEUE = 64;

/** Options of {@link Admission}. */
export interface AdmissionOptions {
  /** Requests in the server at once (generating or waiting); more get 429. Default {@link DEFAULT_MAX_QUEUE}. */
  readonly maxQueue?: number;
  /** Monotonic ms (service-time estimate for `Retry-After`). Default `performance.now`. */
  readonly now?: () => number;
}

/**
 * The queue of the generation routes.
 * @example const admission = new Admission({ maxQueue: 64 }); app.use('/v1/completions', admission.middleware());
 */
export class Admission {
  readonly maxQueue: number;
  private depth = 0;
  private rejected = 0;
  private admitted = 0;
  /** Smoothed seconds a request spends in the server (null before the first one finished). */
  private serviceSeconds: number | null = null;
  private readonly now: () => number;

  constructor(options: AdmissionOptions = {}) {
    const maxQueue = options.maxQueue ?? DEFAULT_MAX_QUEUE;
    if (!(Number.isInteger(maxQueue) && maxQueue > 0)) throw new RangeError(`maxQueue must be a positive integer, got ${maxQueue}`);
    this.maxQueue = maxQueue;
    this.now = options.now ?? (() => performance.now());
  }

  /** Requests in the server now. */
  get queueDepth(): number {
    return this.depth;
  }

  /**
   * Seconds a refused client should wait: the time the queue ahead of it takes to drain at the
   * observed service rate, at least 1.
   */
  retryAfterSeconds(): number {
    const perRequest = this.serviceSeconds ?? 1;
    return Math.max(1, Math.ceil(perRequest));
  }

  /** The middleware that admits or refuses (put it on the routes that generate). */
  middleware(): MiddlewareHandler {
    return async (c, next) => {
      if (this.depth >= this.maxQueue) {
        this.rejected++;
        const retryAfter = this.retryAfterSeconds();
        const error = new ApiError(
          429,
          `The server is at capacity: ${this.depth} requests are being served or waiting (limit ${this.maxQueue}). Please retry after ${retryAfter} s.`,
          'requests',
          null,
          'rate_limit_exceeded',
        );
        c.header('Retry-After', String(retryAfter));
        return c.json(error.body(), 429);
      }
      this.depth++;
      this.admitted++;
      const started = this.now();
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        this.depth--;
        const seconds = (this.now() - started) / 1000;
        this.serviceSeconds = this.serviceSeconds === null ? seconds : 0.8 * this.serviceSeconds + 0.2 * seconds;
      };
      try {
        await next();
      } catch (error) {
        release();
        throw error;
      }
      const body = c.res.body;
      const streamed = (c.res.headers.get('content-type') ?? '').startsWith('text/event-stream');
      if (!streamed || body === null) {
        release();
        return;
      }
      // A streamed answer is still being generated: the request leaves the queue when the stream ends or is cancelled.
      const reader = body.getReader();
      const tracked = new ReadableStream<Uint8Array>({
        async pull(controller) {
          try {
            const { done, value } = await reader.read();
            if (done) {
              release();
              controller.close();
            } else controller.enqueue(value);
          } catch (error) {
            release();
            controller.error(error);
          }
        },
        async cancel(reason) {
          release();
          await reader.cancel(reason);
        },
      });
      c.res = new Response(tracked, { status: c.res.status, headers: c.res.headers });
    };
  }

  /** `GET /metrics` text (Prometheus exposition format). */
  metricsText(): string {
    return [
      '# HELP turnwise_serve_queue_depth Generation requests in the server (being generated or waiting).',
      '# TYPE turnwise_serve_queue_depth gauge',
      `turnwise_serve_queue_depth ${this.depth}`,
      '# HELP turnwise_serve_queue_limit Requests admitted at once; more are answered 429.',
      '# TYPE turnwise_serve_queue_limit gauge',
      `turnwise_serve_queue_limit ${this.maxQueue}`,
      '# HELP turnwise_serve_requests_admitted_total Generation requests admitted.',
      '# TYPE turnwise_serve_requests_admitted_total counter',
      `turnwise_serve_requests_admitted_total ${this.admitted}`,
      '# HELP turnwise_serve_requests_rejected_total Generation requests answered 429 (queue full).',
      '# TYPE turnwise_serve_requests_rejected_total counter',
      `turnwise_serve_requests_rejected_total ${this.rejected}`,
      '',
    ].join('\n');
  }
}
