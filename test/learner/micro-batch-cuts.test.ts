import { describe, expect, it } from 'vitest';
import { microBatchCuts } from '../../src/learner/micro-batch-cuts.js';
import { Rng } from '../../src/core/rng.js';

const work = (rows: number, length: number, breakEven: number) => (Number.isFinite(breakEven) ? rows * length * (breakEven + length) : rows * length);

/** Every contiguous cut of `lengths` into at most `count` parts under the token cap: the smallest largest work. */
function bruteForceBest(lengths: number[], count: number, maxTokens: number, breakEven: number): number {
  let best = Number.POSITIVE_INFINITY;
  const search = (start: number, parts: number, largest: number): void => {
    if (largest >= best) return;
    if (start === lengths.length) {
      best = largest;
      return;
    }
    if (parts === count) return;
    for (let end = start + 1; end <= lengths.length; end++) {
      const rows = end - start;
      if (rows > 1 && rows * lengths[start] > maxTokens) break;
      search(end, parts + 1, Math.max(largest, work(rows, lengths[start], breakEven)));
    }
  };
  search(0, 0, 0);
  return best;
}

/** The parts' works, from their end indices. */
const worksOf = (lengths: number[], ends: number[], breakEven: number) => ends.map((end, i) => work(end - (ends[i - 1] ?? 0), lengths[ends[i - 1] ?? 0], breakEven));

describe('microBatchCuts', () => {
  it('keeps the fewest micro-batches with multiple 1, balanced instead of filled front first', () => {
    // 8 rows of length 10, cap 50 tokens: greedy filling would give 5 + 3 rows; equal work is 4 + 4.
    const lengths = Array.from({ length: 8 }, () => 10);
    expect(microBatchCuts(lengths, { maxTokens: 50, multiple: 1, attentionBreakEven: Number.POSITIVE_INFINITY })).toEqual([4, 8]);
  });

  it('rounds the count up to the multiple, never past one sequence each', () => {
    const lengths = [9, 8, 4, 4, 3, 2];
    expect(microBatchCuts(lengths, { maxTokens: 100, multiple: 2, attentionBreakEven: Number.POSITIVE_INFINITY })).toEqual([2, 6]); // 18 and 16 padded tokens
    expect(microBatchCuts(lengths, { maxTokens: 100, multiple: 4, attentionBreakEven: Number.POSITIVE_INFINITY })).toHaveLength(4);
    expect(microBatchCuts([7, 5], { maxTokens: 100, multiple: 4, attentionBreakEven: Number.POSITIVE_INFINITY })).toEqual([1, 2]);
    expect(microBatchCuts([], { maxTokens: 100, multiple: 4, attentionBreakEven: 10 })).toEqual([]);
  });

  it('gives a sequence longer than the token cap a micro-batch of its own and keeps the rest within the cap', () => {
    const ends = microBatchCuts([12, 3, 3, 2], { maxTokens: 6, multiple: 1, attentionBreakEven: Number.POSITIVE_INFINITY });
    expect(ends[0]).toBe(1);
    const lengths = [12, 3, 3, 2];
    for (let i = 1; i < ends.length; i++) expect((ends[i] - ends[i - 1]) * lengths[ends[i - 1]]).toBeLessThanOrEqual(6);
  });

  it('weighs long rows more when attention counts: the cut moves towards the long end', () => {
    const lengths = [60, 55, 50, 45, 40, 35, 30, 25, 20, 15, 10, 5];
    const tokensOnly = microBatchCuts(lengths, { maxTokens: 10_000, multiple: 2, attentionBreakEven: Number.POSITIVE_INFINITY });
    const withAttention = microBatchCuts(lengths, { maxTokens: 10_000, multiple: 2, attentionBreakEven: 50 });
    expect(tokensOnly).toEqual([5, 12]); // 5·60 = 300 and 7·35 = 245 padded tokens
    expect(withAttention).toEqual([4, 12]); // 4·60·110 = 26,400 and 8·40·90 = 28,800 (5 + 7 rows: 33,000 and 20,825)
  });

  it('reaches the smallest largest work any contiguous cut into that many allows, on random inputs', () => {
    const rng = Rng.fromSeed(7);
    for (let trial = 0; trial < 200; trial++) {
      const n = 1 + rng.int(9);
      const lengths = Array.from({ length: n }, () => 1 + rng.int(30)).sort((a, b) => b - a);
      const maxTokens = 10 + rng.int(120);
      const multiple = 1 + rng.int(4);
      const breakEven = rng.next() < 0.5 ? Number.POSITIVE_INFINITY : 1 + rng.int(60);
      const options = { maxTokens, multiple, attentionBreakEven: breakEven };
      const ends = microBatchCuts(lengths, options);
      // Contiguous, covering, in order.
      expect(ends[ends.length - 1]).toBe(n);
      for (let i = 0; i < ends.length; i++) expect(ends[i]).toBeGreaterThan(ends[i - 1] ?? 0);
      // The count: the fewest the cap allows, rounded up to the multiple (at most one each).
      const fewest = microBatchCuts(lengths, { ...options, multiple: 1 }).length;
      const count = Math.min(n, Math.ceil(fewest / multiple) * multiple);
      expect(ends.length).toBeLessThanOrEqual(count);
      ends.forEach((end, i) => {
        const start = ends[i - 1] ?? 0;
        if (end - start > 1) expect((end - start) * lengths[start]).toBeLessThanOrEqual(maxTokens);
      });
      expect(Math.max(...worksOf(lengths, ends, breakEven))).toBe(bruteForceBest(lengths, count, maxTokens, breakEven));
    }
  });
});
