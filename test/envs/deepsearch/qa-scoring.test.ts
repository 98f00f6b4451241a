import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { exactMatchScore, f1Score, normalizeAnswer, qaScore, substringMatchScore } from '../../../src/envs/deepsearch/qa-scoring.js';

// Computed by Python (scripts/deepsearch-fixtures/record.py) with Search-R1's normalisation rules.
const cases = JSON.parse(readFileSync(new URL('./fixtures/qa-scores.json', import.meta.url), 'utf8')) as {
  answer: string;
  golds: string[];
  normalized: string;
  em: number;
  subem: number;
  f1: number;
}[];

describe('QA scores with Search-R1 normalisation', () => {
  it.each(cases.map((c) => [c.answer, c] as const))('%j: normalisation, em, subem and f1 equal Python', (_, c) => {
    expect(normalizeAnswer(c.answer)).toBe(c.normalized);
    expect(exactMatchScore(c.answer, c.golds)).toBe(c.em);
    expect(substringMatchScore(c.answer, c.golds)).toBe(c.subem);
    expect(f1Score(c.answer, c.golds)).toBeCloseTo(c.f1, 12);
  });

  it('keeps an article glued to a non-ASCII letter, as Python does (ça keeps its a)', () => {
    expect(normalizeAnswer('ça va')).toBe('ça va');
    expect(normalizeAnswer('théâtre the')).toBe('théâtre');
  });

  it('dispatches on the metric name', () => {
    expect(qaScore('em', 'Paris, France', ['Paris'])).toBe(0);
    expect(qaScore('subem', 'Paris, France', ['Paris'])).toBe(1);
    expect(qaScore('f1', 'Paris, France', ['Paris'])).toBeCloseTo(2 / 3, 12);
  });
});
