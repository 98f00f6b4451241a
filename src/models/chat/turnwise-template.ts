/**
 * The chat template of turnwise's own tokenizer: it reproduces the layout of
 * src/models/context.ts (`buildContext`, `history: 'full'`) exactly, so a checkpoint of a built-in
 * model can be prompted through transformers' `apply_chat_template`:
 *
 *     <|bos|> [<|system|> instruction] ( <|obs|> observation <|act|> action <|end|> )* <|obs|> observation <|act|>
 *
 * roles: system → `<|system|>`, user → `<|obs|>`, assistant → `<|act|>` … `<|end|>`; the generation
 * prompt is `<|act|>`. Written for turnwise (not taken from any model).
 */
import { SPECIAL_TOKENS } from '../tokenizer/contract.js';
import type { HfTokenizer } from '../tokenizer/hf-tokenizer.js';
import { generationConfigJson, tokenizerConfigJson } from './export.js';

/** The template text. */
export const TURNWISE_CHAT_TEMPLATE = [
  '{{- bos_token }}',
  '{%- for message in messages %}',
  "{%- if message.role == 'system' %}{{- '<|system|>' + message.content }}",
  "{%- elif message.role == 'user' %}{{- '<|obs|>' + message.content }}",
  "{%- elif message.role == 'assistant' %}{{- '<|act|>' + message.content + '<|end|>' }}",
  "{%- else %}{{- raise_exception('the turnwise layout has no role ' + message.role) }}",
  '{%- endif %}',
  '{%- endfor %}',
  "{%- if add_generation_prompt %}{{- '<|act|>' }}{%- endif %}",
].join('\n');

/** Special-token strings of turnwise's tokenizer as transformers names them. */
export const TURNWISE_SPECIAL_TOKENS = { bos_token: SPECIAL_TOKENS.bos, eos_token: SPECIAL_TOKENS.end, pad_token: SPECIAL_TOKENS.pad } as const;

/**
 * `tokenizer_config.json` and `generation_config.json` for a checkpoint of a built-in model
 * (`tokenizer` = turnwise's `tokenizer.json` loaded as an `HfTokenizer`).
 * @example const { tokenizerConfig, generationConfig } = turnwiseChatFiles(HfTokenizer.fromJSON(bpe.toJSON()), { modelMaxLength: 512, maxNewTokens: 8 });
 */
export function turnwiseChatFiles(tokenizer: HfTokenizer, options: { readonly modelMaxLength: number; readonly maxNewTokens?: number }): { tokenizerConfig: Record<string, unknown>; generationConfig: Record<string, unknown> } {
  const id = (token: string): number => tokenizer.idOf(token) as number;
  return {
    tokenizerConfig: tokenizerConfigJson({ tokenizer, chatTemplate: TURNWISE_CHAT_TEMPLATE, specialTokens: TURNWISE_SPECIAL_TOKENS, modelMaxLength: options.modelMaxLength }),
    generationConfig: generationConfigJson({ bosTokenId: id(SPECIAL_TOKENS.bos), eosTokenIds: [id(SPECIAL_TOKENS.end)], padTokenId: id(SPECIAL_TOKENS.pad), maxNewTokens: options.maxNewTokens }),
  };
}
