import { describe, expect, it } from 'vitest';
import { cellsEqual, type ResultSet, resultsEquivalent } from '../../../src/envs/sql/equivalence.js';

const rs = (rows: (number | string | null)[][], columns = rows[0]?.map((_, i) => `c${i}`) ?? ['c0']): ResultSet => ({ columns, rows });

describe('SQL result-set equivalence', () => {
  it('ignores row order when the gold has no ORDER BY', () => {
    expect(resultsEquivalent(rs([[1], [2], [3]]), rs([[3], [1], [2]]), { ordered: false })).toBe(true);
  });

  it('requires the gold row order when the gold has ORDER BY', () => {
    expect(resultsEquivalent(rs([[1], [2]]), rs([[2], [1]]), { ordered: true })).toBe(false);
    expect(resultsEquivalent(rs([[2], [1]]), rs([[2], [1]]), { ordered: true })).toBe(true);
  });

  it('treats NULL as equal to NULL and to nothing else', () => {
    expect(resultsEquivalent(rs([[null, 'a']]), rs([[null, 'a']]), { ordered: false })).toBe(true);
    expect(cellsEqual(null, 0)).toBe(false);
    expect(cellsEqual(null, '')).toBe(false);
    expect(resultsEquivalent(rs([[null], [1]]), rs([[1], [null]]), { ordered: false })).toBe(true);
  });

  it('compares numbers with a relative tolerance, integers equal to reals, never to strings', () => {
    expect(cellsEqual(104.46938775510205, 104.469387755102)).toBe(true); // AVG vs SUM/COUNT rounding
    expect(cellsEqual(3, 3.0)).toBe(true);
    expect(cellsEqual(1e9, 1e9 + 100)).toBe(true); // 1e-7 relative
    expect(cellsEqual(1e9, 1e9 + 10_000)).toBe(false); // 1e-5 relative
    expect(cellsEqual(104.47, 104.469387755102)).toBe(false); // rounding to 2 places is a different answer
    expect(cellsEqual(3, '3')).toBe(false);
  });

  it('counts duplicates: rows form a multiset', () => {
    expect(resultsEquivalent(rs([[1], [1], [2]]), rs([[1], [2]]), { ordered: false })).toBe(false);
    expect(resultsEquivalent(rs([[1], [2], [2]]), rs([[1], [1], [2]]), { ordered: false })).toBe(false);
    expect(resultsEquivalent(rs([[1], [2], [1]]), rs([[1], [1], [2]]), { ordered: false })).toBe(true);
  });

  it('ignores column names and column order but not the column count', () => {
    const gold = rs([['USA', 254], ['Japan', 79]], ['origin', 'COUNT(*)']);
    expect(resultsEquivalent(rs([[79, 'Japan'], [254, 'USA']], ['n', 'o']), gold, { ordered: false })).toBe(true);
    expect(resultsEquivalent(rs([['USA', 254, 1], ['Japan', 79, 1]]), gold, { ordered: false })).toBe(false);
    expect(resultsEquivalent(rs([['USA'], ['Japan']]), gold, { ordered: false })).toBe(false);
  });

  it('sorts tolerance-equal numbers together when matching unordered rows', () => {
    const gold = rs([[1.0000000000001, 'b'], [1, 'a']]);
    expect(resultsEquivalent(rs([[1, 'b'], [1.0000000000002, 'a']]), gold, { ordered: false })).toBe(true);
  });

  it('rejects a different row count even when every row matches something', () => {
    expect(resultsEquivalent(rs([]), rs([[1]]), { ordered: false })).toBe(false);
    expect(resultsEquivalent(rs([[1]]), rs([]), { ordered: false })).toBe(false);
  });
});
