import { beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../../src/core/errors.js';
import { Rng } from '../../../src/core/rng.js';
import { BpeTokenizer } from '../../../src/models/tokenizer/bpe.js';
import { trainBpe } from '../../../src/models/tokenizer/train.js';
import { BYTE_ID_OFFSET, baseVocab } from '../../../src/models/tokenizer/tables.js';
import { babyAiCorpus, SAMPLE_OBSERVATION } from './babyai-corpus.js';
import { randomUnicode, referenceEncode } from './reference.js';

const byte = (ch: string): number => ch.charCodeAt(0) + BYTE_ID_OFFSET;

/** Base vocabulary plus the given merged tokens, merged in the given rank order. */
function handMade(merges: [string, string][]): BpeTokenizer {
  const vocab = baseVocab();
  const idOf = new Map<string, number>();
  for (let b = 0; b < 256; b++) idOf.set(String.fromCharCode(b), b + BYTE_ID_OFFSET);
  const pairs = merges.map(([l, r]): [number, number] => {
    if (!idOf.has(l + r)) {
      idOf.set(l + r, vocab.length);
      vocab.push(new TextEncoder().encode(l + r));
    }
    return [idOf.get(l) as number, idOf.get(r) as number];
  });
  return new BpeTokenizer({ vocab, merges: pairs });
}

describe('BpeTokenizer', () => {
  let tok: BpeTokenizer;
  beforeAll(() => {
    tok = trainBpe([...babyAiCorpus(3, 600), ...babyAiCorpus(4, 50).map((t) => t.toUpperCase())], { vocabSize: 600 });
  });

  it('applies merges in rank order, not in text order', () => {
    // 'abc': with (b,c) ranked first the result is a|bc; with (a,b) first it is ab|c.
    const bcFirst = handMade([
      ['b', 'c'],
      ['a', 'b'],
    ]);
    expect([...bcFirst.encode('abc')]).toEqual([byte('a'), bcFirst.vocabSize - 2]);
    const abFirst = handMade([
      ['a', 'b'],
      ['b', 'c'],
    ]);
    expect([...abFirst.encode('abc')]).toEqual([abFirst.vocabSize - 2, byte('c')]);
  });

  it('merges the leftmost occurrence first when one pair overlaps itself', () => {
    const aa = handMade([['a', 'a']]);
    expect([...aa.encode('aaa')]).toEqual([aa.vocabSize - 1, byte('a')]);
    expect([...aa.encode('aaaa')]).toEqual([aa.vocabSize - 1, aa.vocabSize - 1]);
  });

  it('encodes exactly like the plain reference BPE on observations and random Unicode', () => {
    const json = tok.toJSON();
    const rng = Rng.fromSeed(5);
    const texts = [SAMPLE_OBSERVATION, ...babyAiCorpus(77, 30), ...Array.from({ length: 150 }, () => randomUnicode(rng, 50))];
    for (const text of texts) expect([...tok.encode(text)]).toEqual(referenceEncode(json, text));
  });

  it('round-trips encode → decode exactly for random Unicode strings', () => {
    const rng = Rng.fromSeed(9);
    for (let n = 0; n < 300; n++) {
      const text = randomUnicode(rng, 80);
      expect(tok.decode(tok.encode(text))).toBe(text);
    }
    expect(tok.decode(tok.encode('\uFEFFleading BOM'))).toBe('\uFEFFleading BOM');
  });

  it('never produces special-token ids from plain text, even from special-token strings', () => {
    const ids = tok.encode('<|pad|><|bos|><|system|><|obs|><|act|><|end|> turn left');
    expect([...ids].every((id) => id >= BYTE_ID_OFFSET)).toBe(true);
    expect(tok.decode(ids)).toBe('<|pad|><|bos|><|system|><|obs|><|act|><|end|> turn left');
  });

  it('drops special tokens in decode unless asked to keep them', () => {
    const ids = [tok.specialId('bos'), ...tok.encode('go to'), tok.specialId('end')];
    expect(tok.decode(ids)).toBe('go to');
    expect(tok.decode(ids, true)).toBe('<|bos|>go to<|end|>');
  });

  it('gives the fixed special ids 0..5', () => {
    expect(['pad', 'bos', 'system', 'observation', 'action', 'end'].map((n) => tok.specialId(n as 'pad'))).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('returns a fresh array from the cache so callers cannot corrupt it', () => {
    const first = tok.encode(SAMPLE_OBSERVATION);
    const expected = [...first];
    first.fill(0);
    expect([...tok.encode(SAMPLE_OBSERVATION)]).toEqual(expected);
  });

  it('encodes the same with and without caches', () => {
    const uncached = BpeTokenizer.fromJSON(tok.toJSON(), { textCacheSize: 0, chunkCacheSize: 0 });
    for (const text of babyAiCorpus(21, 40)) {
      expect([...uncached.encode(text)]).toEqual([...tok.encode(text)]);
      expect([...uncached.encode(text)]).toEqual([...tok.encode(text)]); // second call hits tok's caches
    }
  });

  it('rejects ids outside the vocabulary when decoding', () => {
    expect(() => tok.decode([tok.vocabSize])).toThrow(InvalidArgumentError);
    expect(() => tok.decode([-1])).toThrow(/ids\[0\]/);
  });
});
