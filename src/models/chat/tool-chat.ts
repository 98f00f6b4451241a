/**
 * Token-in/token-out chat contexts for an agent that acts by calling tools: the environment's tools
 * go to the chat template as transformers passes them (`apply_chat_template(messages, tools=…)`),
 * the model's replies are read in its family's tool-call format (`tool-formats.ts`), and each
 * observation comes back as a `tool` message answering the call.
 *
 * Layout, `[tokens]` (as `context-builder.ts`, with every render given the tools):
 *
 *     head                            tok(render(system?, instruction, ack?, observation_0; tools; generation prompt))
 *     ( reply_k + end-of-turn? + separator
 *       result(observation_k+1) )     a tool message answering reply_k's call, when reply_k holds exactly
 *                                     one call; else the observation as a user message (a reply
 *                                     without a readable call gets the error as a user turn)
 *
 * `result(o)` is a token-level delta against a synthetic prefix ending with an assistant message
 * that makes the same call (so a template that writes the call's name into the result sees it),
 * computed as the plain builder computes observation deltas. Whether a reply holds a call is read
 * from its sampled ids, so a context stays a pure function of the episode's ids and texts.
 */
import { type ToolSpec, toolCallId } from '../../core/tools.js';
import type { AppendOnlyReport } from './append-only.js';
import { appendOnlyReport } from './append-only.js';
import { type ChatContextInput, type ChatContextOptions, ChatContextBuilder, type ChatTokenizer, requireTokenPrefix, startsWith } from './context-builder.js';
import { ChatTemplateError } from './errors.js';
import { headMessages } from './layout.js';
import type { ChatMessage, ChatTemplate, TemplateTool } from './template.js';
import { templateTools } from './template.js';
import { parseToolReply, type ReplyToolCall, type ToolCallFormat, type ToolReply } from './tool-formats.js';
import { LruCache } from '../tokenizer/lru.js';

/** How a tool-calling builder is made. */
export interface ToolChatOptions extends Omit<ChatContextOptions, 'tools'> {
  /** The environment's tools. */
  readonly tools: readonly ToolSpec[];
  /** The tool-call format of the model's replies; default: read from how the template writes a call. */
  readonly format?: ToolCallFormat;
}

/** A call with the id its result answers (the reply's own, or one given by turn). */
export interface IdentifiedToolCall extends ReplyToolCall {
  readonly id: string;
}

const PLACEHOLDER = { instruction: 'instruction', observation: 'observation' } as const;
const PROBE_CALL: IdentifiedToolCall = { name: 'probe_tool', arguments: { probe: 'probe value' }, id: 'probe0000' };

/** The assistant message of a reply with these calls (OpenAI's shape, as transformers takes it). */
export function toolCallMessage(calls: readonly IdentifiedToolCall[], content = ''): ChatMessage {
  return { role: 'assistant', content, tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })) };
}

/** The tool message answering `call` with `content`. */
export function toolResultMessage(call: IdentifiedToolCall, content: string): ChatMessage {
  return { role: 'tool', content, tool_call_id: call.id, name: call.name };
}

/**
 * Builds tool-calling chat contexts for one model (template + tokenizer), one layout and one set of
 * tools.
 * @example
 * const chat = ToolChatBuilder.create(template, tokenizer, { stopTokenIds, tools: env.tools() });
 * const reply = chat.reply(sampledIds); // { kind: 'calls', calls: [{ name: 'guess', arguments: { word: 'crane' } }], … }
 */
export class ToolChatBuilder {
  /** The tool-call format of the model's replies. */
  readonly format: ToolCallFormat;
  /** The plain builder (head, reply closing, user observations), rendering with the tools. */
  readonly chat: ChatContextBuilder;
  readonly tools: readonly ToolSpec[];
  /** Where a tool conversation (calls, results, a plain reply, a user message) is not append-only. */
  readonly appendOnly: AppendOnlyReport;
  private readonly template: ChatTemplate;
  private readonly tokenizer: ChatTokenizer;
  private readonly kwargs: Readonly<Record<string, unknown>>;
  private readonly templateTools: readonly TemplateTool[];
  private readonly head: ChatMessage[];
  private readonly generationPromptIds: Int32Array;
  private readonly results: LruCache<string, Int32Array>;
  private readonly callReplies = new LruCache<string, Int32Array>(4096);

  private constructor(template: ChatTemplate, tokenizer: ChatTokenizer, options: ToolChatOptions) {
    if (options.tools.length === 0) throw new ChatTemplateError(template.origin, 'tool calling needs at least one tool');
    this.template = template;
    this.tokenizer = tokenizer;
    this.tools = options.tools;
    this.kwargs = options.templateKwargs ?? {};
    this.templateTools = templateTools(options.tools);
    this.results = new LruCache(options.cacheSize ?? 4096);
    this.chat = ChatContextBuilder.create(template, tokenizer, { ...options, tools: this.templateTools });
    this.head = headMessages(options.layout ?? {}, PLACEHOLDER.instruction, PLACEHOLDER.observation);
    const withTools = template.render(this.head, { addGenerationPrompt: true, kwargs: this.kwargs, tools: this.templateTools });
    const without = template.render(this.head, { addGenerationPrompt: true, kwargs: this.kwargs });
    if (withTools === without) throw new ChatTemplateError(template.origin, 'the template ignores tools (rendering with and without them gives the same text)');
    this.generationPromptIds = this.tokens(this.head, true);
    this.format = options.format ?? this.detectFormat();
    const probe = this.parseIds(this.encodeToolReply([PROBE_CALL]));
    if (probe.kind !== 'calls' || probe.calls.length !== 1 || probe.calls[0].name !== PROBE_CALL.name || JSON.stringify(probe.calls[0].arguments) !== JSON.stringify(PROBE_CALL.arguments)) {
      const text = this.tokenizer.decode(this.encodeToolReply([PROBE_CALL]), { skipSpecialTokens: false });
      throw new ChatTemplateError(template.origin, `a call the template writes (${JSON.stringify(text)}) does not read back in the ${this.format} format`);
    }
    this.appendOnly = appendOnlyReport(template, this.probeConversation(), this.kwargs, this.templateTools, this.head.length);
  }

  /**
   * Makes a builder; throws {@link ChatTemplateError} when the template ignores tools, writes calls in
   * a format turnwise cannot read back, or cannot be extended turn by turn.
   * @example ToolChatBuilder.create(files.template, files.tokenizer, { stopTokenIds: files.stopTokenIds, tools })
   */
  static create(template: ChatTemplate, tokenizer: ChatTokenizer, options: ToolChatOptions): ToolChatBuilder {
    return new ToolChatBuilder(template, tokenizer, options);
  }

  /** The id that ends an assistant message. */
  get endOfTurnId(): number {
    return this.chat.endOfTurnId;
  }

  /**
   * The context ids the model generates after (layout in the module comment). Fresh array.
   * @example chat.context({ instruction, pastTurns: [{ observationText: obs0, actionTokens: sampled }], observationText: obs1 })
   */
  context(input: ChatContextInput): Int32Array {
    const parts: ArrayLike<number>[] = [this.chat.head(input.instruction, input.pastTurns[0]?.observationText ?? input.observationText)];
    input.pastTurns.forEach((turn, k) => {
      parts.push(this.chat.closeReply(turn.actionTokens).ids);
      const next = input.pastTurns[k + 1]?.observationText ?? input.observationText;
      const call = this.singleCall(turn.actionTokens, k);
      parts.push(call === null ? this.chat.observationDelta(next) : this.resultDelta(call, next));
    });
    let length = 0;
    for (const part of parts) length += part.length;
    const out = new Int32Array(length);
    let at = 0;
    for (const part of parts) {
      out.set(part, at);
      at += part.length;
    }
    return out;
  }

  /**
   * What a reply holds: text, calls, or a malformed call (with the error the agent is shown).
   * @example chat.reply(sampledIds)
   */
  reply(actionTokens: ArrayLike<number>): ToolReply {
    return this.parseIds(actionTokens);
  }

  /**
   * The reply's call when it holds exactly one, with the id its result answers (the reply's own, else
   * {@link toolCallId} of the turn); null otherwise.
   * @example chat.singleCall(sampledIds, 2) // { name: 'guess', arguments: { word: 'crane' }, id: 'call00002' }
   */
  singleCall(actionTokens: ArrayLike<number>, turn: number): IdentifiedToolCall | null {
    const reply = this.parseIds(actionTokens);
    if (reply.kind !== 'calls' || reply.calls.length !== 1) return null;
    const call = reply.calls[0];
    return { ...call, id: call.id ?? toolCallId(turn) };
  }

  /**
   * [tokens] the canonical ids of a reply making these calls after `content`, ending with the
   * end-of-turn id: what the template and tokenizer write for it after the generation prompt.
   * @example chat.encodeToolReply([{ name: 'guess', arguments: { word: 'crane' }, id: 'call00000' }])
   */
  encodeToolReply(calls: readonly IdentifiedToolCall[], content = ''): Int32Array {
    const key = JSON.stringify([calls, content]);
    let ids = this.callReplies.get(key);
    if (ids === undefined) {
      const full = this.tokens([...this.head, toolCallMessage(calls, content)], false);
      this.requirePrefix(this.generationPromptIds, full, 'the generation prompt is not how the template starts a tool-calling reply');
      const part = full.subarray(this.generationPromptIds.length);
      const separator = this.chat.turnSeparator;
      const end = part.length - separator.length - 1;
      if (end < 0 || part[end] !== this.endOfTurnId || !startsWith(part.subarray(end + 1), separator)) {
        throw new ChatTemplateError(this.template.origin, `a tool-calling reply does not end with the end-of-turn token and separator: '${this.tokenizer.decode(part)}'`);
      }
      ids = part.slice(0, end + 1);
      this.callReplies.set(key, ids);
    }
    return ids.slice();
  }

  /**
   * [tokens] the tool message answering `call` with `observation`, and the generation prompt, as the
   * template renders them after the call's reply and separator. Cached; fresh array.
   * @example chat.resultDelta(call, 'Feedback: c r a n e → ⬜🟨⬜⬜🟩')
   */
  resultDelta(call: IdentifiedToolCall, observation: string): Int32Array {
    const key = JSON.stringify([call.name, call.arguments, call.id, observation]);
    let delta = this.results.get(key);
    if (delta === undefined) {
      const before = [...this.head, toolCallMessage([call])];
      const prefix = this.tokens(before, false);
      const full = this.tokens([...before, toolResultMessage(call, observation)], true);
      delta = startsWith(full, prefix) ? full.slice(prefix.length) : this.anchoredDelta(prefix, full);
      this.results.set(key, delta);
    }
    return delta.slice();
  }

  /** The delta of a template that rewrites earlier text once a result follows: after as many end-of-turn ids (and the separator) as the prefix holds. */
  private anchoredDelta(prefix: Int32Array, full: Int32Array): Int32Array {
    let turns = 0;
    for (const id of prefix) if (id === this.endOfTurnId) turns++;
    let at = 0;
    for (let seen = 0; at < full.length && seen < turns; at++) if (full[at] === this.endOfTurnId) seen++;
    if (turns === 0 || at === full.length || !startsWith(full.subarray(at), this.chat.turnSeparator)) {
      this.requirePrefix(prefix, full, 'a tool result changes the tokens of the conversation before it');
    }
    return full.slice(at + this.chat.turnSeparator.length);
  }

  /** The format whose marker the template's rendering of a call holds. */
  private detectFormat(): ToolCallFormat {
    const text = this.tokenizer.decode(this.encodeToolReplyUnchecked(), { skipSpecialTokens: false });
    if (text.includes('<tool_call>')) return 'hermes';
    if (text.includes('[TOOL_CALLS]')) return 'mistral';
    if (text.replace('<|python_tag|>', '').trim().startsWith('{')) return 'llama3_json';
    throw new ChatTemplateError(this.template.origin, `the template writes a tool call as ${JSON.stringify(text.slice(0, 120))}, a format turnwise does not read (hermes <tool_call>, llama3_json, mistral [TOOL_CALLS])`);
  }

  /** The rendered probe reply after the generation prompt, as far as it goes (before the format is known). */
  private encodeToolReplyUnchecked(): Int32Array {
    const full = this.tokens([...this.head, toolCallMessage([PROBE_CALL])], false);
    this.requirePrefix(this.generationPromptIds, full, 'the generation prompt is not how the template starts a tool-calling reply');
    return full.slice(this.generationPromptIds.length);
  }

  private parseIds(ids: ArrayLike<number>): ToolReply {
    let end = ids.length;
    const stops = new Set(this.chat.stopTokenIds);
    while (end > 0 && stops.has(ids[end - 1])) end--;
    const body = Array.from({ length: end }, (_, i) => ids[i]);
    return parseToolReply(this.format, this.tokenizer.decode(body, { skipSpecialTokens: false }));
  }

  /** Calls and results, then a plain reply and a user message: what an episode of tool calls holds. */
  private probeConversation(): ChatMessage[] {
    const call = (k: number): IdentifiedToolCall => ({ ...PROBE_CALL, id: toolCallId(k) });
    return [
      ...this.head,
      toolCallMessage([call(0)]),
      toolResultMessage(call(0), 'probe result 0'),
      toolCallMessage([call(1)]),
      toolResultMessage(call(1), 'probe result 1'),
      { role: 'assistant', content: 'probe reply without a call' },
      { role: 'user', content: 'probe error' },
    ];
  }

  private tokens(messages: readonly ChatMessage[], addGenerationPrompt: boolean): Int32Array {
    return this.tokenizer.encode(this.template.render(messages, { addGenerationPrompt, kwargs: this.kwargs, tools: this.templateTools }));
  }

  private requirePrefix(prefix: Int32Array, full: Int32Array, what: string): void {
    requireTokenPrefix(prefix, full, { origin: this.template.origin, tokenizer: this.tokenizer, what: `cannot build tool contexts turn by turn: ${what}` });
  }
}
