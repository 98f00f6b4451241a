import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../../src/core/errors.js';
import { Rng } from '../../../src/core/rng.js';
import { trainBpe } from '../../../src/models/tokenizer/train.js';
import { babyAiCorpus, SAMPLE_OBSERVATION } from './babyai-corpus.js';

/** Pseudo-words: enough distinct pairs for a 1024 vocabulary. */
function wordSoup(seed: number, lines: number): string[] {
  const rng = Rng.fromSeed(seed);
  const syllables = ['ka', 'lo', 'mi', 'tre', 'sun', 'ova', 'pix', 'dra', 'eng', 'ul', 'zo', 'qui', 'ber', 'nat', 'fy'];
  return Array.from({ length: lines }, () =>
    Array.from({ length: 8 }, () => Array.from({ length: 1 + rng.int(3) }, () => rng.pick(syllables)).join('')).join(rng.pick([' ', ', ', '. '])),
  );
}

describe('trainBpe', () => {
  it('produces exactly the requested vocabulary size', () => {
    const corpus = [...babyAiCorpus(1, 400), ...wordSoup(2, 2000)];
    expect(trainBpe(corpus, { vocabSize: 512 }).vocabSize).toBe(512);
    expect(trainBpe(corpus, { vocabSize: 1024 }).vocabSize).toBe(1024);
  });

  it('stops early when no pair is seen minFrequency times', () => {
    expect(trainBpe(['ab'], { vocabSize: 300 }).vocabSize).toBe(262);
    const tok = trainBpe(['ab'], { vocabSize: 300, minFrequency: 1 });
    expect(tok.vocabSize).toBe(263);
    expect([...tok.encode('ab')]).toEqual([262]);
  });

  it('merges the most frequent pair first', () => {
    const tok = trainBpe(['xyxyxy', 'ab'], { vocabSize: 263 });
    expect(tok.decode([262])).toBe('xy');
  });

  it('turns frequent multi-word phrases into single tokens', () => {
    const tok = trainBpe(babyAiCorpus(1, 1000), { vocabSize: 512 });
    const phrase = tok.encode(' steps in front of you and');
    expect(phrase.length).toBe(1);
    expect(tok.encode(SAMPLE_OBSERVATION).length).toBeLessThan(60);
  });

  it('is deterministic for the same corpus', () => {
    const corpus = babyAiCorpus(5, 300);
    expect(trainBpe(corpus, { vocabSize: 400 }).toJSON()).toEqual(trainBpe(corpus, { vocabSize: 400 }).toJSON());
  });

  // Its speed is a figure of `npm run bench -- tokenizer`, not a bound here.
  it('fills a 1024 vocabulary from about 2 MB of text', () => {
    const corpus = [...babyAiCorpus(8, 3000), ...wordSoup(9, 12000)];
    const bytes = corpus.reduce((sum, t) => sum + Buffer.byteLength(t), 0);
    expect(bytes).toBeGreaterThan(2_000_000);
    const tok = trainBpe(corpus, { vocabSize: 1024 });
    expect(tok.vocabSize).toBe(1024);
    expect(tok.encode(' steps in front of you').length).toBeLessThan(4);
  });

  it('rejects a vocabulary smaller than specials plus bytes', () => {
    expect(() => trainBpe(['abc'], { vocabSize: 100 })).toThrow(InvalidArgumentError);
    expect(() => trainBpe(['abc'], { vocabSize: 300, minFrequency: 0 })).toThrow(/minFrequency/);
  });
});
