/**
 * What the server needs from a loaded model, whichever folder it came from (a Hugging Face model
 * folder, a run or checkpoint of turnwise's own model, a run of a pretrained model): the policy
 * that generates, how chat messages become a prompt, the tokenizer as text, a scorer for prompt
 * log-probs, and the defaults of the sampling parameters.
 */
import type { Policy, TopLogprobs } from '../core/policy.js';
import type { ChatRequest } from './chat-request.js';
import type { RequestTool, ToolCallReader } from './chat-tools.js';
import type { TokenDecoder } from './token-text.js';

/** How chat messages become the ids a reply is generated after. */
export interface ChatPrompts {
  /** `template`: the model's chat template (as transformers' apply_chat_template); `episode`: turnwise's own episode layout. */
  readonly kind: 'template' | 'episode';
  /**
   * The prompt of a conversation, and the actions decoding is constrained to when the
   * conversation lists them (else null). Throws an `ApiError` naming the message at fault.
   */
  prompt(
    messages: ChatRequest['messages'],
    templateKwargs?: Readonly<Record<string, unknown>>,
    /** The request's tools, passed to the template as the client sent them (transformers' `tools=`). */
    tools?: readonly RequestTool[],
  ): { readonly ids: Int32Array; readonly actions: readonly string[] | null };
  /** Reads tool calls in replies (`chat-tools.ts`), or says why this model cannot take tools. */
  toolCalls(): ToolCallReader | string;
  /** Each action as the ids constrained decoding chooses among (ending with the policy's end id). Throws an `ApiError` when unavailable. */
  actionChoices(actions: readonly string[]): Int32Array[];
}

/** The model's log-probs of a prompt's own tokens, from one full forward pass. */
export interface PromptScores {
  /** [T - 1] log-prob of each token after the first, given the tokens before it (temperature 1). */
  readonly logprobs: Float32Array;
  /** The k most likely ids at each of those positions, or null when k = 0. */
  readonly top: TopLogprobs | null;
}

/** Scores prompts (the legacy completions' `echo` with `logprobs`). */
export interface PromptScorer {
  score(ids: Int32Array, topK: number): Promise<PromptScores>;
}

/** Defaults of parameters a request leaves out. */
export interface SamplingDefaults {
  readonly temperature: number;
  readonly topP: number;
  /** `max_tokens` of chat completions: a number, or `context` for what the context leaves (vLLM's default). */
  readonly chatMaxTokens: number | 'context';
}

/** A loaded model, ready to answer. */
export interface ServedModel {
  /** Model id clients send (`model`). */
  readonly id: string;
  readonly policy: Policy;
  /** Tokens of prompt plus completion the model accepts. */
  readonly maxContext: number;
  /** Token ids of the tokenizer ([0, vocabSize)). */
  readonly vocabSize: number;
  /** Ids that end a reply (eos / end-of-turn). */
  readonly stopTokenIds: readonly number[];
  /** The tokenizer as text (plus `encode` for text prompts). */
  readonly tokens: TokenDecoder & { encode(text: string): Int32Array };
  /** Chat messages to prompts, or null when the model has none (a base model without a chat template). */
  readonly chat: ChatPrompts | null;
  /** Why `chat` is null (shown to clients). */
  readonly chatUnavailable?: string;
  readonly scorer: PromptScorer;
  readonly defaults: SamplingDefaults;
  /** `GET /tokenizer_info` (tokenizer_config.json's fields, as vLLM answers). */
  readonly tokenizerInfo: Readonly<Record<string, unknown>>;
}
