import { describe, expect, it } from 'vitest';
import { Rng } from '../../../src/core/rng.js';
import { preTokenize } from '../../../src/models/tokenizer/pretokenize.js';
import { randomUnicode } from './reference.js';

describe('preTokenize', () => {
  it('keeps multi-word phrases together so merges can cross spaces', () => {
    expect(preTokenize('There is a grey box 1 2 steps in front of you and 1 steps to your left.')).toEqual([
      'There is a grey box',
      ' 1',
      ' 2',
      ' steps in front of you and',
      ' 1',
      ' steps to your left',
      '.',
    ]);
  });

  it('isolates newlines, single digits and punctuation runs with their inner spaces', () => {
    expect(preTokenize('anything.\nAvailable actions: ["turn left", "go to red ball 12"]')).toEqual([
      'anything',
      '.',
      '\n',
      'Available actions',
      ': ["',
      'turn left',
      '", "',
      'go to red ball',
      ' 1',
      '2',
      '"]',
    ]);
  });

  it('returns chunks that concatenate back to the input for arbitrary Unicode', () => {
    const rng = Rng.fromSeed(11);
    for (let n = 0; n < 200; n++) {
      const text = randomUnicode(rng, 60);
      const chunks = preTokenize(text);
      expect(chunks.join('')).toBe(text);
      expect(chunks.every((c) => c.length > 0)).toBe(true);
    }
  });
});
