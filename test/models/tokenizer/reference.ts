/**
 * Test helpers: a plain, slow, string-based BPE encoder over a `tokenizer.json` object (the
 * readable reference the fast heap encoder is checked against), and seeded random Unicode text.
 */
import type { Rng } from '../../../src/core/rng.js';
import { bytesToTokenString } from '../../../src/models/tokenizer/bytes.js';
import { preTokenize } from '../../../src/models/tokenizer/pretokenize.js';

interface HfJson {
  model: { vocab: Record<string, number>; merges: string[] };
}

/**
 * Reference BPE: per chunk, merge the lowest-rank adjacent pair (leftmost on ties) until none is left.
 * @example referenceEncode(tok.toJSON(), 'hello') // same ids as tok.encode('hello')
 */
export function referenceEncode(json: object, text: string): number[] {
  const { vocab, merges } = (json as HfJson).model;
  const rank = new Map<string, number>(merges.map((m, r) => [m, r]));
  const out: number[] = [];
  for (const chunk of preTokenize(text)) {
    const symbols = Array.from(bytesToTokenString(new TextEncoder().encode(chunk)));
    for (;;) {
      let best = -1;
      let bestRank = Number.POSITIVE_INFINITY;
      for (let i = 0; i + 1 < symbols.length; i++) {
        const r = rank.get(`${symbols[i]} ${symbols[i + 1]}`);
        if (r !== undefined && r < bestRank) {
          bestRank = r;
          best = i;
        }
      }
      if (best < 0) break;
      symbols.splice(best, 2, symbols[best] + symbols[best + 1]);
    }
    for (const s of symbols) out.push(vocab[s]);
  }
  return out;
}

// Code point ranges that stress byte-level encoding: ASCII, Latin-1, Greek, combining marks, CJK,
// emoji (4-byte UTF-8), typographic punctuation, BOM and whitespace oddities.
const RANGES: readonly [number, number][] = [
  [0x20, 0x7e],
  [0x20, 0x7e],
  [0x09, 0x0d],
  [0xa0, 0xff],
  [0x391, 0x3c9],
  [0x300, 0x36f],
  [0x4e00, 0x4e80],
  [0x1f600, 0x1f64f],
  [0x2010, 0x2030],
  [0xfeff, 0xfeff],
  [0x10000, 0x10ffff],
];

/**
 * A seeded random string of valid Unicode (no lone surrogates) of up to `maxLength` code points.
 * @example randomUnicode(Rng.fromSeed(1), 40)
 */
export function randomUnicode(rng: Rng, maxLength: number): string {
  const length = rng.int(maxLength + 1);
  let s = '';
  for (let i = 0; i < length; i++) {
    const [lo, hi] = rng.pick(RANGES);
    let cp = lo + rng.int(hi - lo + 1);
    if (cp >= 0xd800 && cp <= 0xdfff) cp = 0x41;
    s += String.fromCodePoint(cp);
  }
  return s;
}
