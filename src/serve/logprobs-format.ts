/**
 * Log-probs in OpenAI's two formats:
 * - chat completions: `{ content: [{ token, logprob, bytes, top_logprobs: [{ token, logprob, bytes }] }], refusal: null }`,
 *   exactly `top_logprobs` alternatives per token (fewer where fewer ids were allowed);
 * - legacy completions: `{ tokens, token_logprobs, top_logprobs, text_offset }`, each `top_logprobs`
 *   entry a `{ token: logprob }` object of the k alternatives plus the chosen token (so up to k + 1
 *   keys, as OpenAI documents), `null` for the first prompt token (nothing predicts it).
 * Every generated token is listed, the closing end-of-turn / eos token included (what was sampled).
 * JSON has no -Infinity: such log-probs are written as -9999, as OpenAI and vLLM do.
 */
import type { TopLogprobs } from '../core/policy.js';
import { type TokenDecoder, tokenBytes, tokenString } from './token-text.js';

const finite = (logprob: number): number => (Number.isFinite(logprob) ? logprob : -9999);

/** One chat logprobs entry. */
export interface ChatTokenLogprob {
  readonly token: string;
  readonly logprob: number;
  readonly bytes: number[];
  readonly top_logprobs: { readonly token: string; readonly logprob: number; readonly bytes: number[] }[];
}

/**
 * The chat `logprobs.content` entries of generated tokens (`top` null: no alternatives asked).
 * @example chatLogprobEntries(tok, choice.tokens, choice.logprobs, choice.top)
 */
export function chatLogprobEntries(tokenizer: TokenDecoder, tokens: Int32Array, logprobs: Float32Array, top: TopLogprobs | null): ChatTokenLogprob[] {
  return Array.from(tokens, (id, j) => {
    const alternatives: ChatTokenLogprob['top_logprobs'] = [];
    if (top !== null) {
      for (let m = 0; m < top.k; m++) {
        const alt = top.ids[j * top.k + m] as number;
        if (alt < 0) continue; // padding: fewer allowed ids than k
        alternatives.push({ token: tokenString(tokenizer, alt), logprob: finite(top.logprobs[j * top.k + m] as number), bytes: tokenBytes(tokenizer, alt) });
      }
    }
    return { token: tokenString(tokenizer, id), logprob: finite(logprobs[j] as number), bytes: tokenBytes(tokenizer, id), top_logprobs: alternatives };
  });
}

/** One position of the legacy format. */
export interface LegacyPosition {
  readonly id: number;
  /** Null for the first prompt token. */
  readonly logprob: number | null;
  /** The k alternatives (ids, log-probs), or null (first prompt token). */
  readonly top: { readonly ids: ArrayLike<number>; readonly logprobs: ArrayLike<number> } | null;
}

/** The legacy `logprobs` object. */
export interface LegacyLogprobs {
  readonly tokens: string[];
  readonly token_logprobs: (number | null)[];
  readonly top_logprobs: (Record<string, number> | null)[];
  readonly text_offset: number[];
}

/**
 * The legacy object for `positions`, with `offsets` (each token's character offset in the returned text).
 * @example legacyLogprobs(tok, positions, pieceOffsets(pieces))
 */
export function legacyLogprobs(tokenizer: TokenDecoder, positions: readonly LegacyPosition[], offsets: readonly number[]): LegacyLogprobs {
  const out: LegacyLogprobs = { tokens: [], token_logprobs: [], top_logprobs: [], text_offset: [...offsets] };
  for (const p of positions) {
    const token = tokenString(tokenizer, p.id);
    out.tokens.push(token);
    out.token_logprobs.push(p.logprob === null ? null : finite(p.logprob));
    if (p.top === null || p.logprob === null) {
      out.top_logprobs.push(null);
      continue;
    }
    const entry: Record<string, number> = {};
    for (let m = 0; m < p.top.ids.length; m++) {
      const alt = p.top.ids[m] as number;
      if (alt < 0) continue;
      const key = tokenString(tokenizer, alt);
      if (!(key in entry)) entry[key] = finite(p.top.logprobs[m] as number);
    }
    if (!(token in entry)) entry[token] = finite(p.logprob);
    out.top_logprobs.push(entry);
  }
  return out;
}

/**
 * The k alternatives of position `j` of a `[n, k]` table, as a {@link LegacyPosition}'s `top`.
 * @example topAt(result.topLogprobs, 3)
 */
export function topAt(top: TopLogprobs | null, j: number): LegacyPosition['top'] {
  if (top === null) return { ids: [], logprobs: [] };
  return { ids: top.ids.subarray(j * top.k, (j + 1) * top.k), logprobs: top.logprobs.subarray(j * top.k, (j + 1) * top.k) };
}
