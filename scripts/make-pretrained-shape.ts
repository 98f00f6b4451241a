/**
 * Writes a Hugging Face model folder with the shape of a real pretrained instruct model and random
 * weights, for trying `model.from`, `serve`, `merge` and `eval` at real sizes on a machine that
 * cannot download one (tests call it too). `smollm2-135m` (the default) mirrors SmolLM2-135M-Instruct: Llama,
 * 30 layers, d 576, 9 query / 3 key-value heads of 64, SwiGLU 1536, tied embeddings, RoPE theta
 * 100000, 8192 positions, BF16 weights, and a byte-level BPE tokenizer with the full 49,152 ids
 * (17 special tokens first, as SmolLM2 has them; `Digits` + `ByteLevel` pre-tokenizer; a ChatML
 * template with SmolLM's default system message; `<|im_end|>` ends a turn).
 *
 *     node --import tsx scripts/make-pretrained-shape.ts --out models/smollm2-shape [--layers 30] [--seed 1]
 *
 * `--shape qwen2.5-0.5b` writes Qwen2.5-0.5B-Instruct's shape instead (Qwen2, 24 layers, d 896,
 * 14 query / 2 key-value heads of 64, SwiGLU 4864, q/k/v biases, tied embeddings, RoPE theta 1e6,
 * 32768 positions, 151,936 ids) with the same tokenizer and template filled up to that vocabulary:
 * what the sizes of a Qwen run cost (its weights, LM head and softmax), not Qwen's own tokens.
 *
 * The tokenizer's merges: byte-level BPE trained (turnwise's `trainBpe`) on BabyAI text and
 * AgentGym's instruction, so English words of the environment are one token or two as with a real
 * tokenizer, then filler merges of bytes 0x80..0xFF up to the full vocabulary: they never apply to
 * ASCII text, but every id exists, so the embedding, the LM head and the softmax have the real
 * sizes. Weights: N(0, 0.02)-like (uniform with that deviation), norms at 1. Deterministic.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import '../src/envs/index.js';
import { getEnvironmentSpec } from '../src/envs/registry.js';
import { type TensorRecord, toBfloat16, writeSafetensors } from '../src/models/safetensors.js';
import { BYTE_TO_CHAR } from '../src/models/tokenizer/bytes.js';
import { trainBpe } from '../src/models/tokenizer/train.js';
import type { TransformerConfig } from '../src/models/transformer/config.js';
import { weightSpecs } from '../src/models/transformer/weights.js';

/** SmolLM2-135M-Instruct's shape (its config.json). */
export const SMOLLM2_135M_SHAPE: TransformerConfig = {
  architecture: 'llama',
  vocabSize: 49152,
  dModel: 576,
  nLayers: 30,
  nHeads: 9,
  nKvHeads: 3,
  headDim: 64,
  ffnHidden: 1536,
  maxContext: 8192,
  ropeTheta: 100000,
  rmsNormEps: 1e-5,
  tieEmbeddings: true,
};

/** Qwen2.5-0.5B-Instruct's shape (its config.json). */
export const QWEN25_05B_SHAPE: TransformerConfig = {
  architecture: 'qwen2',
  vocabSize: 151936,
  dModel: 896,
  nLayers: 24,
  nHeads: 14,
  nKvHeads: 2,
  headDim: 64,
  ffnHidden: 4864,
  maxContext: 32768,
  ropeTheta: 1000000,
  rmsNormEps: 1e-6,
  tieEmbeddings: true,
  qkvBias: true,
};

/** The shapes `--shape` names. */
export const PRETRAINED_SHAPES: Readonly<Record<string, TransformerConfig>> = { 'smollm2-135m': SMOLLM2_135M_SHAPE, 'qwen2.5-0.5b': QWEN25_05B_SHAPE };

/** SmolLM2's special tokens, ids 0..16. */
const SPECIALS = [
  '<|endoftext|>',
  '<|im_start|>',
  '<|im_end|>',
  '<repo_name>',
  '<reponame>',
  '<file_sep>',
  '<filename>',
  '<gh_stars>',
  '<issue_start>',
  '<issue_comment>',
  '<issue_closed>',
  '<jupyter_start>',
  '<jupyter_text>',
  '<jupyter_code>',
  '<jupyter_output>',
  '<jupyter_script>',
  '<empty_output>',
];

/** SmolLM2-Instruct's chat template: ChatML with its own default system message. */
const CHAT_TEMPLATE = [
  "{%- for message in messages %}{%- if loop.first and messages[0]['role'] != 'system' %}",
  "{{- '<|im_start|>system\\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\\n' }}",
  "{%- endif %}{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}",
  "{%- endfor %}{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}",
].join('');

/** GPT-2's pre-tokenizer regex (ByteLevel `use_regex`), after `Digits(individual_digits)`. */
const GPT2_PIECES = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;

/** What {@link writePretrainedShape} writes. */
export interface PretrainedShapeOptions {
  readonly folder: string;
  /** Decoder layers (default the model's; fewer for a cheaper stand-in of the same widths). */
  readonly layers?: number;
  readonly seed?: number;
  /** A key of {@link PRETRAINED_SHAPES}; default `smollm2-135m`. */
  readonly shape?: string;
}

/** What was written. */
export interface PretrainedShapeReport {
  readonly folder: string;
  readonly shape: TransformerConfig;
  readonly parameters: number;
  readonly vocabSize: number;
}

/**
 * The tokenizer.json: SmolLM2's layout, merges trained on BabyAI's text, then filler up to
 * `vocabSize` (module comment).
 */
export function smolLm2TokenizerJson(vocabSize: number): Record<string, unknown> {
  const spec = getEnvironmentSpec('babyai');
  const settings = { levels: ['GoToRedBall'] };
  const env = spec.create({ settings });
  const corpus = [...spec.corpus({ settings }, 300, 1), env.instruction(), 'system\n', 'user\n', 'assistant\n', 'You are a helpful AI assistant named SmolLM, trained by Hugging Face'];
  void env.close();
  // Merges of a tokenizer trained on the pieces SmolLM2's pre-tokenizer cuts (GPT-2's regex, single
  // digits), so that they apply as they would in the real one; named by their byte-level strings.
  const pieces = corpus.flatMap((text) => text.match(GPT2_PIECES) ?? []);
  const trained = trainBpe(pieces, { vocabSize: 4096 }).toJSON() as { model: { merges: string[] } };
  const vocab = new Map<string, number>();
  const add = (token: string): boolean => {
    if (vocab.has(token)) return false;
    vocab.set(token, vocab.size);
    return true;
  };
  for (const special of SPECIALS) add(special);
  for (const char of BYTE_TO_CHAR) add(char);
  const merges: [string, string][] = [];
  for (const merge of trained.model.merges) {
    const [left, right] = merge.split(' ') as [string, string];
    if (vocab.has(left) && vocab.has(right) && add(left + right)) merges.push([left, right]);
  }
  // Filler: pairs, then longer runs, of the characters of bytes 0x80..0xFF (no ASCII text holds them).
  const high = BYTE_TO_CHAR.slice(0x80);
  let prefixes = [...high];
  while (vocab.size < vocabSize) {
    const next: string[] = [];
    for (const prefix of prefixes) {
      for (const char of high) {
        if (vocab.size >= vocabSize) break;
        if (add(prefix + char)) {
          merges.push([prefix, char]);
          next.push(prefix + char);
        }
      }
    }
    prefixes = next;
  }
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIALS.map((content, id) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true })),
    normalizer: null,
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [
        { type: 'Digits', individual_digits: true },
        { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
      ],
    },
    post_processor: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab: Object.fromEntries(vocab),
      merges,
    },
  };
}

/** A fast seeded uniform stream (mulberry32): 135M draws in about a second. */
function uniform(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Writes the folder (module comment) and says what it holds.
 * @example await writePretrainedShape({ folder: 'models/smollm2-shape' });
 */
export async function writePretrainedShape(options: PretrainedShapeOptions): Promise<PretrainedShapeReport> {
  const base = PRETRAINED_SHAPES[options.shape ?? 'smollm2-135m'];
  if (base === undefined) throw new Error(`shape: expected one of ${Object.keys(PRETRAINED_SHAPES).join(', ')}, got "${options.shape}"`);
  const shape: TransformerConfig = { ...base, nLayers: options.layers ?? base.nLayers };
  const qwen = shape.architecture === 'qwen2';
  const next = uniform(options.seed ?? 1);
  const bound = 0.02 * Math.sqrt(3); // uniform(-b, b) has deviation b / sqrt(3)
  const records: Record<string, TensorRecord> = {};
  let parameters = 0;
  for (const spec of weightSpecs(shape)) {
    const size = spec.hfShape.reduce((a, b) => a * b, 1);
    const values = new Float32Array(size);
    if (spec.init.kind === 'ones') values.fill(1);
    else for (let i = 0; i < size; i++) values[i] = (2 * next() - 1) * bound;
    records[spec.name] = { dtype: 'BF16', shape: [...spec.hfShape], data: toBfloat16(values) };
    parameters += size;
  }
  mkdirSync(options.folder, { recursive: true });
  await writeSafetensors(join(options.folder, 'model.safetensors'), records, { format: 'pt' });
  const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
  writeFileSync(
    join(options.folder, 'config.json'),
    json({
      architectures: [qwen ? 'Qwen2ForCausalLM' : 'LlamaForCausalLM'],
      attention_bias: qwen,
      attention_dropout: 0.0,
      bos_token_id: 1,
      eos_token_id: 2,
      hidden_act: 'silu',
      hidden_size: shape.dModel,
      initializer_range: 0.041666666666666664,
      intermediate_size: shape.ffnHidden,
      max_position_embeddings: shape.maxContext,
      mlp_bias: false,
      model_type: qwen ? 'qwen2' : 'llama',
      ...(qwen ? { use_sliding_window: false, sliding_window: null, max_window_layers: shape.nLayers } : {}),
      num_attention_heads: shape.nHeads,
      num_hidden_layers: shape.nLayers,
      num_key_value_heads: shape.nKvHeads,
      pad_token_id: 2,
      pretraining_tp: 1,
      rms_norm_eps: shape.rmsNormEps,
      rope_scaling: null,
      rope_theta: shape.ropeTheta,
      tie_word_embeddings: true,
      torch_dtype: 'bfloat16',
      use_cache: true,
      vocab_size: shape.vocabSize,
    }),
  );
  writeFileSync(join(options.folder, 'generation_config.json'), json({ bos_token_id: 1, eos_token_id: 2, pad_token_id: 2 }));
  writeFileSync(join(options.folder, 'tokenizer.json'), JSON.stringify(smolLm2TokenizerJson(shape.vocabSize)));
  const decoder = Object.fromEntries(SPECIALS.map((content, id) => [String(id), { content, lstrip: false, normalized: false, rstrip: false, single_word: false, special: true }]));
  writeFileSync(
    join(options.folder, 'tokenizer_config.json'),
    json({
      add_prefix_space: false,
      added_tokens_decoder: decoder,
      additional_special_tokens: ['<|im_start|>', '<|im_end|>'],
      bos_token: '<|im_start|>',
      chat_template: CHAT_TEMPLATE,
      clean_up_tokenization_spaces: false,
      eos_token: '<|im_end|>',
      model_max_length: shape.maxContext,
      pad_token: '<|im_end|>',
      tokenizer_class: 'GPT2Tokenizer',
      unk_token: '<|endoftext|>',
      vocab_size: shape.vocabSize,
    }),
  );
  return { folder: options.folder, shape, parameters, vocabSize: shape.vocabSize };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { out: { type: 'string' }, layers: { type: 'string' }, seed: { type: 'string', default: '1' }, shape: { type: 'string', default: 'smollm2-135m' } } });
  if (values.out === undefined) {
    console.error(`usage: make-pretrained-shape.ts --out <folder> [--shape ${Object.keys(PRETRAINED_SHAPES).join('|')}] [--layers N] [--seed N]`);
    process.exit(2);
  }
  const report = await writePretrainedShape({ folder: values.out, seed: Number(values.seed), shape: values.shape, ...(values.layers === undefined ? {} : { layers: Number(values.layers) }) });
  console.log(`wrote ${report.folder}: ${values.shape} shape, ${report.shape.nLayers} layers, ${report.parameters.toLocaleString('en-US')} parameters (BF16), vocabulary ${report.vocabSize}`);
}
