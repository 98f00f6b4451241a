/**
 * `POST /v1/chat/completions`: the messages become a prompt (the model's chat template, or
 * turnwise's episode layout for its own model), then `n` choices are generated with the request's
 * `stop` strings, limits and seeds; `logprobs` / `top_logprobs` in OpenAI's format; `stream: true`
 * sends `chat.completion.chunk`s (one per token piece) ending in `data: [DONE]`.
 *
 * Defaults are the served model's (`temperature`, `top_p`; `max_tokens` a run's per-turn limit or
 * what the context leaves). `temperature: 0` is argmax decoding; `seed` makes a reply reproducible.
 * A prompt that does not fit the context is refused with OpenAI's `context_length_exceeded`.
 */
import type { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { RouteContext, ServeEnv } from './route-context.js';
import { type ChatRequest, parseChatRequest } from './chat-request.js';
import { choiceSeed, type GeneratedChoice, generateChoice } from './generation.js';
import { chatLogprobEntries } from './logprobs-format.js';
import { ApiError, chatContextError } from './openai-errors.js';
import { stopStrings } from './sampling-params.js';

/** A chat request's prompt and its generated choices. */
interface ChatOutcome {
  readonly promptTokens: number;
  readonly choices: readonly GeneratedChoice[];
}

async function complete(ctx: RouteContext, req: ChatRequest, id: string): Promise<ChatOutcome> {
  const { model, limits } = ctx;
  ctx.checkModel(req.model);
  if (req.messages.length > limits.maxMessages) {
    throw ApiError.invalid('messages', `Invalid value for 'messages': expected at most ${limits.maxMessages} messages, but got ${req.messages.length}.`, 'request_too_large');
  }
  if (model.chat === null) throw ApiError.invalid('messages', `This model cannot answer chat completions: ${model.chatUnavailable ?? 'it has no chat template'}. Use /v1/completions.`, 'invalid_value');
  if (req.chat_template_kwargs && model.chat.kind !== 'template') {
    throw ApiError.invalid('chat_template_kwargs', "Invalid value for 'chat_template_kwargs': this model has no chat template (turnwise's own layout).", 'invalid_value');
  }
  const n = req.n ?? 1;
  if (n > limits.maxChoices) throw ApiError.invalid('n', `Invalid value for 'n': expected at most ${limits.maxChoices}, but got ${n} instead.`, 'invalid_value');
  const { ids, actions } = model.chat.prompt(req.messages, req.chat_template_kwargs ?? undefined);
  const room = model.maxContext - ids.length;
  if (room < 1) throw chatContextError(model.maxContext, ids.length, null);
  const asked = req.max_completion_tokens ?? req.max_tokens;
  if (asked != null && asked > room) throw chatContextError(model.maxContext, ids.length, asked);
  const fallback = model.defaults.chatMaxTokens;
  const maxTokens = asked ?? (fallback === 'context' ? room : Math.min(fallback, room));
  const listed = req.guided_choice ?? actions;
  const actionChoices = listed ? model.chat.actionChoices(listed) : null;
  const temperature = req.temperature ?? model.defaults.temperature;
  const topP = req.top_p ?? model.defaults.topP;
  const topLogprobs = req.logprobs === true ? (req.top_logprobs ?? 0) : 0;
  const stop = stopStrings(req);
  const choices = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      generateChoice(
        ctx.batcher,
        { temperature, topP },
        { prompt: ids, actionChoices, maxTokens, seed: choiceSeed(req.seed, i), topLogprobs, stop, stopTokenIds: model.stopTokenIds, key: `${id}/${i}` },
        model.tokens,
      ),
    ),
  );
  return { promptTokens: ids.length, choices };
}

/**
 * Adds the route to `app`.
 * @example registerChatRoute(app, ctx);
 */
export function registerChatRoute(app: Hono<ServeEnv>, ctx: RouteContext): void {
  const { model } = ctx;
  const usageOf = (o: ChatOutcome) => {
    const completion = o.choices.reduce((sum, ch) => sum + ch.tokens.length, 0);
    return { prompt_tokens: o.promptTokens, completion_tokens: completion, total_tokens: o.promptTokens + completion };
  };
  const logprobsOf = (req: ChatRequest, ch: GeneratedChoice, from = 0, to = ch.tokens.length) =>
    req.logprobs === true
      ? { content: chatLogprobEntries(model.tokens, ch.tokens.subarray(from, to), ch.logprobs.subarray(from, to), ch.top && { k: ch.top.k, ids: ch.top.ids.subarray(from * ch.top.k, to * ch.top.k), logprobs: ch.top.logprobs.subarray(from * ch.top.k, to * ch.top.k) }), refusal: null }
      : null;

  app.post('/v1/chat/completions', async (c) => {
    const req = parseChatRequest(await ctx.readJson(c), ctx.limits.guided);
    const id = `chatcmpl-turnwise-${ctx.nextId()}`;
    const outcome = await complete(ctx, req, id);
    const created = ctx.created();
    const head = { id, created, model: model.id, system_fingerprint: ctx.fingerprint() };
    if (req.stream !== true) {
      return c.json({
        ...head,
        object: 'chat.completion',
        choices: outcome.choices.map((ch, index) => ({ index, message: { role: 'assistant', content: ch.text, refusal: null }, logprobs: logprobsOf(req, ch), finish_reason: ch.finishReason })),
        usage: usageOf(outcome),
      });
    }
    const chunk = (index: number, delta: Record<string, string>, logprobs: unknown, finish: string | null) =>
      JSON.stringify({ ...head, object: 'chat.completion.chunk', choices: [{ index, delta, logprobs, finish_reason: finish }] });
    return streamSSE(c, async (stream) => {
      for (const [index, ch] of outcome.choices.entries()) {
        await stream.writeSSE({ data: chunk(index, { role: 'assistant', content: '' }, null, null) });
        for (let j = 0; j < ch.tokens.length; j++) {
          const piece = ch.pieces[j] ?? '';
          if (piece === '' && req.logprobs !== true) continue;
          await stream.writeSSE({ data: chunk(index, { content: piece }, logprobsOf(req, ch, j, j + 1), null) });
        }
        await stream.writeSSE({ data: chunk(index, {}, null, ch.finishReason) });
      }
      if (req.stream_options?.include_usage === true) {
        await stream.writeSSE({ data: JSON.stringify({ ...head, object: 'chat.completion.chunk', choices: [], usage: usageOf(outcome) }) });
      }
      await stream.writeSSE({ data: '[DONE]' });
    });
  });
}
