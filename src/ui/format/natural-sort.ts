/**
 * Text order that reads numbers as numbers: `eval/test/2@0` before `eval/test/10@0` (plain text
 * order puts 10 and 11 before 2). Pure; independent of the locale.
 */

const CHUNKS = /(\d+)/;

/**
 * Compares two strings chunk by chunk: runs of digits by value, other text by code point.
 * @example ['t10', 't2', 't1'].sort(naturalCompare) // ['t1', 't2', 't10']
 */
export function naturalCompare(a: string, b: string): number {
  const x = a.split(CHUNKS);
  const y = b.split(CHUNKS);
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    const p = x[i] as string;
    const q = y[i] as string;
    if (p === q) continue;
    // split() with a capture group puts digit runs at odd indices.
    if (i % 2 === 1) {
      const byValue = Number(p) - Number(q);
      if (byValue !== 0) return byValue;
      return p.length - q.length; // '01' after '1'
    }
    return p < q ? -1 : 1;
  }
  return x.length - y.length;
}
