/**
 * Reading and writing the Hugging Face `tokenizer.json` format for our byte-level BPE.
 *
 * Layout written: no normalizer; pre-tokenizer `Sequence[Split(SPLIT_PATTERN, Isolated),
 * ByteLevel(use_regex: false)]`; `BPE` model (`vocab`, `merges` as "left right" strings,
 * `ignore_merges: false` so every chunk goes through the merges, as in our encoder); `ByteLevel`
 * decoder; no post-processor (the context builder adds `<|bos|>` itself); the six special tokens in
 * `added_tokens` with ids 0..5 (also listed in `vocab`, as HF trainers write them).
 */
import { z } from 'zod';
import { InvalidArgumentError } from '../../core/errors.js';
import { bytesToTokenString, tokenStringToBytes } from './bytes.js';
import { SPLIT_PATTERN } from './pretokenize.js';
import type { BpeTables } from './tables.js';
import { NUM_SPECIAL, SPECIAL_TOKEN_LIST } from './tables.js';

/** The pre-tokenizer object written into, and required in, `tokenizer.json`. */
const PRE_TOKENIZER = {
  type: 'Sequence',
  pretokenizers: [
    { type: 'Split', pattern: { Regex: SPLIT_PATTERN }, behavior: 'Isolated', invert: false },
    { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false },
  ],
} as const;

/**
 * Builds the `tokenizer.json` object.
 * @example writeFileSync('tokenizer.json', JSON.stringify(toHfTokenizerJson(tables)));
 */
export function toHfTokenizerJson(tables: BpeTables): object {
  const vocab: Record<string, number> = {};
  const names = tables.vocab.map((bytes, id) => (bytes === null ? SPECIAL_TOKEN_LIST[id] : bytesToTokenString(bytes)));
  names.forEach((name, id) => {
    vocab[name] = id;
  });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIAL_TOKEN_LIST.map((content, id) => ({
      id,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: null,
    pre_tokenizer: PRE_TOKENIZER,
    post_processor: null,
    decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges: tables.merges.map(([l, r]) => `${names[l]} ${names[r]}`),
    },
  };
}

const hfSchema = z.object({
  added_tokens: z.array(z.object({ id: z.number().int().nonnegative(), content: z.string() })),
  pre_tokenizer: z.object({
    type: z.literal('Sequence'),
    pretokenizers: z.tuple([
      z.object({ type: z.literal('Split'), pattern: z.object({ Regex: z.literal(SPLIT_PATTERN) }), behavior: z.literal('Isolated') }),
      z.object({ type: z.literal('ByteLevel'), use_regex: z.literal(false) }),
    ]),
  }),
  model: z.object({
    type: z.literal('BPE'),
    vocab: z.record(z.string(), z.number().int().nonnegative()),
    merges: z.array(z.union([z.string(), z.tuple([z.string(), z.string()])])),
  }),
});

/**
 * Parses a `tokenizer.json` object into tables. It must use our pre-tokenizer (another split rule
 * would encode differently) and hold the six special tokens at ids 0..5. Throws
 * `InvalidArgumentError` whose property is the JSON path at fault.
 * @example const tables = parseHfTokenizerJson(JSON.parse(text));
 */
export function parseHfTokenizerJson(json: unknown): BpeTables {
  const parsed = hfSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw InvalidArgumentError.format(`tokenizer.json:${issue.path.join('.') || '<root>'}`, issue.message);
  }
  const { added_tokens: added, model } = parsed.data;
  for (let id = 0; id < NUM_SPECIAL; id++) {
    const token = added.find((t) => t.id === id);
    if (token?.content !== SPECIAL_TOKEN_LIST[id]) {
      throw InvalidArgumentError.format('tokenizer.json:added_tokens', `expected ${SPECIAL_TOKEN_LIST[id]} with id ${id}`);
    }
  }
  const size = Math.max(NUM_SPECIAL, ...Object.values(model.vocab).map((id) => id + 1));
  // fill(): holes would be skipped by indexOf below.
  const slots: (Uint8Array | null | undefined)[] = new Array(size).fill(undefined);
  for (let id = 0; id < NUM_SPECIAL; id++) slots[id] = null;
  const idOf = new Map<string, number>();
  for (const [token, id] of Object.entries(model.vocab)) {
    idOf.set(token, id);
    if (id < NUM_SPECIAL) {
      if (token !== SPECIAL_TOKEN_LIST[id]) throw InvalidArgumentError.format(`tokenizer.json:model.vocab.${token}`, `id ${id} is reserved for ${SPECIAL_TOKEN_LIST[id]}`);
      continue;
    }
    const bytes = tokenStringToBytes(token);
    if (bytes === undefined) throw InvalidArgumentError.format(`tokenizer.json:model.vocab.${token}`, 'not a byte-level token string');
    slots[id] = bytes;
  }
  const hole = slots.indexOf(undefined);
  if (hole >= 0) throw InvalidArgumentError.format('tokenizer.json:model.vocab', `no token has id ${hole}`);
  const vocab = slots as (Uint8Array | null)[];
  const merges = model.merges.map((merge, rank): [number, number] => {
    const [left, right] = typeof merge === 'string' ? splitMerge(merge, rank) : merge;
    const l = idOf.get(left);
    const r = idOf.get(right);
    if (l === undefined || r === undefined) throw InvalidArgumentError.format(`tokenizer.json:model.merges.${rank}`, `'${left}' or '${right}' is not in the vocabulary`);
    return [l, r];
  });
  return { vocab, merges };
}

/** Splits a legacy "left right" merge string (byte-level tokens never contain a space). */
function splitMerge(merge: string, rank: number): [string, string] {
  const parts = merge.split(' ');
  if (parts.length !== 2) throw InvalidArgumentError.format(`tokenizer.json:model.merges.${rank}`, `expected "left right", got '${merge}'`);
  return [parts[0], parts[1]];
}
