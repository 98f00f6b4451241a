/**
 * The OpenAI-compatible HTTP surface of a served model (Hono):
 *
 *     POST /v1/chat/completions   chat (JSON, or `stream: true` SSE)          chat-route.ts
 *     POST /v1/completions        legacy completions: text or token prompts,  completions-route.ts
 *                                 echo, logprobs (log-likelihood scoring)
 *     GET  /v1/models, /v1/models/:id
 *     POST /tokenize, /detokenize; GET /tokenizer_info   vLLM's tokenizer endpoints (lm-evaluation-harness's
 *                                 `tokenizer_backend=remote`)                 tokenizer-routes.ts
 *     GET  /health
 *     GET  /metrics               queue depth, limit, admitted and refused requests   admission.ts
 *
 * The generation routes are behind admission control (admission.ts): past `maxQueue` requests in
 * the server, a request is answered 429 with `Retry-After`.
 *
 * Errors come in OpenAI's shape (openai-errors.ts). An error answered before the request body was
 * read (413 for a body over the limit, 404 for an unknown URL, …) carries `Connection: close`: the
 * unread rest of the body would otherwise be parsed as the next request on a kept-alive connection,
 * and the client's next request would fail with ECONNRESET.
 */
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { Rng } from '../core/rng.js';
import { Admission } from './admission.js';
import { GenerationBatcher } from './batcher.js';
import { registerChatRoute } from './chat-route.js';
import { registerCompletionsRoute } from './completions-route.js';
import { ApiError } from './openai-errors.js';
import type { RouteContext, ServeEnv } from './route-context.js';
import type { ServedModel } from './served-model.js';
import { registerTokenizerRoutes } from './tokenizer-routes.js';

/** Limits and clocks of the server. */
export interface ServeAppOptions {
  /** Largest request body in bytes (413 beyond). Default 1 MiB. */
  readonly maxBodyBytes?: number;
  /** Most messages per chat request. Default 1024. */
  readonly maxMessages?: number;
  /** Most prompts per completions request. Default 64. */
  readonly maxPrompts?: number;
  /** Most choices one request generates (prompts x n). Default 256. */
  readonly maxChoices?: number;
  /** Most `guided_choice` entries, and their total bytes. Default 1024 entries, 64 KiB. */
  readonly maxGuidedChoices?: number;
  readonly maxGuidedChoiceBytes?: number;
  /** Most requests generated together. Default 32. */
  readonly maxBatch?: number;
  /** Generation requests in the server at once (generating or waiting); more get 429. Default 64. */
  readonly maxQueue?: number;
  /** Stream for requests without `seed`. */
  readonly rng: Rng;
  /** Wall time in ms since the epoch (the `created` field). Default `Date.now`. */
  readonly wallClockMs?: () => number;
}

/** Whether the request came with a body (declared length or chunked). */
function hasBody(request: Request): boolean {
  const length = request.headers.get('content-length');
  return (length !== null && length !== '0') || request.headers.has('transfer-encoding');
}

/**
 * Builds the app (no socket: `serveModel` binds it, tests may call `app.request`).
 * @example const app = createServeApp(model, { rng: Rng.fromSeed(0) }); const res = await app.request('/v1/models');
 */
export function createServeApp(model: ServedModel, options: ServeAppOptions): Hono<ServeEnv> {
  const wall = options.wallClockMs ?? Date.now;
  const maxBody = options.maxBodyBytes ?? 1024 * 1024;
  let nextId = 0;
  const ctx: RouteContext = {
    model,
    batcher: new GenerationBatcher(model.policy, options.rng, options.maxBatch ?? 32, model.maxContext),
    limits: {
      maxMessages: options.maxMessages ?? 1024,
      maxPrompts: options.maxPrompts ?? 64,
      maxChoices: options.maxChoices ?? 256,
      guided: { maxEntries: options.maxGuidedChoices ?? 1024, maxBytes: options.maxGuidedChoiceBytes ?? 64 * 1024 },
    },
    created: () => Math.floor(wall() / 1000),
    nextId: () => nextId++,
    fingerprint: () => `turnwise-v${model.policy.version}`,
    async readJson(c) {
      return (await this.readJsonWithText(c)).value;
    },
    async readJsonWithText(c) {
      const text = await c.req.text();
      c.set('bodyRead', true);
      try {
        return { value: JSON.parse(text), text };
      } catch {
        throw ApiError.invalid(null, 'We could not parse the JSON body of your request. Send a JSON object.');
      }
    },
    checkModel(requested) {
      if (requested === null || requested === undefined || requested === model.id) return;
      throw new ApiError(404, `The model '${requested}' does not exist. This server serves '${model.id}'.`, 'invalid_request_error', 'model', 'model_not_found');
    },
  };

  const app = new Hono<ServeEnv>();
  app.use('*', async (c, next) => {
    await next();
    if (c.res.status >= 400 && c.get('bodyRead') !== true && hasBody(c.req.raw)) c.res.headers.set('Connection', 'close');
  });
  app.onError((error, c) => {
    const api = error instanceof ApiError ? error : new ApiError(500, `The server had an error while processing your request: ${error.message}`, 'server_error');
    return c.json(api.body(), api.status);
  });
  app.notFound((c) => c.json(new ApiError(404, `Unknown request URL: ${c.req.method} ${c.req.path}.`, 'invalid_request_error', null, 'unknown_url').body(), 404));
  app.use(
    '*',
    bodyLimit({
      maxSize: maxBody,
      onError: (c) => c.json(new ApiError(413, `The request body is larger than ${maxBody} bytes.`, 'invalid_request_error', null, 'request_too_large').body(), 413),
    }),
  );

  const modelCard = () => ({ id: model.id, object: 'model', created: ctx.created(), owned_by: 'turnwise', max_model_len: model.maxContext });
  app.get('/v1/models', (c) => c.json({ object: 'list', data: [modelCard()] }));
  app.get('/v1/models/:id', (c) => {
    if (c.req.param('id') !== model.id) throw new ApiError(404, `The model '${c.req.param('id')}' does not exist.`, 'invalid_request_error', 'model', 'model_not_found');
    return c.json(modelCard());
  });
  app.get('/health', (c) => c.body(null, 200));
  const admission = new Admission(options.maxQueue !== undefined ? { maxQueue: options.maxQueue } : {});
  app.get('/metrics', (c) => c.text(admission.metricsText(), 200, { 'Content-Type': 'text/plain; version=0.0.4' }));
  for (const path of ['/v1/chat/completions', '/v1/completions']) app.post(path, admission.middleware());
  registerChatRoute(app, ctx);
  registerCompletionsRoute(app, ctx);
  registerTokenizerRoutes(app, ctx);
  return app;
}
