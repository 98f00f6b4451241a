/**
 * The OpenAI-compatible HTTP surface of a turnwise checkpoint (Hono): `POST /v1/chat/completions`
 * (JSON, or `stream: true` as OpenAI's SSE `chat.completion.chunk`s ending in `data: [DONE]`),
 * `GET /v1/models` and `GET /v1/models/:id`.
 *
 * A request becomes the token context the model was trained on (`buildContext` with the run's
 * context layout; message mapping in `chat-request.ts`), decoding is constrained to the listed
 * actions when the run decoded that way, and the reply is the action text with usage counts.
 * Defaults are the checkpoint's own sampling settings (not OpenAI's): `temperature`, `top_p`,
 * `max_tokens` = the run's `sampling.temperature`, `sampling.topP`, `sampling.maxActionTokens`;
 * `temperature: 0` is argmax decoding; `seed` makes a reply reproducible.
 */
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { streamSSE } from 'hono/streaming';
import type { ResolvedConfig } from '../core/config.js';
import { InvalidArgumentError } from '../core/errors.js';
import type { Rng } from '../core/rng.js';
import type { ActResult, Policy } from '../core/policy.js';
import type { PolicyText } from '../models/policy-text.js';
import { GenerationBatcher } from './batcher.js';
import { type ChatRequest, parseAvailableActions, parseChatRequest, toEpisodeView } from './chat-request.js';
import { ApiError } from './openai-errors.js';

/** A loaded checkpoint, ready to answer. */
export interface ServedModel {
  /** Model id clients send (`model`). */
  readonly id: string;
  readonly config: ResolvedConfig;
  /** The policy's text side: tokenizer, context layout, stop ids. */
  readonly text: PolicyText;
  readonly policy: Policy;
  /** The environment's instruction, used when a conversation carries none. */
  readonly envInstruction: string;
}

/** Limits and clocks of the server. */
export interface ServeAppOptions {
  /** Largest request body in bytes (413 beyond). Default 1 MiB. */
  readonly maxBodyBytes?: number;
  /** Most messages per request. Default 1024. */
  readonly maxMessages?: number;
  /** Most requests generated together. Default the run's `runtime.samplerMaxBatch`. */
  readonly maxBatch?: number;
  /** Stream for requests without `seed`. */
  readonly rng: Rng;
  /** Wall time in ms since the epoch (the `created` field). Default `Date.now`. */
  readonly wallClockMs?: () => number;
}

type FinishReason = 'stop' | 'length';

/** What one generation produced. */
interface Generated {
  readonly text: string;
  readonly tokens: Int32Array;
  readonly finishReason: FinishReason;
  readonly promptTokens: number;
}

/**
 * Builds the app (no socket: `serveCheckpoint` binds it, tests may call `app.request`).
 * @example const app = createServeApp(model, { rng: Rng.fromSeed(0) }); const res = await app.request('/v1/models');
 */
export function createServeApp(model: ServedModel, options: ServeAppOptions): Hono {
  const { config, text } = model;
  const wall = options.wallClockMs ?? Date.now;
  const maxMessages = options.maxMessages ?? 1024;
  const maxBody = options.maxBodyBytes ?? 1024 * 1024;
  const batcher = new GenerationBatcher(model.policy, options.rng, options.maxBatch ?? config.runtime.samplerMaxBatch);
  let nextId = 0;

  const generate = async (req: ChatRequest): Promise<Generated> => {
    if (req.model !== model.id) {
      throw new ApiError(404, `The model '${req.model}' does not exist. This server serves '${model.id}'.`, 'invalid_request_error', 'model', 'model_not_found');
    }
    if (req.messages.length > maxMessages) {
      throw ApiError.invalid('messages', `Too many messages: ${req.messages.length} (at most ${maxMessages}).`, 'request_too_large');
    }
    const maxNewTokens = req.max_completion_tokens ?? req.max_tokens ?? config.sampling.maxActionTokens;
    const param = req.max_completion_tokens != null ? 'max_completion_tokens' : 'max_tokens';
    if (maxNewTokens >= config.model.maxContext) {
      throw ApiError.invalid(param, `${param} must be less than the model's context of ${config.model.maxContext} tokens, got ${maxNewTokens}.`, 'invalid_value');
    }
    const view = toEpisodeView(req.messages);
    let contextTokens: Int32Array;
    try {
      contextTokens = text.context({
        instruction: view.instruction ?? model.envInstruction,
        pastTurns: view.pastTurns.map((t) => ({ observationText: t.observationText, actionTokens: text.actionChoices([t.actionText])[0] as Int32Array })),
        observationText: view.observationText,
      });
    } catch (error) {
      if (error instanceof InvalidArgumentError) {
        throw ApiError.invalid('messages', `This model's maximum context length is ${config.model.maxContext} tokens and the instruction plus max_tokens (${maxNewTokens}) do not fit.`, 'context_length_exceeded');
      }
      throw error;
    }
    if (contextTokens.length + maxNewTokens > config.model.maxContext) {
      throw ApiError.invalid('messages', `This model's maximum context length is ${config.model.maxContext} tokens. However, you requested ${contextTokens.length + maxNewTokens} tokens (${contextTokens.length} in the messages, ${maxNewTokens} in the completion).`, 'context_length_exceeded');
    }
    const actions = req.guided_choice ?? (config.sampling.constrained ? parseAvailableActions(view.observationText) : null);
    const actionChoices = actions ? text.actionChoices(actions) : null;
    const result: ActResult = await batcher.generate(
      { contextTokens, actionChoices, ...(req.seed != null ? { seed: req.seed } : {}) },
      { temperature: req.temperature ?? config.sampling.temperature, topP: req.top_p ?? config.sampling.topP, maxNewTokens },
    );
    const finishReason: FinishReason = result.finishReason ?? 'length';
    return { text: text.actionText(result.tokens), tokens: result.tokens, finishReason, promptTokens: contextTokens.length };
  };

  const usageOf = (g: Generated) => ({ prompt_tokens: g.promptTokens, completion_tokens: g.tokens.length, total_tokens: g.promptTokens + g.tokens.length });
  const fingerprint = () => `turnwise-v${model.policy.version}`;

  const app = new Hono();
  app.onError((error, c) => {
    const api = error instanceof ApiError ? error : new ApiError(500, `The server had an error while processing your request: ${error.message}`, 'server_error');
    return c.json(api.body(), api.status);
  });
  app.notFound((c) => c.json(new ApiError(404, `Unknown request URL: ${c.req.method} ${c.req.path}.`, 'invalid_request_error', null, 'unknown_url').body(), 404));

  const modelCard = () => ({ id: model.id, object: 'model', created: Math.floor(wall() / 1000), owned_by: 'turnwise' });
  app.get('/v1/models', (c) => c.json({ object: 'list', data: [modelCard()] }));
  app.get('/v1/models/:id', (c) => {
    if (c.req.param('id') !== model.id) throw new ApiError(404, `The model '${c.req.param('id')}' does not exist.`, 'invalid_request_error', 'model', 'model_not_found');
    return c.json(modelCard());
  });

  app.post(
    '/v1/chat/completions',
    bodyLimit({
      maxSize: maxBody,
      onError: (c) => c.json(new ApiError(413, `The request body is larger than ${maxBody} bytes.`, 'invalid_request_error', 'messages', 'request_too_large').body(), 413),
    }),
    async (c) => {
      let body: unknown;
      try {
        body = await c.req.json();
      } catch {
        throw ApiError.invalid(null, 'We could not parse the JSON body of your request. Send a JSON object with model and messages.');
      }
      const req = parseChatRequest(body);
      const generated = await generate(req);
      const id = `chatcmpl-turnwise-${nextId++}`;
      const created = Math.floor(wall() / 1000);
      if (req.stream !== true) {
        return c.json({
          id,
          object: 'chat.completion',
          created,
          model: model.id,
          system_fingerprint: fingerprint(),
          choices: [{ index: 0, message: { role: 'assistant', content: generated.text, refusal: null }, logprobs: null, finish_reason: generated.finishReason }],
          usage: usageOf(generated),
        });
      }
      const chunk = (delta: Record<string, string>, finish: FinishReason | null) =>
        JSON.stringify({ id, object: 'chat.completion.chunk', created, model: model.id, system_fingerprint: fingerprint(), choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
      return streamSSE(c, async (stream) => {
        await stream.writeSSE({ data: chunk({ role: 'assistant', content: '' }, null) });
        for (const piece of textPieces(text, generated.tokens)) await stream.writeSSE({ data: chunk({ content: piece }, null) });
        await stream.writeSSE({ data: chunk({}, generated.finishReason) });
        if (req.stream_options?.include_usage === true) {
          await stream.writeSSE({ data: JSON.stringify({ id, object: 'chat.completion.chunk', created, model: model.id, system_fingerprint: fingerprint(), choices: [], usage: usageOf(generated) }) });
        }
        await stream.writeSSE({ data: '[DONE]' });
      });
    },
  );
  return app;
}

/**
 * The generated text cut at token boundaries, for streaming: each piece is what one more token
 * adds to the decoded prefix (held back while a multi-byte character is incomplete). The pieces
 * join to exactly `tokenizer.decode(tokens)`.
 * @example textPieces(tok, ids).join('') === tok.decode(ids) // true
 */
export function textPieces(tokenizer: Pick<PolicyText, 'actionText'>, tokens: Int32Array): string[] {
  const pieces: string[] = [];
  let emitted = '';
  for (let k = 1; k <= tokens.length; k++) {
    const prefix = tokenizer.actionText(tokens.subarray(0, k));
    if (k < tokens.length && prefix.endsWith('\uFFFD')) continue;
    if (prefix.length > emitted.length && prefix.startsWith(emitted)) {
      pieces.push(prefix.slice(emitted.length));
      emitted = prefix;
    }
  }
  const full = tokenizer.actionText(tokens);
  if (full !== emitted) pieces.push(full.startsWith(emitted) ? full.slice(emitted.length) : full);
  return pieces;
}
