/**
 * Buckets of the padded prefill (`TransformerPolicy` with `packed: false`): which requests share
 * one left-padded `extend` call. Buckets bound two kinds of padding: new tokens (width: every
 * projection) and cached + new slots (span: attention keys). Sorted by span, a row opens a new
 * bucket when it would leave either below `ratio` of the bucket's (measured faster on wasm than
 * one padded batch), unless that would leave a bucket, or the rows still to place, under
 * `minRows`. Attention scores of one call are `[rows, heads, width, span]` floats: capped at
 * `maxScores`, so that 64 long contexts cannot exhaust the wasm heap (64 x 4 x 800 x 800 > 1 GB).
 */

/** One request to prefill. */
export interface PrefillRow {
  /** Request index (ties are broken by it, so buckets are deterministic). */
  readonly index: number;
  /** New tokens to feed. */
  readonly width: number;
  /** Cached + new tokens: the attention keys of its last query. */
  readonly span: number;
}

/** Requests prefilled together, left-padded to `width` new tokens. */
export interface PrefillBucket {
  /** Request indices, longest span first. */
  readonly rows: number[];
  /** Most new tokens of a row in the bucket. */
  width: number;
  /** Span of the bucket's first (longest) row. */
  readonly span: number;
}

/** How tight buckets are and how large one may grow. */
export interface BucketLimits {
  /** A row opens a new bucket below this fraction of the bucket's span or width (or the bucket's width below it of the row's). */
  readonly ratio: number;
  /** Buckets, and the rows left after one, smaller than this are not split off. */
  readonly minRows: number;
  /** Attention heads of the model. */
  readonly heads: number;
  /** Most attention scores (rows x heads x width x slots) one bucket may hold. */
  readonly maxScores: number;
}

/**
 * Groups rows into prefill buckets (see the file comment).
 * @example
 * prefillBuckets([{ index: 0, width: 10, span: 10 }, { index: 1, width: 2, span: 2 }], { ratio: 0.75, minRows: 1, heads: 4, maxScores: 2 ** 24 })
 * // [{ rows: [0], width: 10, span: 10 }, { rows: [1], width: 2, span: 2 }]
 */
export function prefillBuckets(rows: readonly PrefillRow[], limits: BucketLimits): PrefillBucket[] {
  const { ratio, minRows, heads, maxScores } = limits;
  const sorted = [...rows].sort((a, b) => b.span - a.span || b.width - a.width || a.index - b.index);
  const tooBig = (n: number, width: number, slots: number) => n * heads * width * slots > maxScores;
  const buckets: PrefillBucket[] = [];
  sorted.forEach((row, k) => {
    const bucket = buckets[buckets.length - 1];
    const len = row.width;
    const ragged = bucket !== undefined && (row.span < ratio * bucket.span || len < ratio * bucket.width || bucket.width < ratio * len);
    const full = bucket !== undefined && tooBig(bucket.rows.length + 1, Math.max(bucket.width, len), bucket.span + Math.max(bucket.width, len));
    if (bucket === undefined || full || (ragged && bucket.rows.length >= minRows && sorted.length - k >= minRows)) {
      buckets.push({ rows: [row.index], width: len, span: row.span });
    } else {
      bucket.rows.push(row.index);
      bucket.width = Math.max(bucket.width, len);
    }
  });
  return buckets;
}
