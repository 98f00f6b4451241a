/**
 * Rows per head chunk of prompt scoring (`echo` + `logprobs`, `./prompt-scorer.ts`): a chunk there
 * holds five `[rows, vocab]` float maps at once (the logits, and inside tfjs's `logSoftmax` the
 * shifted logits, their float32 copy, exp and the result), not the training head's three, so the
 * shared chunk budget is divided by five and a chunk stays within it.
 */
import { headChunkRows } from '../models/transformer/chunked-head.js';

/** `[rows, vocab]` float maps a scoring chunk holds at its peak (`./serve-memory.ts` counts the same). */
export const SCORING_HEAD_MAPS = 5;

/**
 * @example scoringChunkRows(151936) // 66 at the default 192 MiB budget
 */
export function scoringChunkRows(vocab: number): number {
  return headChunkRows(vocab, undefined, SCORING_HEAD_MAPS);
}
