/**
 * vLLM's tokenizer endpoints, at the server root as vLLM serves them, so that
 * lm-evaluation-harness can tokenize with the served model's own tokenizer
 * (`tokenizer_backend=remote`, auto-detected by recent versions) instead of downloading one:
 *
 *     POST /tokenize     { prompt } or { messages, add_generation_prompt? }  -> { count, max_model_len, tokens, token_strs }
 *     POST /detokenize   { tokens }                                          -> { prompt }
 *     GET  /tokenizer_info                                                   -> tokenizer_config.json's fields
 *
 * Text is tokenized as transformers' `tokenizer(text, add_special_tokens=False)` (what the chat
 * template path uses too); `add_special_tokens: true` is refused rather than ignored.
 */
import type { Hono } from 'hono';
import { z } from 'zod';
import type { RouteContext, ServeEnv } from './route-context.js';
import { chatRequestSchema } from './chat-request.js';
import { ApiError } from './openai-errors.js';
import { tokenString } from './token-text.js';
import { integer, parseBody } from './validation.js';

const common = {
  model: z.string().min(1).nullish(),
  add_special_tokens: z.literal(false, { error: 'false (turnwise tokenizes as transformers does with add_special_tokens=False)' }).nullish(),
  return_token_strs: z.boolean().nullish(),
};
const tokenizeText = z.object({ ...common, prompt: z.string() }).strict();
const tokenizeChat = z
  .object({ ...common, messages: chatRequestSchema.shape.messages, add_generation_prompt: z.literal(true).nullish(), chat_template_kwargs: z.record(z.string(), z.unknown()).nullish() })
  .strict();
const detokenize = z.object({ model: z.string().min(1).nullish(), tokens: z.array(integer().min(0)) }).strict();

/**
 * Adds the routes to `app`.
 * @example registerTokenizerRoutes(app, ctx);
 */
export function registerTokenizerRoutes(app: Hono<ServeEnv>, ctx: RouteContext): void {
  const { model } = ctx;
  app.post('/tokenize', async (c) => {
    const body = await ctx.readJson(c);
    const chat = typeof body === 'object' && body !== null && 'messages' in body;
    let ids: Int32Array;
    let strs: boolean;
    if (chat) {
      const req = parseBody(tokenizeChat, body);
      ctx.checkModel(req.model);
      if (model.chat === null) throw ApiError.invalid('messages', `This model has no chat prompt format: ${model.chatUnavailable ?? 'no chat template'}.`, 'invalid_value');
      if (req.messages.length > ctx.limits.maxMessages) throw ApiError.invalid('messages', `Invalid value for 'messages': expected at most ${ctx.limits.maxMessages} messages, but got ${req.messages.length}.`, 'request_too_large');
      ids = model.chat.prompt(req.messages, req.chat_template_kwargs ?? undefined).ids;
      strs = req.return_token_strs === true;
    } else {
      const req = parseBody(tokenizeText, body);
      ctx.checkModel(req.model);
      ids = model.tokens.encode(req.prompt);
      strs = req.return_token_strs === true;
    }
    return c.json({ count: ids.length, max_model_len: model.maxContext, tokens: Array.from(ids), token_strs: strs ? Array.from(ids, (id) => tokenString(model.tokens, id)) : null });
  });

  app.post('/detokenize', async (c) => {
    const req = parseBody(detokenize, await ctx.readJson(c));
    ctx.checkModel(req.model);
    const bad = req.tokens.findIndex((id) => id >= model.vocabSize);
    if (bad >= 0) throw ApiError.invalid(`tokens[${bad}]`, `Invalid value for 'tokens[${bad}]': token id ${req.tokens[bad]} is outside the vocabulary [0, ${model.vocabSize}).`, 'invalid_value');
    return c.json({ prompt: model.tokens.decode(req.tokens, true) });
  });

  app.get('/tokenizer_info', (c) => c.json(model.tokenizerInfo));
}
