import { describe, expect, it } from 'vitest';
import { naturalCompare } from '../../../src/ui/format/natural-sort.js';

describe('naturalCompare', () => {
  it('orders test-split episode ids by their number, not as text', () => {
    const ids = ['eval/test/0@3', 'eval/test/10@3', 'eval/test/11@3', 'eval/test/1@3', 'eval/test/2@3', 'eval/test/9@3'];
    expect([...ids].sort(naturalCompare)).toEqual(['eval/test/0@3', 'eval/test/1@3', 'eval/test/2@3', 'eval/test/9@3', 'eval/test/10@3', 'eval/test/11@3']);
  });

  it('compares every number in the id in turn', () => {
    const ids = ['run/s2/t10/g1', 'run/s10/t0/g0', 'run/s2/t2/g10', 'run/s2/t2/g2'];
    expect([...ids].sort(naturalCompare)).toEqual(['run/s2/t2/g2', 'run/s2/t2/g10', 'run/s2/t10/g1', 'run/s10/t0/g0']);
  });

  it('falls back to text order, with a shorter string first on a tie', () => {
    expect(naturalCompare('a', 'b')).toBeLessThan(0);
    expect(naturalCompare('ab', 'a')).toBeGreaterThan(0);
    expect(naturalCompare('x7', 'x7')).toBe(0);
    expect(naturalCompare('x1', 'x01')).toBeLessThan(0);
  });
});
