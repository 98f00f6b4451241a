/**
 * Writers of the tokenizer-side files of an exported checkpoint, so that transformers'
 * `AutoTokenizer.from_pretrained` + `apply_chat_template` + `generate` work on it:
 * `tokenizer_config.json` (special tokens, `added_tokens_decoder`, chat template, model_max_length,
 * tokenizer_class) and `generation_config.json` (bos/eos/pad ids, sampling defaults). Pure: they
 * return objects; the checkpoint writer serialises them beside `tokenizer.json`.
 *
 * `tokenizer_class`: `PreTrainedTokenizerFast` unless the model came with its own. transformers 5
 * rebuilds the pipeline of classes with their own constructor (`LlamaTokenizer`, `GPT2Tokenizer`,
 * `Qwen2Tokenizer`) from the vocabulary and merges alone, so for a tokenizer whose pre-tokenizer is
 * not that class's (turnwise's own) only the generic class keeps `tokenizer.json` as written.
 */
import { InvalidArgumentError } from '../../core/errors.js';
import type { HfTokenizer } from '../tokenizer/hf-tokenizer.js';
import type { TemplateSpecialToken } from './template.js';

/** What `tokenizer_config.json` is written from. */
export interface TokenizerConfigInput {
  readonly tokenizer: HfTokenizer;
  /** The chat template text (omitted from the file when undefined). */
  readonly chatTemplate?: string;
  /** Special-token strings; each must be a token of the tokenizer. */
  readonly specialTokens: Readonly<Partial<Record<TemplateSpecialToken, string>>>;
  /** Longest sequence the model was trained for (its context length). */
  readonly modelMaxLength: number;
  /** The model's own `tokenizer_class`, kept; default `PreTrainedTokenizerFast`. */
  readonly tokenizerClass?: string;
}

/**
 * The `tokenizer_config.json` object.
 * @example writeFileSync('tokenizer_config.json', JSON.stringify(tokenizerConfigJson({ tokenizer, specialTokens, modelMaxLength: 512, chatTemplate }), null, 2));
 */
export function tokenizerConfigJson(input: TokenizerConfigInput): Record<string, unknown> {
  const { tokenizer } = input;
  for (const [name, token] of Object.entries(input.specialTokens)) {
    if (token !== undefined && tokenizer.idOf(token) === undefined) throw InvalidArgumentError.format(`specialTokens.${name}`, `'${token}' is not a token of the tokenizer`);
  }
  const raw = (tokenizer.toJSON() as { added_tokens?: Record<string, unknown>[] }).added_tokens ?? [];
  const decoder: Record<string, unknown> = {};
  for (const t of [...raw].sort((a, b) => Number(a.id) - Number(b.id))) {
    decoder[String(t.id)] = {
      content: t.content,
      lstrip: t.lstrip ?? false,
      normalized: t.normalized ?? !(t.special ?? false),
      rstrip: t.rstrip ?? false,
      single_word: t.single_word ?? false,
      special: t.special ?? false,
    };
  }
  return {
    added_tokens_decoder: decoder,
    bos_token: input.specialTokens.bos_token ?? null,
    eos_token: input.specialTokens.eos_token ?? null,
    pad_token: input.specialTokens.pad_token ?? null,
    unk_token: input.specialTokens.unk_token ?? null,
    ...(input.chatTemplate === undefined ? {} : { chat_template: input.chatTemplate }),
    clean_up_tokenization_spaces: false,
    model_max_length: input.modelMaxLength,
    tokenizer_class: input.tokenizerClass ?? 'PreTrainedTokenizerFast',
  };
}

/** What `generation_config.json` is written from. */
export interface GenerationConfigInput {
  readonly bosTokenId?: number;
  /** Every id that ends generation (written as a list when more than one). */
  readonly eosTokenIds: readonly number[];
  readonly padTokenId?: number;
  /** Sampling defaults of `generate` (omitted: greedy). */
  readonly sampling?: { readonly temperature?: number; readonly topP?: number; readonly topK?: number };
  /** Default `max_new_tokens` (the per-turn limit the model was trained with). */
  readonly maxNewTokens?: number;
}

/**
 * The `generation_config.json` object.
 * @example generationConfigJson({ bosTokenId: 1, eosTokenIds: [5], padTokenId: 0, maxNewTokens: 64 })
 */
export function generationConfigJson(input: GenerationConfigInput): Record<string, unknown> {
  if (input.eosTokenIds.length === 0) throw InvalidArgumentError.format('eosTokenIds', 'at least one id is needed, or generate never stops');
  const eos = input.eosTokenIds.length === 1 ? input.eosTokenIds[0] : [...input.eosTokenIds];
  const sampling = input.sampling;
  return {
    ...(input.bosTokenId === undefined ? {} : { bos_token_id: input.bosTokenId }),
    eos_token_id: eos,
    ...(input.padTokenId === undefined ? {} : { pad_token_id: input.padTokenId }),
    do_sample: sampling !== undefined,
    ...(sampling?.temperature === undefined ? {} : { temperature: sampling.temperature }),
    ...(sampling?.topP === undefined ? {} : { top_p: sampling.topP }),
    ...(sampling?.topK === undefined ? {} : { top_k: sampling.topK }),
    ...(input.maxNewTokens === undefined ? {} : { max_new_tokens: input.maxNewTokens }),
  };
}
