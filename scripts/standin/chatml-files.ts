/**
 * The tokenizer side of the stand-in "pretrained" agent: turnwise's byte-level BPE (trained on the
 * transcripts) dressed as a ChatML instruct model, as Qwen2.5 and SmolLM2 lay theirs out —
 * `<|endoftext|>` (pad), `<|im_start|>`, `<|im_end|>` (end of turn) as special added tokens, a
 * `tokenizer_config.json` with a plain ChatML chat template and a `generation_config.json` that
 * stops at `<|im_end|>`. Pure: the writer serialises what these return.
 */
import { generationConfigJson, tokenizerConfigJson } from '../../src/models/chat/export.js';
import type { BpeTokenizer } from '../../src/models/tokenizer/bpe.js';
import { HfTokenizer } from '../../src/models/tokenizer/hf-tokenizer.js';
import { SPECIAL_TOKEN_LIST } from '../../src/models/tokenizer/tables.js';

/**
 * ChatML without a default system message (the layout transformers documents for ChatML models):
 * `<|im_start|>{role}\n{content}<|im_end|>\n` per message, `<|im_start|>assistant\n` as the
 * generation prompt.
 */
export const CHATML_TEMPLATE = [
  '{%- for message in messages %}',
  "{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}",
  '{%- endfor %}',
  "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}",
].join('\n');

/**
 * ChatML with Qwen2.5's tool format (`hermes`) and no default system message: with tools, a system
 * message lists them as JSON inside `<tools></tools>` and asks for `<tool_call>` JSON; a reply's
 * calls follow its text; tool results are `<tool_response>` blocks in a user message. Without tools
 * it renders exactly as {@link CHATML_TEMPLATE}.
 */
export const CHATML_TOOLS_TEMPLATE = [
  '{%- if tools %}',
  "{{- '<|im_start|>system\\n' }}",
  "{%- if messages[0].role == 'system' %}{{- messages[0].content + '\\n\\n' }}{%- endif %}",
  "{{- '# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\nYou are provided with function signatures within <tools></tools> XML tags:\\n<tools>' }}",
  "{%- for tool in tools %}{{- '\\n' + tool | tojson }}{%- endfor %}",
  '{{- \'\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\\n<tool_call>\\n{"name": <function-name>, "arguments": <args-json-object>}\\n</tool_call><|im_end|>\\n\' }}',
  '{%- endif %}',
  '{%- for message in messages %}',
  "{%- if message.role == 'system' and tools and loop.first %}",
  "{%- elif message.role == 'assistant' and message.tool_calls %}",
  "{{- '<|im_start|>assistant' }}{%- if message.content %}{{- '\\n' + message.content }}{%- endif %}",
  '{%- for call in message.tool_calls %}',
  '{%- if call.function is defined %}{%- set call = call.function %}{%- endif %}',
  '{{- \'\\n<tool_call>\\n{"name": "\' + call.name + \'", "arguments": \' + call.arguments | tojson + \'}\\n</tool_call>\' }}',
  '{%- endfor %}',
  "{{- '<|im_end|>\\n' }}",
  "{%- elif message.role == 'tool' %}",
  "{%- if loop.first or messages[loop.index0 - 1].role != 'tool' %}{{- '<|im_start|>user' }}{%- endif %}",
  "{{- '\\n<tool_response>\\n' + message.content + '\\n</tool_response>' }}",
  "{%- if loop.last or messages[loop.index0 + 1].role != 'tool' %}{{- '<|im_end|>\\n' }}{%- endif %}",
  '{%- else %}',
  "{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}",
  '{%- endif %}',
  '{%- endfor %}',
  "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}",
].join('\n');

/**
 * The special-token strings at ids 0..5 of the stand-in's tokenizer (turnwise's BPE keeps six
 * special ids first; the three ChatML does not use are reserved).
 */
export const CHATML_SPECIALS = ['<|endoftext|>', '<|im_start|>', '<|im_end|>', '<|reserved_0|>', '<|reserved_1|>', '<|reserved_2|>'] as const;

/** Ids of the ChatML tokens in {@link CHATML_SPECIALS}. */
export const CHATML_IDS = { pad: 0, imStart: 1, imEnd: 2 } as const;

/** Words every ChatML conversation holds outside the messages (for the BPE corpus). */
export const CHATML_ROLE_WORDS = ['system\n', 'user\n', 'assistant\n'] as const;

/**
 * `tokenizer.json` of `bpe` with turnwise's six special tokens renamed to {@link CHATML_SPECIALS}
 * (same ids; merges only name byte tokens, so they are unchanged).
 * @example const json = chatmlTokenizerJson(trainBpe(corpus, { vocabSize: 768 }));
 */
export function chatmlTokenizerJson(bpe: BpeTokenizer): Record<string, unknown> {
  const json = structuredClone(bpe.toJSON()) as { added_tokens: { id: number; content: string }[]; model: { vocab: Record<string, number> } };
  const vocab: Record<string, number> = {};
  const renamed = new Map<string, string>(SPECIAL_TOKEN_LIST.map((name, id) => [name, CHATML_SPECIALS[id] as string]));
  for (const [name, id] of Object.entries(json.model.vocab)) vocab[renamed.get(name) ?? name] = id;
  json.model.vocab = vocab;
  for (const token of json.added_tokens) token.content = CHATML_SPECIALS[token.id] ?? token.content;
  return json as unknown as Record<string, unknown>;
}

/** The three tokenizer-side files of a ChatML model folder, as JSON objects. */
export interface ChatmlFiles {
  readonly tokenizerJson: Record<string, unknown>;
  readonly tokenizerConfig: Record<string, unknown>;
  readonly generationConfig: Record<string, unknown>;
}

/**
 * The tokenizer-side files of the stand-in model folder; `tools`: a template that takes tools
 * ({@link CHATML_TOOLS_TEMPLATE}).
 * @example const files = chatmlFiles(bpe, { modelMaxLength: 1024, maxNewTokens: 48 });
 */
export function chatmlFiles(bpe: BpeTokenizer, options: { readonly modelMaxLength: number; readonly maxNewTokens: number; readonly tools?: boolean }): ChatmlFiles {
  const tokenizerJson = chatmlTokenizerJson(bpe);
  const tokenizer = HfTokenizer.fromJSON(tokenizerJson);
  const tokenizerConfig = tokenizerConfigJson({
    tokenizer,
    chatTemplate: options.tools === true ? CHATML_TOOLS_TEMPLATE : CHATML_TEMPLATE,
    specialTokens: { eos_token: '<|im_end|>', pad_token: '<|endoftext|>' },
    modelMaxLength: options.modelMaxLength,
  });
  const generationConfig = generationConfigJson({ eosTokenIds: [CHATML_IDS.imEnd, CHATML_IDS.pad], padTokenId: CHATML_IDS.pad, maxNewTokens: options.maxNewTokens });
  return { tokenizerJson, tokenizerConfig, generationConfig };
}
