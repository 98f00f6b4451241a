/**
 * Pre-tokenization: how text is cut into chunks before BPE merges run inside each chunk.
 *
 * The rule (one regex, used with Hugging Face `Split` behaviour `Isolated`: every match is its own
 * chunk and the text between matches is kept as chunks too):
 *
 * - `\n+`: a run of newlines is its own chunk, so merges never cross lines;
 * - ` ?\p{N}`: every digit is its own chunk (with the space before it), so `12` is `1` `2` and
 *   object indices and step counts stay compositional instead of becoming arbitrary number tokens;
 * - ` ?P+( P+)*` where `P` is anything but a letter, mark, digit, space or newline: a run of
 *   punctuation, brackets, quotes and symbols, spaces allowed between them, so `", "`, `: ["` and
 *   `"]` each become one chunk (list separators are one token, as in the learnability probe).
 *
 * Everything else, letters with the spaces between them, stays in one chunk: merges cross spaces,
 * so frequent phrases such as ` steps in front of you and` or `Available actions` become single
 * tokens. Why: observations repeat a small set of multi-word templates, the policy is small, and
 * prompt length drives rollout cost, so short sequences matter more than word-level structure.
 *
 * The regex uses only constructs that Oniguruma (Rust `tokenizers`) and JavaScript `u` mode read
 * identically (`\p{L}`, `\p{M}`, `\p{N}`, literal space and `\n`, one leftmost-first alternation).
 */

/**
 * The split regex, as written into `tokenizer.json` (`Split` → `pattern.Regex`).
 * @example new RegExp(SPLIT_PATTERN, 'gu').test('", "') // true
 */
export const SPLIT_PATTERN = '\\n+| ?\\p{N}| ?[^\\p{L}\\p{M}\\p{N} \\n]+(?: [^\\p{L}\\p{M}\\p{N} \\n]+)*';

const SPLIT_REGEX = new RegExp(SPLIT_PATTERN, 'gu');

/**
 * Cuts `text` into the chunks BPE merges are confined to (HF `Split`, `Isolated`, not inverted).
 * Concatenating the chunks gives back `text` exactly.
 * @example preTokenize('There is a red ball 1 2 steps.') // ['There is a red ball', ' 1', ' 2', ' steps', '.']
 */
export function preTokenize(text: string): string[] {
  const chunks: string[] = [];
  let start = 0;
  SPLIT_REGEX.lastIndex = 0;
  for (let m = SPLIT_REGEX.exec(text); m !== null; m = SPLIT_REGEX.exec(text)) {
    if (m.index > start) chunks.push(text.slice(start, m.index));
    chunks.push(m[0]);
    start = m.index + m[0].length;
  }
  if (start < text.length) chunks.push(text.slice(start));
  return chunks;
}
