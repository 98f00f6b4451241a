/**
 * Byte-level BPE training (Sennrich et al., 2016, arXiv:1508.07909; GPT-2 byte-level variant).
 *
 * Why it is fast: the corpus is reduced to its distinct pre-tokenized chunks with frequencies
 * (observation text repeats heavily, so 2 MB shrinks to a few thousand chunks); pair counts are
 * kept incrementally (a merge only touches the chunks that hold the pair, found through a
 * pair → chunks index, and only the pairs next to each merged occurrence change); the next merge
 * comes from a lazy max-heap (stale entries are re-pushed with their current count when popped).
 */
import { InvalidArgumentError } from '../../core/errors.js';
import type { BpeTokenizerOptions } from './bpe.js';
import { BpeTokenizer } from './bpe.js';
import { preTokenize } from './pretokenize.js';
import { BYTE_ID_OFFSET, baseVocab, bytesKey, MAX_VOCAB, pairKey } from './tables.js';

/** Options of {@link trainBpe}. */
export interface TrainBpeOptions {
  /** Target vocabulary size, specials and the 256 bytes included (≥ 262). */
  readonly vocabSize: number;
  /** A pair seen fewer times than this is never merged (default 2). Training stops early then. */
  readonly minFrequency?: number;
}

interface HeapEntry {
  readonly count: number;
  readonly key: number;
}

/**
 * Trains a byte-level BPE tokenizer on `corpus`. Merges are chosen by highest pair frequency, ties
 * broken by the smaller (left id, right id) pair, so training is deterministic. The result has
 * exactly `vocabSize` tokens unless the corpus runs out of pairs seen `minFrequency` times first.
 * @example
 * const tok = trainBpe(observations, { vocabSize: 512 });
 * tok.vocabSize; // 512
 */
export function trainBpe(corpus: readonly string[], options: TrainBpeOptions, tokenizerOptions: BpeTokenizerOptions = {}): BpeTokenizer {
  const { vocabSize, minFrequency = 2 } = options;
  const base = baseVocab();
  if (!Number.isInteger(vocabSize) || vocabSize < base.length || vocabSize > MAX_VOCAB) {
    throw InvalidArgumentError.format('vocabSize', `expected an integer in [${base.length}, ${MAX_VOCAB}], got ${vocabSize}`);
  }
  if (!Number.isInteger(minFrequency) || minFrequency < 1) {
    throw InvalidArgumentError.format('minFrequency', `expected an integer ≥ 1, got ${minFrequency}`);
  }

  // 1. Distinct chunks with their frequencies.
  const chunkFreq = new Map<string, number>();
  for (const text of corpus) {
    for (const chunk of preTokenize(text)) chunkFreq.set(chunk, (chunkFreq.get(chunk) ?? 0) + 1);
  }
  const utf8 = new TextEncoder();
  const words: Int32Array[] = []; // [word][symbols], compacted in place as merges apply
  const lens: number[] = [];
  const freqs: number[] = [];
  for (const [chunk, freq] of chunkFreq) {
    const bytes = utf8.encode(chunk);
    if (bytes.length < 2) continue;
    words.push(Int32Array.from(bytes, (b) => b + BYTE_ID_OFFSET));
    lens.push(bytes.length);
    freqs.push(freq);
  }

  // 2. Initial pair counts and the pair → words index (may hold duplicates and stale words).
  const pairCount = new Map<number, number>();
  const pairWords = new Map<number, number[]>();
  const addWord = (key: number, w: number): void => {
    const list = pairWords.get(key);
    if (list === undefined) pairWords.set(key, [w]);
    else if (list[list.length - 1] !== w) list.push(w);
  };
  for (let w = 0; w < words.length; w++) {
    const s = words[w];
    for (let i = 0; i + 1 < lens[w]; i++) {
      const key = pairKey(s[i], s[i + 1]);
      pairCount.set(key, (pairCount.get(key) ?? 0) + freqs[w]);
      addWord(key, w);
    }
  }
  const heap: HeapEntry[] = [];
  for (const [key, count] of pairCount) heapPush(heap, { count, key });

  // 3. Merge until the vocabulary is full.
  const vocab = base;
  const idOfBytes = new Map<string, number>();
  vocab.forEach((bytes, id) => {
    if (bytes !== null) idOfBytes.set(bytesKey(bytes), id);
  });
  const merges: [number, number][] = [];
  const seenAt = new Int32Array(words.length).fill(-1); // dedupes word visits per merge
  while (vocab.length < vocabSize && heap.length > 0) {
    const top = heapPop(heap);
    const current = pairCount.get(top.key) ?? 0;
    if (current !== top.count) {
      if (current > 0) heapPush(heap, { count: current, key: top.key });
      continue;
    }
    if (current < minFrequency) break;
    const a = Math.floor(top.key / MAX_VOCAB);
    const b = top.key - a * MAX_VOCAB;
    const left = vocab[a] as Uint8Array;
    const right = vocab[b] as Uint8Array;
    const joined = new Uint8Array(left.length + right.length);
    joined.set(left);
    joined.set(right, left.length);
    // Two different merges can spell the same bytes ('ab'+'c', 'a'+'bc'): they share one id.
    const joinedKey = bytesKey(joined);
    let n = idOfBytes.get(joinedKey);
    if (n === undefined) {
      n = vocab.length;
      vocab.push(joined);
      idOfBytes.set(joinedKey, n);
    }
    const rank = merges.length;
    merges.push([a, b]);

    const delta = new Map<number, number>();
    const bump = (key: number, by: number): void => {
      delta.set(key, (delta.get(key) ?? 0) + by);
    };
    for (const w of pairWords.get(top.key) ?? []) {
      if (seenAt[w] === rank) continue;
      seenAt[w] = rank;
      const s = words[w];
      const f = freqs[w];
      let len = lens[w];
      // Left to right over the live symbols; s[i - 1] may already be a merged `n`, which makes the
      // temporary (n, a) increment cancel out on the next occurrence (as in HF's Word::merge).
      for (let i = 0; i + 1 < len; i++) {
        if (s[i] !== a || s[i + 1] !== b) continue;
        if (i > 0) {
          bump(pairKey(s[i - 1], a), -f);
          bump(pairKey(s[i - 1], n), f);
          addWord(pairKey(s[i - 1], n), w);
        }
        if (i + 2 < len) {
          bump(pairKey(b, s[i + 2]), -f);
          bump(pairKey(n, s[i + 2]), f);
          addWord(pairKey(n, s[i + 2]), w);
        }
        s[i] = n;
        s.copyWithin(i + 1, i + 2, len);
        len--;
      }
      lens[w] = len;
    }
    pairCount.delete(top.key);
    pairWords.delete(top.key);
    for (const [key, d] of delta) {
      if (key === top.key || d === 0) continue;
      const count = (pairCount.get(key) ?? 0) + d;
      if (count > 0) pairCount.set(key, count);
      else pairCount.delete(key);
      if (d > 0) heapPush(heap, { count, key });
    }
  }
  return new BpeTokenizer({ vocab, merges }, tokenizerOptions);
}

/** `x` comes out of the max-heap before `y`: higher count, then smaller pair key. */
function before(x: HeapEntry, y: HeapEntry): boolean {
  return x.count > y.count || (x.count === y.count && x.key < y.key);
}

function heapPush(heap: HeapEntry[], entry: HeapEntry): void {
  let i = heap.length;
  heap.push(entry);
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (!before(entry, heap[parent])) break;
    heap[i] = heap[parent];
    i = parent;
  }
  heap[i] = entry;
}

function heapPop(heap: HeapEntry[]): HeapEntry {
  const top = heap[0];
  const last = heap.pop() as HeapEntry;
  const n = heap.length;
  if (n === 0) return top;
  let i = 0;
  for (;;) {
    const l = 2 * i + 1;
    if (l >= n) break;
    const r = l + 1;
    const c = r < n && before(heap[r], heap[l]) ? r : l;
    if (!before(heap[c], last)) break;
    heap[i] = heap[c];
    i = c;
  }
  heap[i] = last;
  return top;
}
