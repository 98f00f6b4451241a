/**
 * Stop strings (`stop`), as OpenAI and vLLM apply them: generation stops at the first token after
 * which the generated text contains one of them; the text is cut where that string starts (the
 * string itself is not returned) and the finish reason is `stop`. Special tokens are not part of
 * the text, so a stop string never matches them.
 */

/** Where a stop string matched. */
export interface StopMatch {
  /** Character index where the returned text ends (the stop string's start). */
  readonly cut: number;
  /** Character index just past the stop string (where generation noticed it). */
  readonly end: number;
}

/**
 * The match generation would stop at: the occurrence that is complete first (earliest end; on a tie
 * the one starting first), or null.
 * @example findStop('Answer: 4\n\nQuestion', ['\n\n', 'Question']) // { cut: 9, end: 11 }
 */
export function findStop(text: string, stops: readonly string[]): StopMatch | null {
  let best: StopMatch | null = null;
  for (const stop of stops) {
    const at = text.indexOf(stop);
    if (at < 0) continue;
    const end = at + stop.length;
    if (best === null || end < best.end || (end === best.end && at < best.cut)) best = { cut: at, end };
  }
  return best;
}

/** Generated tokens cut at a stop string. */
export interface StopCut {
  /** Tokens kept: up to and including the one that completed the stop string. */
  readonly tokens: number;
  /** Their pieces, clamped so that they join to the returned text. */
  readonly pieces: string[];
  readonly text: string;
}

/**
 * Cuts per-token `pieces` (joining to the generated text) at the first stop string, or returns
 * null when none occurs.
 * @example cutAtStop(['4', '\n', '\n', 'Q'], ['\n\n']) // { tokens: 3, pieces: ['4', '', ''], text: '4' }
 */
export function cutAtStop(pieces: readonly string[], stops: readonly string[]): StopCut | null {
  if (stops.length === 0) return null;
  const text = pieces.join('');
  const match = findStop(text, stops);
  if (match === null) return null;
  const kept: string[] = [];
  let at = 0;
  for (const piece of pieces) {
    const start = at;
    at += piece.length;
    kept.push(start >= match.cut ? '' : piece.slice(0, match.cut - start));
    if (at >= match.end) break;
  }
  return { tokens: kept.length, pieces: kept, text: text.slice(0, match.cut) };
}
