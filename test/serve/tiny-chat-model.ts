/**
 * A tiny chat model in Hugging Face layout for the server tests (not a test file itself):
 * SmolLM2's tokenizer files (byte-level BPE cut to 539 ids, ChatML template with its own default
 * system message; test/models/chat/fixtures/smollm2), or another fixture family's (Qwen2.5's, whose
 * template takes tools), and random llama weights (grouped-query attention, tied embeddings)
 * written as `config.json` + `model.safetensors`, as an exported checkpoint would be.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Rng } from '../../src/core/rng.js';
import { writeSafetensors, type TensorRecord } from '../../src/models/safetensors.js';
import { type TransformerConfig, TransformerModel } from '../../src/models/transformer/model.js';

const FIXTURES = join(import.meta.dirname, '..', 'models', 'chat', 'fixtures');
/** Ids of the fixture's tokenizer (added tokens included). */
export const TINY_CHAT_VOCAB = 539;
export const IM_START = 1;
export const IM_END = 2;

/** The shape of the tiny model. */
export const TINY_CHAT_SHAPE: TransformerConfig = {
  vocabSize: 576, // padded past the tokenizer's 539 ids, as real checkpoints pad theirs
  dModel: 32,
  nLayers: 2,
  nHeads: 4,
  nKvHeads: 2,
  ffnHidden: 64,
  maxContext: 192,
  ropeTheta: 10000,
  rmsNormEps: 1e-5,
  tieEmbeddings: true,
  architecture: 'llama',
};

/** Whose tokenizer files the model takes, and its special ids. */
export interface TinyChatTokenizer {
  readonly family: 'smollm2' | 'qwen2.5';
  readonly bos: number;
  readonly eos: readonly number[];
  readonly pad: number;
}

export const SMOLLM2_TOKENIZER: TinyChatTokenizer = { family: 'smollm2', bos: IM_START, eos: [IM_END], pad: IM_END };
/** Qwen2.5's tokenizer cut to 543 ids (`<tool_call>` is 541), its ChatML template with tools. */
export const QWEN25_TOKENIZER: TinyChatTokenizer = { family: 'qwen2.5', bos: 536, eos: [538, 536], pad: 536 };

/**
 * Writes the folder (created if missing) and returns it.
 * @example const folder = await writeTinyChatModel(join(tmp, 'smol'), 7);
 */
export async function writeTinyChatModel(folder: string, seed: number, shape: Partial<TransformerConfig> = {}, tokenizer: TinyChatTokenizer = SMOLLM2_TOKENIZER): Promise<string> {
  mkdirSync(folder, { recursive: true });
  for (const file of ['tokenizer.json', 'tokenizer_config.json', 'generation_config.json']) copyFileSync(join(FIXTURES, tokenizer.family, file), join(folder, file));
  const model = new TransformerModel({ ...TINY_CHAT_SHAPE, ...shape }, Rng.fromSeed(seed));
  try {
    await writeFile(join(folder, 'config.json'), JSON.stringify(model.toHfConfig({ bos: tokenizer.bos, eos: [...tokenizer.eos], pad: tokenizer.pad }), null, 2));
    const records: Record<string, TensorRecord> = {};
    for (const [name, w] of model.namedWeights()) records[name] = { dtype: 'F32', shape: w.shape, data: w.data };
    await writeSafetensors(join(folder, 'model.safetensors'), records, { format: 'pt' });
  } finally {
    model.dispose();
  }
  return folder;
}
