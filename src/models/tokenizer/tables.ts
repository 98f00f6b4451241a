/**
 * The data that defines a byte-level BPE tokenizer, independent of any file format: which bytes each
 * id stands for and the ranked merge list. Both the trainer and the `tokenizer.json` reader produce
 * it; `BpeTokenizer` compiles it into lookup structures.
 */
import { InvalidArgumentError } from '../../core/errors.js';
import { SPECIAL_TOKENS } from './contract.js';

/**
 * Special token strings in id order: `SPECIAL_TOKEN_LIST[id]` for ids 0..5.
 * @example SPECIAL_TOKEN_LIST[1] // '<|bos|>'
 */
export const SPECIAL_TOKEN_LIST: readonly string[] = Object.values(SPECIAL_TOKENS);

/** Number of special tokens; the 256 byte tokens start at this id in the canonical layout. */
export const NUM_SPECIAL = SPECIAL_TOKEN_LIST.length;

/**
 * Id of byte `b` in the canonical layout (specials 0..5, bytes 6..261, then merged tokens).
 * @example BYTE_ID_OFFSET + 0x41 // id of 'A'
 */
export const BYTE_ID_OFFSET = NUM_SPECIAL;

/** Ids must fit in 21 bits so that a pair of ids packs into one safe-integer key. */
export const MAX_VOCAB = 1 << 21;

/**
 * Packs an ordered id pair into one number (Map keys on numbers are much faster than on strings).
 * @example pairKey(7, 9) === 7 * 2 ** 21 + 9
 */
export function pairKey(left: number, right: number): number {
  return left * MAX_VOCAB + right;
}

/**
 * A BPE tokenizer's definition.
 * @example
 * const tables: BpeTables = { vocab: [...specialNulls, ...byteTokens], merges: [[BYTE_ID_OFFSET + 104, BYTE_ID_OFFSET + 105]] };
 */
export interface BpeTables {
  /** `vocab[id]` is the token's bytes, or `null` for the special tokens (ids 0..5). */
  readonly vocab: readonly (Uint8Array | null)[];
  /** Merges in rank order (rank = index): each is the [left, right] id pair merged. */
  readonly merges: readonly (readonly [number, number])[];
}

/**
 * The canonical starting vocabulary: 6 specials then the 256 single bytes.
 * @example baseVocab().length // 262
 */
export function baseVocab(): (Uint8Array | null)[] {
  const vocab: (Uint8Array | null)[] = SPECIAL_TOKEN_LIST.map(() => null);
  for (let b = 0; b < 256; b++) vocab.push(Uint8Array.of(b));
  return vocab;
}

/** Latin-1 view of bytes, used as an exact map key for byte strings. */
export function bytesKey(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i++) s += String.fromCharCode(bytes[i]);
  return s;
}

/**
 * The compiled form used by encoding: the 256 byte ids, and per merge pair its rank and result id.
 * @example const c = compileTables(tables); c.rankOf.get(a * c.stride + b)
 */
export interface CompiledTables {
  /** [256] id of each single byte. */
  readonly byteIds: Int32Array;
  /** Pair key multiplier: `left * stride + right` (= vocab size, so keys of vocabularies up to
   * 32768 stay small integers, which V8 hashes much faster than doubles). */
  readonly stride: number;
  /** `left * stride + right` → rank. */
  readonly rankOf: ReadonlyMap<number, number>;
  /** [merges] id produced by the merge of each rank. */
  readonly mergedId: Int32Array;
}

/**
 * Checks a definition and builds its lookup structures. Throws `InvalidArgumentError` naming the
 * entry at fault: a missing byte token, a merge id out of range, or a merge whose concatenated bytes
 * are not in the vocabulary.
 * @example const compiled = compileTables({ vocab: baseVocab(), merges: [] });
 */
export function compileTables(tables: BpeTables): CompiledTables {
  const { vocab, merges } = tables;
  if (vocab.length > MAX_VOCAB) throw InvalidArgumentError.format('vocab', `at most ${MAX_VOCAB} tokens, got ${vocab.length}`);
  for (let id = 0; id < NUM_SPECIAL; id++) {
    if (vocab[id] !== null) throw InvalidArgumentError.format(`vocab[${id}]`, `expected special token ${SPECIAL_TOKEN_LIST[id]}`);
  }
  const idOfBytes = new Map<string, number>();
  for (let id = NUM_SPECIAL; id < vocab.length; id++) {
    const bytes = vocab[id];
    if (bytes === null || bytes.length === 0) throw InvalidArgumentError.format(`vocab[${id}]`, 'only ids 0..5 may be special; tokens need ≥ 1 byte');
    const key = bytesKey(bytes);
    if (idOfBytes.has(key)) throw InvalidArgumentError.format(`vocab[${id}]`, `duplicates id ${idOfBytes.get(key)}`);
    idOfBytes.set(key, id);
  }
  const byteIds = new Int32Array(256);
  for (let b = 0; b < 256; b++) {
    const id = idOfBytes.get(String.fromCharCode(b));
    if (id === undefined) throw InvalidArgumentError.format('vocab', `byte 0x${b.toString(16)} has no token (byte-level BPE needs all 256)`);
    byteIds[b] = id;
  }
  const rankOf = new Map<number, number>();
  const mergedId = new Int32Array(merges.length);
  for (let rank = 0; rank < merges.length; rank++) {
    const [left, right] = merges[rank];
    const a = vocab[left];
    const b = vocab[right];
    if (a == null || b == null) throw InvalidArgumentError.format(`merges[${rank}]`, `ids ${left}, ${right} must be non-special tokens`);
    const joined = new Uint8Array(a.length + b.length);
    joined.set(a);
    joined.set(b, a.length);
    const id = idOfBytes.get(bytesKey(joined));
    if (id === undefined) throw InvalidArgumentError.format(`merges[${rank}]`, 'merged token is not in the vocabulary');
    const key = left * vocab.length + right;
    // A repeated pair takes its last rank, as both Hugging Face implementations do (map overwrite).
    rankOf.set(key, rank);
    mergedId[rank] = id;
  }
  return { byteIds, stride: vocab.length, rankOf, mergedId };
}
