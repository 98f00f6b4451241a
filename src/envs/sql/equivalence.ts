/**
 * Result-set equivalence, the reward rule of the SQL environment (execution accuracy, as in Spider's
 * test-suite evaluation):
 *
 * - rows are compared as a multiset (order-insensitive, duplicates counted) unless the gold query
 *   has a top-level ORDER BY, in which case row order must match too;
 * - NULL equals NULL (and nothing else);
 * - numbers are equal within a relative tolerance (1e-6, absolute below 1), so `AVG(x)` and
 *   `SUM(x) * 1.0 / COUNT(x)` agree; an integer equals the same real (`3` = `3.0`); a number never
 *   equals a string;
 * - column names are ignored; column order is ignored too (the columns may be permuted, for up to
 *   six columns), but the column count must match.
 */
import type { Cell } from './schema.js';

/** A query result: column names and rows of cells. */
export interface ResultSet {
  readonly columns: readonly string[];
  readonly rows: readonly (readonly Cell[])[];
}

/** Relative tolerance of numeric comparison. */
export const NUMERIC_TOLERANCE = 1e-6;
const MAX_PERMUTED_COLUMNS = 6;

/**
 * Whether two cells are equal under the rules in the module comment.
 * @example cellsEqual(3, 3.0000000001) // true
 */
export function cellsEqual(a: Cell, b: Cell): boolean {
  if (a === null || b === null) return a === b;
  if (typeof a === 'number' && typeof b === 'number') {
    if (a === b) return true;
    return Math.abs(a - b) <= NUMERIC_TOLERANCE * Math.max(1, Math.abs(a), Math.abs(b));
  }
  return a === b;
}

// Sort key: type rank, then value; numbers rounded so that tolerance-equal values sort together.
function compareCells(a: Cell, b: Cell): number {
  const rank = (c: Cell) => (c === null ? 0 : typeof c === 'number' ? 1 : 2);
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  if (typeof a === 'number' && typeof b === 'number') {
    const ka = Number(a.toPrecision(9));
    const kb = Number(b.toPrecision(9));
    return ka < kb ? -1 : ka > kb ? 1 : 0;
  }
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  return 0;
}

function compareRows(a: readonly Cell[], b: readonly Cell[]): number {
  for (let i = 0; i < a.length; i++) {
    const c = compareCells(a[i] as Cell, b[i] as Cell);
    if (c !== 0) return c;
  }
  return 0;
}

function rowsEqual(a: readonly Cell[], b: readonly Cell[]): boolean {
  return a.length === b.length && a.every((cell, i) => cellsEqual(cell, b[i] as Cell));
}

function sameRows(got: readonly (readonly Cell[])[], gold: readonly (readonly Cell[])[], ordered: boolean): boolean {
  if (got.length !== gold.length) return false;
  const a = ordered ? got : [...got].sort(compareRows);
  const b = ordered ? gold : [...gold].sort(compareRows);
  return a.every((row, i) => rowsEqual(row, b[i] as readonly Cell[]));
}

function* permutations(n: number): Generator<number[]> {
  const perm = Array.from({ length: n }, (_, i) => i);
  yield [...perm];
  // Heap's algorithm, iterative.
  const c = new Array<number>(n).fill(0);
  let i = 0;
  while (i < n) {
    if ((c[i] as number) < i) {
      const j = i % 2 === 0 ? 0 : (c[i] as number);
      [perm[j], perm[i]] = [perm[i] as number, perm[j] as number];
      yield [...perm];
      c[i] = (c[i] as number) + 1;
      i = 0;
    } else {
      c[i] = 0;
      i++;
    }
  }
}

/**
 * Whether `got` answers the question as `gold` does (rules in the module comment).
 * @example
 * resultsEquivalent({ columns: ['n'], rows: [[1], [2]] }, { columns: ['x'], rows: [[2], [1]] }, { ordered: false }) // true
 */
export function resultsEquivalent(got: ResultSet, gold: ResultSet, options: { readonly ordered: boolean }): boolean {
  const width = gold.columns.length;
  if (got.columns.length !== width || got.rows.length !== gold.rows.length) return false;
  if (sameRows(got.rows, gold.rows, options.ordered)) return true;
  if (width < 2 || width > MAX_PERMUTED_COLUMNS) return false;
  let first = true;
  for (const perm of permutations(width)) {
    if (first) {
      first = false; // the identity was tried above
      continue;
    }
    const permuted = got.rows.map((row) => perm.map((j) => row[j] as Cell));
    if (sameRows(permuted, gold.rows, options.ordered)) return true;
  }
  return false;
}
