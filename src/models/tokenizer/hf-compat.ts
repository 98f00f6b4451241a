/**
 * Where `@huggingface/tokenizers` (0.2.0) reads a `tokenizer.json` differently from the Rust
 * `tokenizers` library that transformers, vLLM and TGI use, and what turnwise does about it.
 *
 * Rewritten into an equivalent form the JS library implements exactly (checked against ids that the
 * Rust library produced, test/models/chat/fixtures/):
 * - `Digits`: JS splits on ASCII `\d` only; Rust on every Unicode number (`char::is_numeric`, the
 *   general categories Nd, Nl, No = `\p{N}`), so `½ ² Ⅻ ٣` split differently. Rewritten to
 *   `Split(\p{N})` (individual digits) or `Split(\p{N}+)`, behaviour `Isolated`.
 * - `Metaspace` with `split: true`: JS ignores `split` and keeps the section whole, so merges could
 *   join two words (`▁▁`). Rewritten to `Metaspace(split: false)` followed by `Split(▁[^▁]*)`,
 *   `Isolated`: every replacement char starts a new piece, as Rust's `MergedWithNext` split does.
 *
 * Refused by name (the JS library would silently tokenize them differently):
 * - `Split` behaviours `MergedWithPrevious`, `MergedWithNext`, `Contiguous` (not implemented in JS);
 * - added tokens with `single_word: true` (JS ignores the flag);
 * - BPE `dropout` > 0 (sampling tokenization: not deterministic);
 * - a model other than `BPE` (the families turnwise supports are all BPE; others are untested).
 *
 * Decoding is fixed after construction (see `rustByteFallback` in hf-tokenizer.ts).
 */
import { InvalidArgumentError } from '../../core/errors.js';

type Json = Record<string, unknown>;

const SUPPORTED_SPLIT_BEHAVIOURS = new Set(['Isolated', 'Removed']);

/**
 * Returns a copy of a parsed `tokenizer.json` object that `@huggingface/tokenizers` tokenizes as the
 * Rust library does, or throws `InvalidArgumentError` naming the field it cannot honour.
 * @example const fixed = compatibleTokenizerJson(JSON.parse(text), 'tokenizer.json');
 */
export function compatibleTokenizerJson(json: unknown, source: string): Json {
  if (!isObject(json)) throw InvalidArgumentError.format(source, 'expected a JSON object');
  const model = json.model;
  if (!isObject(model)) throw InvalidArgumentError.format(`${source}:model`, 'missing');
  if (model.type !== 'BPE') {
    throw InvalidArgumentError.format(`${source}:model.type`, `only BPE tokenizers are supported, got ${JSON.stringify(model.type)}`);
  }
  if (typeof model.dropout === 'number' && model.dropout > 0) {
    throw InvalidArgumentError.format(`${source}:model.dropout`, `BPE dropout ${model.dropout} makes tokenization random; expected null or 0`);
  }
  if (!isObject(model.vocab)) throw InvalidArgumentError.format(`${source}:model.vocab`, 'expected an object of token → id');
  if (!Array.isArray(model.merges)) throw InvalidArgumentError.format(`${source}:model.merges`, 'expected an array');
  const added = json.added_tokens ?? [];
  if (!Array.isArray(added)) throw InvalidArgumentError.format(`${source}:added_tokens`, 'expected an array');
  added.forEach((token, i) => {
    if (!isObject(token) || typeof token.content !== 'string' || !Number.isInteger(token.id)) {
      throw InvalidArgumentError.format(`${source}:added_tokens.${i}`, 'expected { id: integer, content: string }');
    }
    if (token.single_word === true) {
      throw InvalidArgumentError.format(`${source}:added_tokens.${i}.single_word`, `single_word tokens (${JSON.stringify(token.content)}) are not supported`);
    }
  });
  return {
    ...json,
    added_tokens: added,
    normalizer: json.normalizer ?? null,
    pre_tokenizer: rewritePreTokenizer(json.pre_tokenizer ?? null, `${source}:pre_tokenizer`),
    post_processor: json.post_processor ?? null,
    decoder: json.decoder ?? null,
  };
}

function rewritePreTokenizer(node: unknown, path: string): unknown {
  if (node === null) return null;
  if (!isObject(node)) throw InvalidArgumentError.format(path, 'expected an object or null');
  switch (node.type) {
    case 'Sequence': {
      const children = node.pretokenizers;
      if (!Array.isArray(children)) throw InvalidArgumentError.format(`${path}.pretokenizers`, 'expected an array');
      return { ...node, pretokenizers: children.map((child, i) => rewritePreTokenizer(child, `${path}.pretokenizers.${i}`)) };
    }
    case 'Digits':
      return { type: 'Split', pattern: { Regex: node.individual_digits === true ? '\\p{N}' : '\\p{N}+' }, behavior: 'Isolated', invert: false };
    case 'Metaspace': {
      if (node.split !== true) return node;
      const replacement = typeof node.replacement === 'string' ? node.replacement : '\u2581';
      const escaped = replacement.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      return {
        type: 'Sequence',
        pretokenizers: [
          { ...node, split: false },
          { type: 'Split', pattern: { Regex: `${escaped}[^${escaped}]*` }, behavior: 'Isolated', invert: false },
        ],
      };
    }
    case 'Split': {
      const behaviour = String(node.behavior);
      if (!SUPPORTED_SPLIT_BEHAVIOURS.has(behaviour)) {
        throw InvalidArgumentError.format(`${path}.behavior`, `Split behaviour ${JSON.stringify(node.behavior)} is not supported (only Isolated and Removed)`);
      }
      if (node.invert === true) throw InvalidArgumentError.format(`${path}.invert`, 'inverted Split patterns are not supported');
      return node;
    }
    default:
      return node;
  }
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
