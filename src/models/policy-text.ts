/**
 * The text side of a policy: how an episode becomes the ids the model conditions on, which ids end
 * a reply, how replies become the text an environment reads, and which tokenizer files travel with
 * the weights. Two layouts:
 * - `turnwise`: turnwise's own tokenizer and compact special-token layout (src/models/context.ts),
 *   for the small model trained from scratch;
 * - `chat`: a pretrained model's tokenizer and chat template (src/models/chat/), AgentGym's
 *   conversation — instruction and observations as user messages, free-text replies as assistant
 *   messages — built token-in/token-out turn by turn.
 *
 * The runtime sees only this interface, so episodes, samplers, the server and checkpoints do not
 * care which model they drive.
 */
import { InvalidArgumentError } from '../core/errors.js';
import { type ToolCall, type ToolSpec, toolCallId } from '../core/tools.js';
import { type ChatLayout, ChatContextBuilder, type ChatModelFileContents, generationConfigJson, parseChatModelFiles, turnwiseChatFiles } from './chat/index.js';
import { ChatTemplateBudgetError, ChatTemplateError } from './chat/errors.js';
import { ToolChatBuilder } from './chat/tool-chat.js';
import type { ToolCallFormat, ToolReply } from './chat/tool-formats.js';
import { buildContext, type ContextInput, type ContextPolicy, encodeActionChoices } from './context.js';
import type { ConfigTokenIds } from './hf/hf-config.js';
import { HfTokenizer } from './tokenizer/hf-tokenizer.js';
import { BpeTokenizer } from './tokenizer/index.js';

/** A file that travels with the weights (checkpoints, exports). */
export interface TextFile {
  readonly name: string;
  readonly data: string;
}

/** What rebuilds a {@link PolicyText} elsewhere (a NATS worker, a resumed run): plain JSON. */
export type PolicyTextManifest =
  | { readonly kind: 'turnwise'; readonly tokenizerJson: unknown; readonly context: ContextPolicy }
  | { readonly kind: 'chat'; readonly files: ChatModelFileContents; readonly chat: ChatTextOptions };

/** The chat layout and limits (config `context` + `model.maxContext` + `sampling.maxActionTokens`). */
export interface ChatTextOptions {
  readonly system: string | null;
  readonly acknowledge: string | null;
  /** Past turns kept: 'full' (AgentGym keeps the whole conversation) or the last k. */
  readonly history: 'full' | number;
  /** Largest context the model accepts (prompt + reply). */
  readonly maxContext: number;
  /** Most tokens of the interaction after the first prompt (AgentGym-RL's max_response_length). */
  readonly maxResponseTokens: number;
}

/**
 * The text side of acting through tools (a chat model whose template takes tools): contexts carry
 * the environment's tools and answer each call with a tool message (`src/models/chat/tool-chat.ts`);
 * replies are read in the model family's tool-call format.
 */
export interface ToolText {
  readonly format: ToolCallFormat;
  readonly tools: readonly ToolSpec[];
  /** The ids the policy conditions on this turn. */
  context(input: ContextInput): Int32Array;
  /** As {@link PolicyText.replyBudget}, for these contexts. */
  replyBudget(input: ContextInput, context: Int32Array): number;
  /** What a reply's ids hold: text, calls, or a malformed call. */
  reply(tokens: ArrayLike<number>): ToolReply;
  /** [tokens] the canonical ids of a reply making this one call, ending with the end-of-turn id (what the template writes; pretraining transcripts, tests). */
  encodeCall(call: ToolCall, turn: number): Int32Array;
}

/** Whether a policy text can act through tools, and if not, why. */
export type ToolTextResult = { readonly ok: true; readonly text: ToolText } | { readonly ok: false; readonly reason: string };

/** The text side of a policy (module comment). */
export interface PolicyText {
  readonly kind: 'turnwise' | 'chat';
  /** Token ids of the tokenizer (the model's vocabulary may be larger: padded embeddings). */
  readonly vocabSize: number;
  /** Ends every constrained action choice; free generation stops at it too. */
  readonly endTokenId: number;
  /** Every id that ends free generation (the end id included). */
  readonly stopTokenIds: readonly number[];
  /** bos / eos / pad ids for a `config.json`. */
  readonly tokenIds: ConfigTokenIds;
  /** The ids the policy conditions on this turn. */
  context(input: ContextInput): Int32Array;
  /** How many tokens this turn's reply may have given its context (Infinity: no budget); 0 ends the episode as truncated by length. */
  replyBudget(input: ContextInput, context: Int32Array): number;
  /** Each listed action as the ids constrained decoding chooses among (ending with {@link endTokenId}). */
  actionChoices(actions: readonly string[]): Int32Array[];
  /** The text the environment receives for a reply's ids (special tokens dropped). */
  actionText(tokens: ArrayLike<number>): string;
  /** Plain text of ids (special tokens kept when asked, for viewers). */
  decode(ids: ArrayLike<number>, keepSpecial?: boolean): string;
  /** Ids of plain text. */
  encode(text: string): Int32Array;
  /** tokenizer.json, tokenizer_config.json (with a chat template), generation_config.json (and the template file a model came with). */
  files(options: { readonly modelMaxLength: number; readonly maxNewTokens: number }): TextFile[];
  /** What rebuilds this elsewhere. */
  manifest(): PolicyTextManifest;
  /** The text side of acting through these tools, or why the model cannot (turnwise's own layout; a template that ignores tools). */
  toolText(tools: readonly ToolSpec[]): ToolTextResult;
}

/**
 * turnwise's own layout over its BPE tokenizer.
 * @example const text = turnwiseText(tokenizer, { history: 0, includeInstruction: false, maxContextTokens: 232 });
 */
export function turnwiseText(tokenizer: BpeTokenizer, context: ContextPolicy): PolicyText {
  const end = tokenizer.specialId('end');
  return {
    kind: 'turnwise',
    vocabSize: tokenizer.vocabSize,
    endTokenId: end,
    stopTokenIds: [end],
    tokenIds: { bos: tokenizer.specialId('bos'), eos: [end], pad: tokenizer.specialId('pad') },
    context: (input) => buildContext(tokenizer, input, context),
    // buildContext drops old turns until the reply fits (maxContextTokens leaves room for it).
    replyBudget: () => Number.POSITIVE_INFINITY,
    actionChoices: (actions) => encodeActionChoices(tokenizer, actions),
    actionText: (tokens) => tokenizer.decode(tokens),
    decode: (ids, keepSpecial) => tokenizer.decode(ids, keepSpecial),
    encode: (text) => tokenizer.encode(text),
    files: ({ modelMaxLength, maxNewTokens }) => {
      const json = tokenizer.toJSON();
      const { tokenizerConfig, generationConfig } = turnwiseChatFiles(HfTokenizer.fromJSON(json), { modelMaxLength, maxNewTokens });
      return [
        { name: 'tokenizer.json', data: JSON.stringify(json) },
        { name: 'tokenizer_config.json', data: `${JSON.stringify(tokenizerConfig, null, 2)}\n` },
        { name: 'generation_config.json', data: `${JSON.stringify(generationConfig, null, 2)}\n` },
      ];
    },
    manifest: () => ({ kind: 'turnwise', tokenizerJson: tokenizer.toJSON(), context }),
    toolText: () => ({ ok: false, reason: "turnwise's own model has no chat template to pass tools to" }),
  };
}

/**
 * A pretrained model's chat template and tokenizer (the folder's files, already parsed).
 * @throws InvalidArgumentError when the model has no chat template (a base model), naming the fix.
 * @example const text = chatText(await readChatFileContents('models/SmolLM2-135M-Instruct'), options);
 */
export function chatText(contents: ChatModelFileContents, options: ChatTextOptions, source = 'the model folder'): PolicyText {
  const files = parseChatModelFiles(contents, { folder: source });
  if (files.template === undefined) {
    throw new InvalidArgumentError('context.format', `${source} has no chat template (tokenizer_config.json chat_template or chat_template.jinja): a base model; use an instruct model, or add a template file`);
  }
  const layout: ChatLayout = { system: options.system, acknowledgement: options.acknowledge };
  const builder = ChatContextBuilder.create(files.template, files.tokenizer, { layout, stopTokenIds: files.stopTokenIds });
  const kept = (input: ContextInput): ContextInput => {
    const { history } = options;
    if (history === 'full' || input.pastTurns.length <= history) return input;
    return { ...input, pastTurns: input.pastTurns.slice(input.pastTurns.length - history) };
  };
  const budget = (input: ContextInput, context: Int32Array, head: (k: ContextInput) => Int32Array): number => {
    const length = head(kept(input)).length;
    return Math.max(0, Math.min(options.maxContext - context.length, options.maxResponseTokens - (context.length - length)));
  };
  const toolTexts = new Map<string, ToolTextResult>();
  const template = files.template;
  const toolText = (tools: readonly ToolSpec[]): ToolTextResult => {
    const key = JSON.stringify(tools);
    let result = toolTexts.get(key);
    if (result === undefined) {
      try {
        const tool = ToolChatBuilder.create(template, files.tokenizer, { layout, stopTokenIds: files.stopTokenIds, tools });
        result = {
          ok: true,
          text: {
            format: tool.format,
            tools,
            context: (input) => tool.context(kept(input)),
            replyBudget: (input, context) => budget(input, context, (k) => tool.chat.head(k.instruction, k.pastTurns[0]?.observationText ?? k.observationText)),
            reply: (tokens) => tool.reply(tokens),
            encodeCall: (call, turn) => tool.encodeToolReply([{ name: call.name, arguments: call.arguments, id: toolCallId(turn) }]),
          },
        };
      } catch (error) {
        // A template over its render budget is refused outright, not run without tools.
        if (!(error instanceof ChatTemplateError) || error instanceof ChatTemplateBudgetError) throw error;
        result = { ok: false, reason: error.message };
      }
      toolTexts.set(key, result);
    }
    return result;
  };
  return {
    kind: 'chat',
    vocabSize: files.tokenizer.vocabSize,
    endTokenId: builder.endOfTurnId,
    stopTokenIds: builder.stopTokenIds,
    tokenIds: { bos: files.bosTokenId ?? null, eos: [...files.stopTokenIds], pad: files.padTokenId ?? null },
    context: (input) => builder.context(kept(input)),
    replyBudget: (input, context) => budget(input, context, (k) => builder.head(k.instruction, k.pastTurns[0]?.observationText ?? k.observationText)),
    actionChoices: (actions) => builder.actionChoices(actions),
    actionText: (tokens) => builder.replyText(tokens),
    decode: (ids, keepSpecial) => files.tokenizer.decode(ids, { skipSpecialTokens: keepSpecial !== true }),
    encode: (text) => files.tokenizer.encode(text),
    files: ({ maxNewTokens }) => {
      const out: TextFile[] = [{ name: 'tokenizer.json', data: JSON.stringify(contents.tokenizerJson) }];
      if (contents.tokenizerConfig !== undefined) out.push({ name: 'tokenizer_config.json', data: `${JSON.stringify(contents.tokenizerConfig, null, 2)}\n` });
      if (contents.chatTemplateJinja !== undefined) out.push({ name: 'chat_template.jinja', data: contents.chatTemplateJinja });
      const generation =
        contents.generationConfig ??
        generationConfigJson({ bosTokenId: files.bosTokenId, eosTokenIds: files.stopTokenIds, padTokenId: files.padTokenId, maxNewTokens });
      out.push({ name: 'generation_config.json', data: `${JSON.stringify(generation, null, 2)}\n` });
      return out;
    },
    manifest: () => ({ kind: 'chat', files: contents, chat: options }),
    toolText,
  };
}

/**
 * Rebuilds a text side from its manifest.
 * @example const text = policyTextFromManifest(manifest);
 */
export function policyTextFromManifest(manifest: PolicyTextManifest): PolicyText {
  if (manifest.kind === 'turnwise') return turnwiseText(BpeTokenizer.fromJSON(manifest.tokenizerJson), manifest.context);
  return chatText(manifest.files, manifest.chat);
}
