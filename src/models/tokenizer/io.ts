/**
 * Saving and loading `tokenizer.json` files (the Hugging Face format, readable by `tokenizers`
 * in Python/Rust and `@huggingface/tokenizers` in JS).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { CheckpointError } from '../../core/errors.js';
import type { Tokenizer } from './contract.js';
import type { BpeTokenizerOptions } from './bpe.js';
import { BpeTokenizer } from './bpe.js';

/**
 * Writes `tok.toJSON()` to `path` (pretty-printed UTF-8 JSON).
 * @example await saveTokenizer('runs/r1/tokenizer.json', tok);
 */
export async function saveTokenizer(path: string, tok: Tokenizer): Promise<void> {
  await writeFile(path, `${JSON.stringify(tok.toJSON(), null, 2)}\n`, 'utf8');
}

/**
 * Reads a `tokenizer.json` written by {@link saveTokenizer}. A missing or unparsable file throws
 * `CheckpointError`; a file of the wrong shape throws `InvalidArgumentError` naming the JSON field.
 * @example const tok = await loadTokenizer('runs/r1/tokenizer.json');
 */
export async function loadTokenizer(path: string, options: BpeTokenizerOptions = {}): Promise<BpeTokenizer> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (cause) {
    throw new CheckpointError(path, 'cannot read tokenizer file', { cause });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (cause) {
    throw new CheckpointError(path, 'tokenizer file is not valid JSON', { cause });
  }
  return BpeTokenizer.fromJSON(json, options);
}
