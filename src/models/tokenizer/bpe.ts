/**
 * `BpeTokenizer`: byte-level BPE encoding and decoding behind the `Tokenizer` contract.
 *
 * Encoding is on the rollout hot path (every observation of every turn), so it is layered:
 * 1. a bounded LRU of whole texts → ids (observations repeat across turns and group samples);
 * 2. a bounded cache of pre-tokenized chunks → ids (templates like ` steps in front of you and`);
 * 3. for a new chunk, BPE with a min-heap over (merge rank, position): O(n log n) in the chunk's
 *    byte length, and the same merge order as Hugging Face (lowest rank first, leftmost on ties).
 */
import { InvalidArgumentError } from '../../core/errors.js';
import type { SpecialTokenName, Tokenizer } from './contract.js';
import { SPECIAL_TOKENS } from './contract.js';
import { bytesToTokenString } from './bytes.js';
import { parseHfTokenizerJson, toHfTokenizerJson } from './hf-json.js';
import { LruCache } from './lru.js';
import { preTokenize } from './pretokenize.js';
import type { BpeTables, CompiledTables } from './tables.js';
import { compileTables, SPECIAL_TOKEN_LIST } from './tables.js';

/** Cache sizes; the defaults hold a few thousand distinct observations in a few MB. */
export interface BpeTokenizerOptions {
  /** Whole texts remembered (LRU). Default 4096; 0 disables. */
  readonly textCacheSize?: number;
  /** Pre-tokenized chunks remembered (cleared when full). Default 65536; 0 disables. */
  readonly chunkCacheSize?: number;
}

// Heap entries pack (rank, position) in one number: rank * 2^26 + position.
const POS_BITS = 2 ** 26;
const SPECIAL_IDS: Readonly<Record<SpecialTokenName, number>> = Object.fromEntries(
  (Object.keys(SPECIAL_TOKENS) as SpecialTokenName[]).map((name, id) => [name, id]),
) as Record<SpecialTokenName, number>;

/**
 * A byte-level BPE tokenizer. Special tokens have ids 0..5; plain text never encodes to them.
 * @example
 * const tok = trainBpe(corpus, { vocabSize: 512 });
 * const ids = tok.encode('There is a red ball 1');
 * tok.decode(ids) === 'There is a red ball 1'; // true for any valid Unicode string
 */
export class BpeTokenizer implements Tokenizer {
  readonly vocabSize: number;
  private readonly tables: BpeTables;
  private readonly compiled: CompiledTables;
  private readonly textCache: LruCache<string, Int32Array>;
  private readonly chunkCache = new Map<string, Int32Array>();
  private readonly chunkCacheSize: number;
  private readonly utf8 = new TextEncoder();
  // ignoreBOM keeps a leading U+FEFF, so decode(encode(s)) === s (the HF ByteLevel decoder does the same).
  private readonly utf8Decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

  /**
   * @param tables vocabulary and ranked merges (from `trainBpe` or `BpeTokenizer.fromJSON`).
   * @param options cache sizes.
   */
  constructor(tables: BpeTables, options: BpeTokenizerOptions = {}) {
    this.compiled = compileTables(tables);
    this.tables = tables;
    this.vocabSize = tables.vocab.length;
    this.textCache = new LruCache(options.textCacheSize ?? 4096);
    this.chunkCacheSize = options.chunkCacheSize ?? 65536;
  }

  /**
   * Loads a Hugging Face `tokenizer.json` object written by `toJSON` (or one with the same
   * pre-tokenizer and special tokens). Throws `InvalidArgumentError` naming the field at fault.
   * @example const tok = BpeTokenizer.fromJSON(JSON.parse(readFileSync('tokenizer.json', 'utf8')));
   */
  static fromJSON(json: unknown, options: BpeTokenizerOptions = {}): BpeTokenizer {
    return new BpeTokenizer(parseHfTokenizerJson(json), options);
  }

  /** Number of merges (vocabSize − 262 unless some merges produced an existing token). */
  get numMerges(): number {
    return this.tables.merges.length;
  }

  /** Id of a special token (fixed: pad 0, bos 1, system 2, obs 3, act 4, end 5). */
  specialId(name: SpecialTokenName): number {
    const id = SPECIAL_IDS[name];
    if (id === undefined) throw InvalidArgumentError.format('name', `unknown special token '${String(name)}'`);
    return id;
  }

  /** Token text as in `tokenizer.json` (byte-level string, or the special token), for display. */
  tokenString(id: number): string {
    const bytes = this.tables.vocab[id];
    if (bytes === undefined) throw InvalidArgumentError.format('id', `expected 0 ≤ id < ${this.vocabSize}, got ${id}`);
    return bytes === null ? SPECIAL_TOKEN_LIST[id] : bytesToTokenString(bytes);
  }

  /** Encodes plain text; `<|…|>` strings inside `text` are ordinary bytes. Returns a fresh array. */
  encode(text: string): Int32Array {
    const cached = this.textCache.get(text);
    if (cached !== undefined) return cached.slice();
    const chunks = preTokenize(text);
    const parts: Int32Array[] = new Array(chunks.length);
    let total = 0;
    for (let i = 0; i < chunks.length; i++) {
      parts[i] = this.encodeChunk(chunks[i]);
      total += parts[i].length;
    }
    const ids = new Int32Array(total);
    let offset = 0;
    for (const part of parts) {
      ids.set(part, offset);
      offset += part.length;
    }
    this.textCache.set(text, ids);
    return ids.slice();
  }

  /** Decodes ids to text; special tokens are dropped unless `keepSpecial`. */
  decode(ids: ArrayLike<number>, keepSpecial = false): string {
    const { vocab } = this.tables;
    let text = '';
    let pending: number[] = [];
    for (let i = 0; i < ids.length; i++) {
      const bytes = vocab[ids[i]];
      if (bytes === undefined) throw InvalidArgumentError.format(`ids[${i}]`, `expected 0 ≤ id < ${this.vocabSize}, got ${ids[i]}`);
      if (bytes !== null) {
        for (let j = 0; j < bytes.length; j++) pending.push(bytes[j]);
      } else if (keepSpecial) {
        text += this.utf8Decoder.decode(Uint8Array.from(pending)) + SPECIAL_TOKEN_LIST[ids[i]];
        pending = [];
      }
    }
    return text + this.utf8Decoder.decode(Uint8Array.from(pending));
  }

  /** The Hugging Face `tokenizer.json` object (BPE model, Split + ByteLevel pre-tokenizer). */
  toJSON(): object {
    return toHfTokenizerJson(this.tables);
  }

  /** Ids of one pre-tokenized chunk, from the chunk cache or by running BPE. */
  private encodeChunk(chunk: string): Int32Array {
    const hit = this.chunkCache.get(chunk);
    if (hit !== undefined) return hit;
    const ids = this.bpe(this.utf8.encode(chunk));
    if (this.chunkCacheSize > 0) {
      // Clearing (not LRU) keeps the common path to one Map lookup; chunks are few and repetitive.
      if (this.chunkCache.size >= this.chunkCacheSize) this.chunkCache.clear();
      this.chunkCache.set(chunk, ids);
    }
    return ids;
  }

  /**
   * Merges the bytes of one chunk: repeatedly the adjacent pair of lowest rank, leftmost first.
   * Symbols form a linked list over original positions; the heap holds candidate pairs and stale
   * entries are skipped when popped (their pair no longer has that rank).
   */
  private bpe(bytes: Uint8Array): Int32Array {
    const n = bytes.length;
    if (n >= POS_BITS) throw InvalidArgumentError.format('text', `a chunk of ${n} bytes is too long to encode (max ${POS_BITS - 1})`);
    const { byteIds, stride, rankOf, mergedId } = this.compiled;
    const sym = new Int32Array(n); // [n] current token id at each live position
    const next = new Int32Array(n); // [n] next live position, −1 at the end
    const prev = new Int32Array(n); // [n] previous live position, −1 at the start
    for (let i = 0; i < n; i++) {
      sym[i] = byteIds[bytes[i]];
      next[i] = i + 1 < n ? i + 1 : -1;
      prev[i] = i - 1;
    }
    const heap: number[] = [];
    const rankAt = (i: number): number => {
      const j = next[i];
      if (j < 0) return -1;
      return rankOf.get(sym[i] * stride + sym[j]) ?? -1;
    };
    for (let i = 0; i + 1 < n; i++) {
      const r = rankAt(i);
      if (r >= 0) heapPush(heap, r * POS_BITS + i);
    }
    let count = n;
    while (heap.length > 0) {
      const top = heapPop(heap);
      const rank = Math.floor(top / POS_BITS);
      const i = top - rank * POS_BITS;
      // Dead positions are skipped; a pair that changed since the push has another rank.
      if (sym[i] < 0 || rankAt(i) !== rank) continue;
      const j = next[i];
      sym[i] = mergedId[rank];
      sym[j] = -1;
      next[i] = next[j];
      if (next[j] >= 0) prev[next[j]] = i;
      count--;
      const p = prev[i];
      if (p >= 0) {
        const rp = rankAt(p);
        if (rp >= 0) heapPush(heap, rp * POS_BITS + p);
      }
      const r = rankAt(i);
      if (r >= 0) heapPush(heap, r * POS_BITS + i);
    }
    const out = new Int32Array(count);
    for (let i = n > 0 ? 0 : -1, k = 0; i >= 0; i = next[i]) out[k++] = sym[i];
    return out;
  }
}

/** Min-heap push on a plain number array. */
function heapPush(heap: number[], value: number): void {
  let i = heap.length;
  heap.push(value);
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (heap[parent] <= value) break;
    heap[i] = heap[parent];
    i = parent;
  }
  heap[i] = value;
}

/** Min-heap pop on a plain number array (caller checks it is non-empty). */
function heapPop(heap: number[]): number {
  const top = heap[0];
  const last = heap.pop() as number;
  const n = heap.length;
  if (n === 0) return top;
  let i = 0;
  for (;;) {
    const l = 2 * i + 1;
    if (l >= n) break;
    const r = l + 1;
    const c = r < n && heap[r] < heap[l] ? r : l;
    if (heap[c] >= last) break;
    heap[i] = heap[c];
    i = c;
  }
  heap[i] = last;
  return top;
}
