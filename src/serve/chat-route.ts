/**
 * `POST /v1/chat/completions`: the messages become a prompt (the model's chat template, or
 * turnwise's episode layout for its own model), then `n` choices are generated with the request's
 * `stop` strings, limits and seeds; `logprobs` / `top_logprobs` in OpenAI's format; `stream: true`
 * sends `chat.completion.chunk`s (one per token piece) ending in `data: [DONE]`.
 *
 * Defaults are the served model's (`temperature`, `top_p`; `max_tokens` a run's per-turn limit or
 * what the context leaves). `temperature: 0` is argmax decoding; `seed` makes a reply reproducible.
 * A prompt that does not fit the context is refused with OpenAI's `context_length_exceeded`.
 * `tools` / `tool_choice` and `tool_calls` as OpenAI has them (`chat-tools.ts`).
 */
import type { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { RouteContext, ServeEnv } from './route-context.js';
import { type ChatRequest, parseChatRequest } from './chat-request.js';
import { checkToolChoice, openerAfter, type RequestToolChoice, type ToolCallReader } from './chat-tools.js';
import type { ToolReply } from '../models/chat/tool-formats.js';
import type { GrammarState } from '../models/constrain/grammar-state.js';
import { TokenGrammar } from '../models/constrain/token-grammar.js';
import { responseGrammar } from './response-format.js';
import { servedGrammarVocab } from './served-grammar-vocab.js';
import { toolCallGrammar } from './tool-call-grammar.js';
import { choiceSeed, type GeneratedChoice, generateChoice } from './generation.js';
import { chatLogprobEntries } from './logprobs-format.js';
import { ApiError, chatContextError } from './openai-errors.js';
import { stopStrings } from './sampling-params.js';

/** A chat request's prompt and its generated choices (with what each reply held, when tools are read). */
interface ChatOutcome {
  readonly promptTokens: number;
  readonly choices: readonly GeneratedChoice[];
  /** Per choice: the reply read for tool calls, or null when calls are not read (no tools, `tool_choice: none`). */
  readonly replies: readonly (ToolReply | null)[];
}

/** The reader of this request's tool calls, the text its replies start with, or null when calls are not read. */
function toolReading(ctx: RouteContext, req: ChatRequest, choice: RequestToolChoice): { reader: ToolCallReader; opener: string; forced: GrammarState | null } | null {
  if (choice === 'none') return null;
  const reader = ctx.model.chat?.toolCalls();
  if (reader === undefined || typeof reader === 'string') throw ApiError.invalid('tools', `Invalid value for 'tools': this model cannot call tools: ${reader ?? 'it has no chat template'}.`, 'invalid_value');
  const opener = choice === 'auto' ? '' : choice === 'required' ? reader.opener() : reader.opener(choice.function.name);
  if (req.guided_choice) throw ApiError.invalid('guided_choice', "Invalid value for 'guided_choice': not with tools (a tool call is free text).", 'invalid_value');
  const forced =
    choice === 'auto' ? null : toolCallGrammar(reader.shape, req.tools ?? [], choice === 'required' ? 'required' : { name: choice.function.name }, req.parallel_tool_calls !== false);
  return { reader, opener, forced };
}

/**
 * The grammar each choice's reply is kept to, as a maker of fresh ones (a grammar's state advances
 * as its choice generates): a forced tool call's, a JSON response format's, or none. Throws an
 * `ApiError` when the request asks for both, or a JSON format beside `guided_choice`.
 */
function replyGrammar(ctx: RouteContext, req: ChatRequest, reading: { reader: ToolCallReader; forced: GrammarState | null } | null): (() => TokenGrammar) | null {
  const json = responseGrammar(req.response_format, req.guided_json);
  const param = req.guided_json != null ? 'guided_json' : 'response_format';
  if (json !== null && reading !== null) throw ApiError.invalid(param, `Invalid value for '${param}': a JSON reply cannot call tools; send tool_choice 'none' or no tools.`, 'invalid_value');
  if (json !== null && req.guided_choice) throw ApiError.invalid(param, `Invalid value for '${param}': not with guided_choice.`, 'invalid_value');
  const start = json ?? reading?.forced ?? null;
  if (start === null) return null;
  const shape = reading?.reader.shape;
  const literals = shape === undefined ? [] : [shape.before, shape.between, ...shape.tail, ...(shape.separator ?? [])].filter((t): t is string => typeof t === 'string');
  const vocab = servedGrammarVocab(ctx.model.tokens, ctx.model.vocabSize, ctx.model.stopTokenIds, literals);
  return () => new TokenGrammar(vocab, start, ctx.model.stopTokenIds);
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
  const choice = checkToolChoice(req.tools, req.tool_choice);
  const tools = req.tools && req.tools.length > 0 ? req.tools : undefined;
  if (tools !== undefined && model.chat.kind !== 'template') throw ApiError.invalid('tools', `Invalid value for 'tools': this model cannot call tools: ${model.chat.toolCalls()}.`, 'invalid_value');
  const reading = toolReading(ctx, req, choice);
  const prompt = model.chat.prompt(req.messages, req.chat_template_kwargs ?? undefined, tools);
  const openerText = reading === null || reading.opener === '' ? '' : openerAfter(model.tokens.decode(prompt.ids, true), reading.opener);
  const opener = openerText === '' ? new Int32Array(0) : model.tokens.encode(openerText);
  const ids = opener.length === 0 ? prompt.ids : Int32Array.from([...prompt.ids, ...opener]);
  const actions = reading === null ? prompt.actions : null;
  const room = model.maxContext - ids.length;
  if (room < 1) throw chatContextError(model.maxContext, ids.length, null);
  const asked = req.max_completion_tokens ?? req.max_tokens;
  if (asked != null && asked > room) throw chatContextError(model.maxContext, ids.length, asked);
  const fallback = model.defaults.chatMaxTokens;
  const maxTokens = asked ?? (fallback === 'context' ? room : Math.min(fallback, room));
  const grammar = replyGrammar(ctx, req, reading);
  // A JSON reply is not one of the actions an observation lists.
  const listed = req.guided_choice ?? (grammar === null ? actions : null);
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
        { prompt: ids, actionChoices, grammar: grammar?.() ?? null, maxTokens, seed: choiceSeed(req.seed, i), topLogprobs, stop, stopTokenIds: model.stopTokenIds, key: `${id}/${i}` },
        model.tokens,
      ),
    ),
  );
  const stops = new Set(model.stopTokenIds);
  // Text the opener itself puts before the call (Qwen3's empty think block) is ours, not the model's content.
  const openerContent = reading === null || reading.opener === '' ? '' : reading.reader.read(reading.opener).content;
  const replies = choices.map((ch) => {
    if (reading === null) return null;
    let end = ch.tokens.length;
    while (end > 0 && stops.has(ch.tokens[end - 1] as number)) end--;
    const reply = reading.reader.read(reading.opener + model.tokens.decode(ch.tokens.subarray(0, end), true));
    return reply.kind === 'calls' && openerContent !== '' && reply.content === openerContent ? { ...reply, content: '' } : reply;
  });
  return { promptTokens: ids.length, choices, replies };
}

/** The assistant message of a choice: its text, or the calls it made (OpenAI's shape, 9-character ids). */
function messageOf(ch: GeneratedChoice, reply: ToolReply | null, callId: () => string) {
  if (reply === null || reply.kind !== 'calls') return { message: { role: 'assistant', content: ch.text, refusal: null }, finish: ch.finishReason };
  const toolCalls = reply.calls.map((c) => ({ id: c.id ?? callId(), type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } }));
  return { message: { role: 'assistant', content: reply.content === '' ? null : reply.content, refusal: null, tool_calls: toolCalls }, finish: 'tool_calls' as const };
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
    let calls = 0;
    const callId = () => `c${id.replace(/[^A-Za-z0-9]/g, '').slice(-5).padStart(5, '0')}${(calls++).toString(36).padStart(3, '0')}`;
    const messages = outcome.choices.map((ch, index) => messageOf(ch, outcome.replies[index] ?? null, callId));
    if (req.stream !== true) {
      return c.json({
        ...head,
        object: 'chat.completion',
        choices: outcome.choices.map((ch, index) => ({ index, message: messages[index]?.message, logprobs: logprobsOf(req, ch), finish_reason: messages[index]?.finish })),
        usage: usageOf(outcome),
      });
    }
    const chunk = (index: number, delta: Record<string, unknown>, logprobs: unknown, finish: string | null) =>
      JSON.stringify({ ...head, object: 'chat.completion.chunk', choices: [{ index, delta, logprobs, finish_reason: finish }] });
    return streamSSE(c, async (stream) => {
      for (const [index, ch] of outcome.choices.entries()) {
        await stream.writeSSE({ data: chunk(index, { role: 'assistant', content: '' }, null, null) });
        const called = messages[index]?.message;
        if (called !== undefined && 'tool_calls' in called && called.tool_calls !== undefined) {
          // A reply that made calls comes as its text, then its calls whole (one delta each).
          if (called.content !== null) await stream.writeSSE({ data: chunk(index, { content: called.content }, null, null) });
          await stream.writeSSE({ data: chunk(index, { tool_calls: called.tool_calls.map((t, k) => ({ index: k, ...t })) }, null, null) });
          await stream.writeSSE({ data: chunk(index, {}, null, 'tool_calls') });
          continue;
        }
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
