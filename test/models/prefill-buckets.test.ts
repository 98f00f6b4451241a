import { describe, expect, it } from 'vitest';
import { type PrefillRow, prefillBuckets } from '../../src/models/prefill-buckets.js';

const row = (index: number, width: number, span = width): PrefillRow => ({ index, width, span });
const loose = { ratio: 0.75, minRows: 1, heads: 2, maxScores: 2 ** 30 };

describe('prefillBuckets', () => {
  it('sorts by span (then width, then index) and splits below the ratio of span or width', () => {
    // spans 10, 9, 7, 7: 9 >= 7.5 joins; 7 < 7.5 opens a bucket; the last 7 joins it.
    const buckets = prefillBuckets([row(3, 7), row(0, 9), row(2, 7), row(1, 10)], loose);
    expect(buckets).toEqual([
      { rows: [1, 0], width: 10, span: 10 },
      { rows: [2, 3], width: 7, span: 7 },
    ]);
    // Same span, but 3 new tokens against a bucket 10 wide (cached prefix): 3 < 7.5 splits.
    expect(prefillBuckets([row(0, 10, 20), row(1, 3, 20)], loose).map((b) => b.rows)).toEqual([[0], [1]]);
  });

  it('does not split off a bucket, or leave rows, under minRows', () => {
    const rows = [row(0, 100), row(1, 50), row(2, 20), row(3, 10)];
    expect(prefillBuckets(rows, { ...loose, minRows: 2 }).map((b) => b.rows)).toEqual([[0, 1], [2, 3]]);
    expect(prefillBuckets(rows, { ...loose, minRows: 3 }).map((b) => b.rows)).toEqual([[0, 1, 2, 3]]);
  });

  it('opens a new bucket when the attention scores would pass maxScores', () => {
    // Two rows of width 4, span 4: rows * heads * width * (span + width) = 2 * 2 * 4 * 8 = 128 > 100.
    const buckets = prefillBuckets([row(0, 4), row(1, 4)], { ...loose, maxScores: 100 });
    expect(buckets.map((b) => b.rows)).toEqual([[0], [1]]);
    expect(prefillBuckets([row(0, 4), row(1, 4)], { ...loose, maxScores: 128 }).map((b) => b.rows)).toEqual([[0, 1]]);
  });
});
