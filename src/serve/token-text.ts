/**
 * Token ids as the text an API returns: each token's own string and bytes (OpenAI's logprobs
 * `token` / `bytes`), and a sequence cut into per-token pieces that join to exactly its decoded
 * text (streaming deltas, `text_offset`).
 *
 * Pieces are found by incremental detokenization over a short window (as streaming servers do):
 * a token's piece is what decoding `window + token` adds to decoding `window`, held back while the
 * text ends in an incomplete character (U+FFFD). Decoding the window as well makes tokenizers that
 * treat a leading space specially (Metaspace) come out right. The pieces are checked to join to the
 * full decode; where they do not (a decoder that rewrites across the window), the slower exact
 * prefix method is used.
 */
import { CHAR_TO_BYTE } from '../models/tokenizer/bytes.js';

/** What the helpers need from a tokenizer. */
export interface TokenDecoder {
  /** Text of ids; special tokens kept when asked. */
  decode(ids: ArrayLike<number>, keepSpecial: boolean): string;
  /** The token string as stored in tokenizer.json (for raw bytes), undefined when unknown. */
  tokenOf?(id: number): string | undefined;
  /** Whether ids are byte-level tokens (GPT-2 byte alphabet), so a token's raw bytes are known exactly. */
  readonly byteLevel?: boolean;
  /** Ids of added tokens (their strings are text, not byte-level). */
  readonly addedIds?: ReadonlySet<number>;
  /** The added tokens marked special (control tokens: never part of a grammar's text). */
  readonly specialIds?: ReadonlySet<number>;
}

/**
 * The string of one token (decoded alone, special tokens kept), as OpenAI's `token` field.
 * @example tokenString(tok, id) // ' the'
 */
export function tokenString(tokenizer: TokenDecoder, id: number): string {
  return tokenizer.decode([id], true);
}

const utf8 = new TextEncoder();

/**
 * The raw bytes of one token: exact for byte-level and byte-fallback (`<0xNN>`) tokens (a token
 * may hold half a character), else the UTF-8 of its string.
 * @example tokenBytes(tok, id) // [32, 116, 104, 101]
 */
export function tokenBytes(tokenizer: TokenDecoder, id: number): number[] {
  const raw = tokenizer.tokenOf?.(id);
  if (raw !== undefined && !tokenizer.addedIds?.has(id)) {
    const fallback = /^<0x([0-9A-Fa-f]{2})>$/.exec(raw);
    if (fallback) return [Number.parseInt(fallback[1] as string, 16)];
    if (tokenizer.byteLevel === true) {
      const bytes: number[] = [];
      for (const ch of raw) {
        const b = CHAR_TO_BYTE.get(ch.charCodeAt(0));
        if (b === undefined) return Array.from(utf8.encode(tokenString(tokenizer, id)));
        bytes.push(b);
      }
      return bytes;
    }
  }
  return Array.from(utf8.encode(tokenString(tokenizer, id)));
}

/** Tokens of context each piece is decoded with. */
const WINDOW = 6;

/**
 * `ids` cut into one piece per token (empty while a character is incomplete); the pieces join to
 * `decode(ids, keepSpecial)`.
 * @example textPieces(tok, ids, false).join('') === tok.decode(ids, false) // true
 */
export function textPieces(tokenizer: Pick<TokenDecoder, 'decode'>, ids: ArrayLike<number>, keepSpecial: boolean): string[] {
  const all = Array.from(ids);
  const full = tokenizer.decode(all, keepSpecial);
  const pieces: string[] = [];
  let prefixStart = 0; // window start
  let readStart = 0; // first token not yet in an emitted piece
  for (let k = 0; k < all.length; k++) {
    const before = tokenizer.decode(all.slice(prefixStart, readStart), keepSpecial);
    const after = tokenizer.decode(all.slice(prefixStart, k + 1), keepSpecial);
    if (after.length > before.length && after.startsWith(before) && !after.endsWith('\uFFFD')) {
      pieces.push(after.slice(before.length));
      readStart = k + 1;
      prefixStart = Math.max(0, readStart - WINDOW);
    } else {
      pieces.push('');
    }
  }
  const joined = pieces.join('');
  if (joined === full) return pieces;
  if (full.startsWith(joined)) {
    // Held back at the end (an incomplete character): the last token carries the rest.
    if (pieces.length > 0) pieces[pieces.length - 1] += full.slice(joined.length);
    if (pieces.join('') === full) return pieces;
  }
  return prefixPieces(tokenizer, all, keepSpecial, full);
}

/** The exact, quadratic method: each token's piece is where the decoded prefix grows. */
function prefixPieces(tokenizer: Pick<TokenDecoder, 'decode'>, ids: number[], keepSpecial: boolean, full: string): string[] {
  const pieces: string[] = [];
  let emitted = 0;
  for (let k = 1; k <= ids.length; k++) {
    const prefix = k === ids.length ? full : tokenizer.decode(ids.slice(0, k), keepSpecial);
    let common = 0;
    const limit = Math.min(prefix.length, full.length);
    while (common < limit && prefix.charCodeAt(common) === full.charCodeAt(common)) common++;
    if (prefix.endsWith('\uFFFD') && k < ids.length) common = Math.min(common, prefix.length - 1);
    const end = Math.max(emitted, common);
    pieces.push(full.slice(emitted, end));
    emitted = end;
  }
  return pieces;
}

/**
 * Character offset of each piece in the joined text, starting at `start`.
 * @example pieceOffsets(['a', 'bc', ''], 5) // [5, 6, 8]
 */
export function pieceOffsets(pieces: readonly string[], start = 0): number[] {
  const out: number[] = [];
  let at = start;
  for (const piece of pieces) {
    out.push(at);
    at += piece.length;
  }
  return out;
}
