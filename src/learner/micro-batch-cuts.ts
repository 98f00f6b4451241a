/**
 * Where to cut a mini-batch's length-sorted sequences into micro-batches of equal work.
 *
 * Why: the gradient workers take whole micro-batches, so a step lasts as long as the busiest
 * worker. Cutting greedily (fill each micro-batch up to the token cap, longest first) left the
 * quickstart with one micro-batch of ~8,200 padded tokens and one of 4–8k, or a third of a few
 * rows: one worker waited for the other on every step. Here the count is first fixed (the fewest
 * the token cap allows, rounded up to a multiple of `multiple`, so that 1, 2 or 4 workers get
 * equal shares), then the cuts minimise the largest micro-batch's estimated work. Sorting by
 * length also means that more, shorter micro-batches carry less padding.
 *
 * The cuts never depend on how many workers there are: a run's numbers stay the same with any
 * `train.dataParallel`.
 */

/** How the cuts are chosen. */
export interface MicroBatchCutOptions {
  /** Cap on padded tokens (rows × longest) per micro-batch; a longer single sequence stands alone. */
  readonly maxTokens: number;
  /** The count of micro-batches is a multiple of this (or every sequence alone when there are fewer). */
  readonly multiple: number;
  /**
   * Sequence length at which attention costs a token as much as its other work (for a decoder,
   * about 2·dModel + 1.5·ffnHidden); a row of length L is estimated at L·(attentionBreakEven + L).
   * Infinity counts padded tokens only.
   */
  readonly attentionBreakEven: number;
}

/** Estimated work of a micro-batch of `rows` rows padded to `length` (integers, so the search is exact). */
function workOf(rows: number, length: number, breakEven: number): number {
  return Number.isFinite(breakEven) ? rows * length * (breakEven + length) : rows * length;
}

/** Greedy ends of micro-batches under both caps: each takes rows while it stays within them. */
function greedyEnds(lengths: readonly number[], maxTokens: number, maxWork: number, breakEven: number): number[] {
  const ends: number[] = [];
  let start = 0;
  while (start < lengths.length) {
    const length = lengths[start] as number;
    let end = start + 1;
    while (end < lengths.length && (end - start + 1) * length <= maxTokens && workOf(end - start + 1, length, breakEven) <= maxWork) end++;
    ends.push(end);
    start = end;
  }
  return ends;
}

/**
 * The end index (exclusive) of each micro-batch over `lengths`, which must be sorted longest
 * first: at most `multiple`·⌈fewest / multiple⌉ micro-batches (fewest = what the token cap alone
 * needs), none above the token cap unless a single sequence is, and the largest estimated work
 * as small as any contiguous cut into that many allows.
 * @example microBatchCuts([9, 8, 4, 4, 3, 2], { maxTokens: 100, multiple: 2, attentionBreakEven: Infinity }) // [2, 6]: 18 and 16 padded tokens
 */
export function microBatchCuts(lengths: readonly number[], options: MicroBatchCutOptions): number[] {
  const { maxTokens, multiple, attentionBreakEven: breakEven } = options;
  if (lengths.length === 0) return [];
  const fewest = greedyEnds(lengths, maxTokens, Number.POSITIVE_INFINITY, breakEven);
  const count = Math.min(lengths.length, Math.ceil(fewest.length / multiple) * multiple);
  // Binary search on the largest work allowed: the greedy cut is the fewest micro-batches for a
  // cap, and its count only falls as the cap rises.
  let low = workOf(1, lengths[0] as number, breakEven) - 1; // below every cut's largest: the longest sequence alone costs one more
  let high = workOf(lengths.length, lengths[0] as number, breakEven); // all rows at the longest length: no micro-batch costs more
  while (high - low > 1) {
    const middle = low + Math.floor((high - low) / 2);
    if (greedyEnds(lengths, maxTokens, middle, breakEven).length <= count) high = middle;
    else low = middle;
  }
  return greedyEnds(lengths, maxTokens, high, breakEven);
}
