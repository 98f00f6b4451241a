/**
 * Token-in/token-out chat contexts ("continuous tokens"): the exact ids a chat model generates
 * after at each turn of an episode, built from the ids it sampled before, never re-tokenized.
 *
 * Layout, `[tokens]`, with `render` = the model's chat template and `tok` = its tokenizer:
 *
 *     head                       tok(render(system?, instruction, ack?, observation_0; generation prompt))
 *     ( reply_k                  the sampled ids verbatim; + end-of-turn if the reply did not end with it
 *       separator                what the template writes after end-of-turn (ChatML: "\n")
 *       delta(observation_k+1) ) the next user message + generation prompt, as the template renders it
 *
 * `delta(o)` is computed at the token level against a fixed synthetic prefix P (the layout's head with
 * placeholder texts, then a placeholder reply): `tok(render(P + [user o], gen)) − tok(render(P))`,
 * after checking that the second is a prefix of the first. Segments join at special tokens, so the
 * delta does not depend on what came before.
 *
 * The separator is the trap verl hit (issue #6501, fixed in PR #6921): the model stops at
 * `<|im_end|>` and never generates the "\n" ChatML writes after it; a builder that appends the next
 * user message right after the sampled ids drops that newline at every boundary, and the model then
 * sees contexts it was never trained on. Here it is appended explicitly.
 *
 * Consistency: `context(turn k+1)` starts with `context(turn k) + reply_k` (KV caches and packed
 * training chain turns). For an append-only template and replies whose ids are their canonical
 * encoding (`encodeReply`), `context` equals `tok(render(all messages, gen))` exactly; where the
 * template rewrites earlier replies (Qwen3 drops their reasoning), the context keeps what the model
 * generated and `appendOnly` says where the template differs.
 */
import { ChatTemplateError } from './errors.js';
import type { ChatLayout } from './layout.js';
import { headMessages } from './layout.js';
import type { ChatMessage, ChatTemplate, TemplateTool } from './template.js';
import { LruCache } from '../tokenizer/lru.js';
import { type AppendOnlyReport, probeAppendOnly } from './append-only.js';

/** What the builder needs from a tokenizer (`HfTokenizer` fits). */
export interface ChatTokenizer {
  readonly vocabSize: number;
  /** Ids of text, special-token strings recognised (transformers' `add_special_tokens=False`). */
  encode(text: string): Int32Array;
  decode(ids: ArrayLike<number>, options?: { readonly skipSpecialTokens?: boolean }): string;
}

/** One completed turn. */
export interface ChatPastTurn {
  /** The observation the agent answered. */
  readonly observationText: string;
  /** [tokens] the ids the sampler produced, verbatim (normally ending with the end-of-turn id). */
  readonly actionTokens: Int32Array;
}

/** The episode so far. */
export interface ChatContextInput {
  readonly instruction: string;
  readonly pastTurns: readonly ChatPastTurn[];
  /** The observation the agent answers now. */
  readonly observationText: string;
}

/** A reply closed for the context: the sampled ids plus what the builder had to add. */
export interface ClosedReply {
  /** [tokens] sampled ids, then the end-of-turn id if missing, then the separator. */
  readonly ids: Int32Array;
  /** How many ids at the end were added, not sampled (the end-of-turn id and the separator): never trained on. */
  readonly forced: number;
}

/** How a builder is made. */
export interface ChatContextOptions {
  /** Messages before the first reply (system, acknowledgement). */
  readonly layout?: ChatLayout;
  /** Ids that end generation (eos ids of the model files). The end-of-turn id is found among them. */
  readonly stopTokenIds: readonly number[];
  /** Extra template variables for every render (`enable_thinking`, `date_string`, …). */
  readonly templateKwargs?: Readonly<Record<string, unknown>>;
  /** Observations remembered with their delta ids. Default 4096. */
  readonly cacheSize?: number;
  /**
   * Tools passed to every render (transformers' `tools=`), so that the head carries the template's
   * tool prompt; replies and observations stay plain messages here (tool turns: `ToolChatBuilder`).
   */
  readonly tools?: readonly TemplateTool[] | null;
}

// Placeholder texts of the synthetic prefix: plain words, so they never touch special tokens.
const PLACEHOLDER = { instruction: 'instruction', observation: 'observation', reply: 'reply' } as const;

/**
 * Builds chat contexts for one model (template + tokenizer) and one layout.
 * @example
 * const chat = ChatContextBuilder.create(template, tokenizer, { stopTokenIds: [imEnd, endOfText] });
 * const ids = chat.context({ instruction, pastTurns: [{ observationText: obs0, actionTokens: sampled }], observationText: obs1 });
 */
export class ChatContextBuilder {
  /** The id that ends an assistant message in this template (ChatML `<|im_end|>`, Llama 3 `<|eot_id|>`). */
  readonly endOfTurnId: number;
  /** [tokens] what the template writes after the end-of-turn id (ChatML: the ids of "\n"; often none). */
  readonly turnSeparator: Int32Array;
  /** Ids that end a generated turn: the model's stop ids and the end-of-turn id. */
  readonly stopTokenIds: readonly number[];
  /** Where the template is not append-only (probe renders at creation). */
  readonly appendOnly: AppendOnlyReport;
  private readonly template: ChatTemplate;
  private readonly tokenizer: ChatTokenizer;
  private readonly layout: ChatLayout;
  private readonly kwargs: Readonly<Record<string, unknown>>;
  private readonly tools: readonly TemplateTool[] | null;
  /** Synthetic prefix ending with a reply (for observation deltas) and its ids. */
  private readonly afterReply: { messages: ChatMessage[]; ids: Int32Array };
  /** Synthetic prefix ending with the generation prompt (for reply encodings) and its ids. */
  private readonly beforeReply: { messages: ChatMessage[]; ids: Int32Array };
  private readonly deltas: LruCache<string, Int32Array>;
  private readonly replies = new LruCache<string, Int32Array>(8192);
  private readonly heads = new LruCache<string, Int32Array>(256);

  private constructor(template: ChatTemplate, tokenizer: ChatTokenizer, options: ChatContextOptions) {
    this.template = template;
    this.tokenizer = tokenizer;
    this.layout = options.layout ?? {};
    this.kwargs = options.templateKwargs ?? {};
    this.tools = options.tools ?? null;
    this.deltas = new LruCache(options.cacheSize ?? 4096);
    const head = headMessages(this.layout, PLACEHOLDER.instruction, PLACEHOLDER.observation);
    this.beforeReply = { messages: head, ids: this.tokens(head, true) };
    const withReply = [...head, { role: 'assistant', content: PLACEHOLDER.reply }];
    const replyIds = this.tokens(withReply, false);
    this.afterReply = { messages: withReply, ids: replyIds };
    this.requirePrefix(this.beforeReply.ids, replyIds, 'the generation prompt is not how the template starts an assistant message');
    // The end-of-turn id is the last stop id in the rendered reply; what follows it is the separator.
    const part = replyIds.subarray(this.beforeReply.ids.length);
    const stops = new Set(options.stopTokenIds);
    let end = -1;
    for (let i = part.length - 1; i >= 0 && end < 0; i--) if (stops.has(part[i])) end = i;
    if (end < 0) {
      throw new ChatTemplateError(template.origin, `an assistant message does not end with any stop token [${[...stops].join(', ')}]: rendered '${tokenizer.decode(part)}'`);
    }
    this.endOfTurnId = part[end];
    this.turnSeparator = part.slice(end + 1);
    this.stopTokenIds = [...stops];
    this.appendOnly = probeAppendOnly(template, this.layout, this.kwargs, this.tools);
  }

  /**
   * Makes a builder; renders a few synthetic conversations to find the end-of-turn id, the separator
   * and whether the template is append-only. Throws {@link ChatTemplateError} when the template
   * cannot be extended turn by turn (its generation prompt or earlier tokens change).
   * @example ChatContextBuilder.create(files.template, files.tokenizer, { stopTokenIds: files.stopTokenIds })
   */
  static create(template: ChatTemplate, tokenizer: ChatTokenizer, options: ChatContextOptions): ChatContextBuilder {
    return new ChatContextBuilder(template, tokenizer, options);
  }

  /**
   * The context ids the model generates after (layout in the module comment). Fresh array.
   * @example chat.context({ instruction, pastTurns: [], observationText: firstObservation })
   */
  context(input: ChatContextInput): Int32Array {
    const parts: ArrayLike<number>[] = [this.head(input.instruction, input.pastTurns[0]?.observationText ?? input.observationText)];
    input.pastTurns.forEach((turn, k) => {
      parts.push(this.closeReply(turn.actionTokens).ids);
      parts.push(this.observationDelta(input.pastTurns[k + 1]?.observationText ?? input.observationText));
    });
    return concat(parts);
  }

  /**
   * The first context of an episode: the head messages rendered with the generation prompt.
   * @example chat.head(instruction, firstObservation)
   */
  head(instruction: string, firstObservation: string): Int32Array {
    const key = JSON.stringify([instruction, firstObservation]);
    let ids = this.heads.get(key);
    if (ids === undefined) {
      ids = this.tokens(headMessages(this.layout, instruction, firstObservation), true);
      this.heads.set(key, ids);
    }
    return ids.slice();
  }

  /**
   * What follows a reply in the next context: the sampled ids, the end-of-turn id when the reply
   * did not end with it (cut at the per-turn token limit, or stopped on another stop id), the
   * separator. The added ids are counted in `forced`: they are context, not trained on.
   * @example chat.closeReply(Int32Array.of(...ids('go left'))) // { ids: [...ids, <|im_end|>, "\n"], forced: 2 }
   */
  closeReply(actionTokens: Int32Array): ClosedReply {
    const closed = actionTokens.length > 0 && actionTokens[actionTokens.length - 1] === this.endOfTurnId;
    const end = closed ? [] : [this.endOfTurnId];
    return { ids: concat([actionTokens, end, this.turnSeparator]), forced: end.length + this.turnSeparator.length };
  }

  /**
   * [tokens] the user message of `observation` and the generation prompt, as the template renders
   * them after a reply's separator. Cached; fresh array.
   * @example chat.observationDelta('You see a wall.') // ChatML: <|im_start|>user\nYou see a wall.<|im_end|>\n<|im_start|>assistant\n
   */
  observationDelta(observation: string): Int32Array {
    let delta = this.deltas.get(observation);
    if (delta === undefined) {
      const full = this.tokens([...this.afterReply.messages, { role: 'user', content: observation }], true);
      delta = startsWith(full, this.afterReply.ids) ? full.slice(this.afterReply.ids.length) : this.anchoredDelta(full);
      this.deltas.set(observation, delta);
    }
    return delta.slice();
  }

  /**
   * [tokens] the canonical ids of an assistant reply with this text, ending with the end-of-turn id
   * (no separator): what the template + tokenizer write for it after the generation prompt.
   * @example chat.encodeReply('Thought: …\n\nAction: turn left') // [...ids, <|im_end|>]
   */
  encodeReply(text: string): Int32Array {
    let ids = this.replies.get(text);
    if (ids === undefined) {
      const full = this.tokens([...this.beforeReply.messages, { role: 'assistant', content: text }], false);
      this.requirePrefix(this.beforeReply.ids, full, 'the generation prompt is not how the template starts an assistant message');
      const part = full.subarray(this.beforeReply.ids.length);
      const end = part.length - this.turnSeparator.length - 1;
      if (end < 0 || part[end] !== this.endOfTurnId || !startsWith(part.subarray(end + 1), this.turnSeparator)) {
        throw new ChatTemplateError(this.template.origin, `the reply ${JSON.stringify(text.slice(0, 60))} does not end with the end-of-turn token and separator`);
      }
      ids = part.slice(0, end + 1);
      this.replies.set(text, ids);
    }
    return ids.slice();
  }

  /**
   * Each action's canonical reply ids (ending with the end-of-turn id): the sequences constrained
   * decoding over listed actions chooses among with a chat model.
   * @example chat.actionChoices(['turn left', 'go to red ball 1'])
   */
  actionChoices(actions: readonly string[]): Int32Array[] {
    return actions.map((action) => this.encodeReply(action));
  }

  /**
   * The reply as text for the environment (special tokens dropped, as transformers'
   * `decode(ids, skip_special_tokens=True)`).
   * @example chat.replyText(sampledIds) // 'Thought: …\n\nAction: turn left'
   */
  replyText(actionTokens: ArrayLike<number>): string {
    return this.tokenizer.decode(actionTokens, { skipSpecialTokens: true });
  }

  /**
   * The delta of a template that rewrites the reply once a user message follows (Qwen3): it starts
   * after as many end-of-turn ids (and the separator) as the synthetic prefix holds, which is where
   * the template's own rendering of the new user message starts.
   */
  private anchoredDelta(full: Int32Array): Int32Array {
    let turns = 0;
    for (const id of this.afterReply.ids) if (id === this.endOfTurnId) turns++;
    let at = 0;
    for (let seen = 0; at < full.length && seen < turns; at++) if (full[at] === this.endOfTurnId) seen++;
    if (turns === 0 || at === full.length || !startsWith(full.subarray(at), this.turnSeparator)) {
      this.requirePrefix(this.afterReply.ids, full, 'a new user message changes the tokens of the conversation before it');
    }
    return full.slice(at + this.turnSeparator.length);
  }

  private tokens(messages: readonly ChatMessage[], addGenerationPrompt: boolean): Int32Array {
    return this.tokenizer.encode(this.template.render(messages, { addGenerationPrompt, kwargs: this.kwargs, tools: this.tools }));
  }

  private requirePrefix(prefix: Int32Array, full: Int32Array, what: string): void {
    requireTokenPrefix(prefix, full, { origin: this.template.origin, tokenizer: this.tokenizer, what: `cannot build contexts turn by turn: ${what}` });
  }
}

/**
 * Throws {@link ChatTemplateError} unless `full` starts with `prefix`, naming `what` broke and the
 * first token where the two renderings part.
 */
export function requireTokenPrefix(prefix: Int32Array, full: Int32Array, at: { origin: string; tokenizer: ChatTokenizer; what: string }): void {
  if (startsWith(full, prefix)) return;
  let i = 0;
  while (i < prefix.length && prefix[i] === full[i]) i++;
  throw new ChatTemplateError(at.origin, `${at.what} (token ${i}: '${at.tokenizer.decode(prefix.subarray(i, i + 8))}' became '${at.tokenizer.decode(full.subarray(i, i + 8))}')`);
}

/** Whether `ids` starts with `prefix`. */
export function startsWith(ids: ArrayLike<number>, prefix: ArrayLike<number>): boolean {
  if (prefix.length > ids.length) return false;
  for (let i = 0; i < prefix.length; i++) if (ids[i] !== prefix[i]) return false;
  return true;
}

function concat(parts: readonly ArrayLike<number>[]): Int32Array {
  const out = new Int32Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
