/**
 * The GPT-2 byte ↔ unicode table used by Hugging Face `ByteLevel` pre-tokenizers and decoders.
 *
 * Why: `tokenizer.json` stores tokens as JSON strings, and raw bytes (control characters, spaces,
 * halves of UTF-8 sequences) are not safe or readable there. GPT-2 maps each of the 256 bytes to a
 * printable code point (printable Latin-1 maps to itself, the rest to U+0100..U+0143, so space
 * becomes `Ġ`). Our tokenizer works on byte ids internally and only uses this table to read and
 * write the Hugging Face format.
 */

/** Builds the 256-entry table, identical to `bytes_to_unicode()` in GPT-2 and HF tokenizers. */
function buildByteToChar(): string[] {
  const printable: number[] = [];
  for (let b = 0x21; b <= 0x7e; b++) printable.push(b);
  for (let b = 0xa1; b <= 0xac; b++) printable.push(b);
  for (let b = 0xae; b <= 0xff; b++) printable.push(b);
  const table = new Array<string>(256);
  const isPrintable = new Set(printable);
  let shifted = 0;
  for (let b = 0; b < 256; b++) {
    table[b] = isPrintable.has(b) ? String.fromCharCode(b) : String.fromCharCode(256 + shifted++);
  }
  return table;
}

/**
 * `BYTE_TO_CHAR[b]` is the one-character string that stands for byte `b` in `tokenizer.json`.
 * @example BYTE_TO_CHAR[0x20] // 'Ġ'
 */
export const BYTE_TO_CHAR: readonly string[] = buildByteToChar();

/**
 * Inverse of {@link BYTE_TO_CHAR}: code point → byte.
 * @example CHAR_TO_BYTE.get('Ġ'.charCodeAt(0)) // 32
 */
export const CHAR_TO_BYTE: ReadonlyMap<number, number> = new Map(BYTE_TO_CHAR.map((c, b) => [c.charCodeAt(0), b]));

/**
 * Writes bytes as their byte-level string (the form tokens take in `tokenizer.json`).
 * @example bytesToTokenString(new Uint8Array([104, 105, 32])) // 'hiĠ'
 */
export function bytesToTokenString(bytes: ArrayLike<number>): string {
  let out = '';
  for (let i = 0; i < bytes.length; i++) out += BYTE_TO_CHAR[bytes[i]];
  return out;
}

/**
 * Reads a byte-level token string back into bytes; `undefined` when a character is not one of the
 * 256 byte characters (the string is not a byte-level token).
 * @example tokenStringToBytes('hiĠ') // Uint8Array [104, 105, 32]
 */
export function tokenStringToBytes(token: string): Uint8Array | undefined {
  const out = new Uint8Array(token.length);
  for (let i = 0; i < token.length; i++) {
    const b = CHAR_TO_BYTE.get(token.charCodeAt(i));
    if (b === undefined) return undefined;
    out[i] = b;
  }
  return out;
}
