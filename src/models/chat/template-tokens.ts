/**
 * Token rewrites for Jinja2 syntax @huggingface/jinja's parser lacks:
 *
 * - float literals with an exponent (`1e-5`, `2.5E3`), which its lexer splits into a number and a name;
 * - one-item and empty tuples (`(x,)`, `()`), which become a call of {@link TUPLE_CALLEE}
 *   (`python-interpreter.ts` builds the tuple), and trailing commas in calls, lists and dicts.
 */

/** A token of the package's lexer. */
export interface Token {
  value: string;
  type: string;
}

/** The callee name that stands for Python's tuple display. */
export const TUPLE_CALLEE = '\u0000tuple';

const OPENERS: Record<string, string> = { OpenParen: 'CloseParen', OpenSquareBracket: 'CloseSquareBracket', OpenCurlyBracket: 'CloseCurlyBracket' };
// After these a `(` opens a call, not a group (keywords excepted).
const CALLABLE = new Set(['Identifier', 'CloseParen', 'CloseSquareBracket', 'StringLiteral']);
const KEYWORDS = new Set(['in', 'is', 'and', 'or', 'not', 'if', 'else', 'elif', 'for', 'set', 'return', 'recursive']);

function mergeExponents(tokens: Token[]): void {
  for (let i = 0; i < tokens.length - 1; i++) {
    const num = tokens[i] as Token;
    const next = tokens[i + 1] as Token;
    if (num.type !== 'NumericLiteral' || next.type !== 'Identifier') continue;
    const mantissa = num.value.includes('.') ? num.value : `${num.value}.0`;
    if (/^[eE]\d+$/.test(next.value)) {
      tokens.splice(i, 2, { ...num, value: `${mantissa}e${next.value.slice(1)}` });
    } else if (/^[eE]$/.test(next.value) && ['+', '-'].includes(tokens[i + 2]?.value ?? '') && tokens[i + 3]?.type === 'NumericLiteral' && /^\d+$/.test(tokens[i + 3]?.value ?? '')) {
      tokens.splice(i, 4, { ...num, value: `${mantissa}e${tokens[i + 2]?.value}${tokens[i + 3]?.value}` });
    }
  }
}

/** The index of the bracket closing the one at `start`. */
function closing(tokens: readonly Token[], start: number): number {
  let depth = 0;
  for (let i = start; i < tokens.length; i++) {
    const type = (tokens[i] as Token).type;
    if (type in OPENERS) depth++;
    else if (Object.values(OPENERS).includes(type) && --depth === 0) return i;
  }
  return -1;
}

/** Whether the group between `open` and `close` has a comma at its own depth before `end`. */
function hasTopLevelComma(tokens: readonly Token[], open: number, end: number): boolean {
  let depth = 0;
  for (let i = open + 1; i < end; i++) {
    const type = (tokens[i] as Token).type;
    if (type in OPENERS) depth++;
    else if (Object.values(OPENERS).includes(type)) depth--;
    else if (type === 'Comma' && depth === 0) return true;
  }
  return false;
}

function rewriteTuplesAndCommas(tokens: Token[]): void {
  for (let i = 0; i < tokens.length; i++) {
    const open = tokens[i] as Token;
    if (!(open.type in OPENERS)) continue;
    const close = closing(tokens, i);
    if (close < 0) return;
    const previous = tokens[i - 1];
    const isCall = open.type === 'OpenParen' && previous !== undefined && CALLABLE.has(previous.type) && !(previous.type === 'Identifier' && KEYWORDS.has(previous.value));
    const trailing = tokens[close - 1]?.type === 'Comma' && close - 1 > i;
    if (open.type === 'OpenParen' && !isCall && (close === i + 1 || (trailing && !hasTopLevelComma(tokens, i, close - 1)))) {
      if (trailing) tokens.splice(close - 1, 1);
      tokens.splice(i, 0, { type: 'Identifier', value: TUPLE_CALLEE });
      i++;
    } else if (trailing) tokens.splice(close - 1, 1);
  }
}

/**
 * Rewrites `tokens` in place (module comment).
 * @example rewriteTokens(tokenize('{{ (1,) }}')) // … Identifier '\u0000tuple', OpenParen, NumericLiteral 1, CloseParen …
 */
export function rewriteTokens(tokens: Token[]): void {
  mergeExponents(tokens);
  rewriteTuplesAndCommas(tokens);
}
