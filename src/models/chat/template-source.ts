/**
 * Template text to the syntax tree @huggingface/jinja interprets, read as Jinja2 reads it: the text
 * as Jinja2's lexer sees it (`template-text.ts`), tokens rewritten where the package's parser lacks
 * Jinja2 syntax (`template-tokens.ts`), and:
 *
 * - a test takes an argument, in parentheses or not (`value is sameas true`,
 *   `n is divisibleby(3)`), which the package's parser does not accept. Such a test is renamed to a
 *   placeholder before parsing, and its argument tokens are parsed on their own and hung on the
 *   test node as `testArgs` (read by `python-interpreter.ts`).
 */
import { parse, tokenize } from '@huggingface/jinja';
import { jinjaText } from './template-text.js';
import { rewriteTokens, type Token } from './template-tokens.js';

/** A syntax node (the package's `Statement` classes: `type` names the kind). */
export interface Node {
  readonly type: string;
  [field: string]: unknown;
}
/** A test node with its arguments attached. */
export interface TestNode extends Node {
  readonly type: 'TestExpression';
  readonly operand: Node;
  readonly negate: boolean;
  test: { type: 'Identifier'; value: string };
  testArgs?: Node[];
}

const MARK = '\u0000arg';
const OPEN: Record<string, string> = { OpenParen: 'CloseParen', OpenSquareBracket: 'CloseSquareBracket', OpenCurlyBracket: 'CloseCurlyBracket' };
// Names that end a test rather than start its argument (Jinja2: else, or, and; the rest cannot be one).
const NOT_ARGUMENT = new Set(['else', 'or', 'and', 'if', 'is', 'in', 'not', 'for', 'recursive']);

/** The index just past the bracketed group opening at `start`. */
function skipGroup(tokens: readonly Token[], start: number): number {
  let depth = 0;
  for (let i = start; i < tokens.length; i++) {
    const type = (tokens[i] as Token).type;
    if (type in OPEN) depth++;
    else if (Object.values(OPEN).includes(type) && --depth === 0) return i + 1;
  }
  throw new SyntaxError('unbalanced brackets after a test');
}

/** The index just past a primary expression and its postfixes (`.name`, `[…]`, `(…)`) at `start`. */
function skipPrimary(tokens: readonly Token[], start: number): number {
  let i = (tokens[start] as Token).type in OPEN ? skipGroup(tokens, start) : start + 1;
  for (;;) {
    const next = tokens[i];
    if (next?.type === 'Dot' && tokens[i + 1]?.type === 'Identifier') i += 2;
    else if (next?.type === 'OpenSquareBracket' || next?.type === 'OpenParen') i = skipGroup(tokens, i);
    else return i;
  }
}

/** Renames tests that take arguments; returns the tokens and each placeholder's call tokens (`(` … `)`). */
function markTestArguments(tokens: Token[]): Map<string, Token[]> {
  const calls = new Map<string, Token[]>();
  for (let i = 0; i < tokens.length; i++) {
    if (tokens[i]?.type !== 'Identifier' || tokens[i]?.value !== 'is') continue;
    let t = i + 1;
    if (tokens[t]?.type === 'Identifier' && tokens[t]?.value === 'not') t++;
    const test = tokens[t];
    const next = tokens[t + 1];
    if (test?.type !== 'Identifier' || next === undefined) continue;
    let call: Token[];
    let end: number;
    if (next.type === 'OpenParen') {
      end = skipGroup(tokens, t + 1);
      call = tokens.slice(t + 1, end);
    } else if (['Identifier', 'StringLiteral', 'NumericLiteral', 'OpenSquareBracket', 'OpenCurlyBracket'].includes(next.type) && !(next.type === 'Identifier' && NOT_ARGUMENT.has(next.value))) {
      end = skipPrimary(tokens, t + 1);
      call = [{ type: 'OpenParen', value: '(' }, ...tokens.slice(t + 1, end), { type: 'CloseParen', value: ')' }];
    } else continue;
    const key = `${test.value}${MARK}${calls.size}`;
    calls.set(key, call);
    tokens.splice(t, end - t, { ...test, value: key });
  }
  return calls;
}

function visit(node: unknown, f: (n: Node) => void): void {
  if (Array.isArray(node)) for (const x of node) visit(x, f);
  else if (node instanceof Map) {
    for (const [k, v] of node) {
      visit(k, f);
      visit(v, f);
    }
  }
  else if (typeof node === 'object' && node !== null && typeof (node as Node).type === 'string') {
    f(node as Node);
    for (const value of Object.values(node)) visit(value, f);
  }
}

/**
 * Parses a chat template as Jinja2 does (module comment); throws the parser's error.
 * @example parseTemplate("{{ 'yes' if x is sameas true }}")
 */
export function parseTemplate(source: string): Node {
  const tokens = tokenize(jinjaText(source), {}) as unknown as Token[];
  rewriteTokens(tokens);
  const calls = markTestArguments(tokens);
  const program = parse(tokens as unknown as Parameters<typeof parse>[0]) as unknown as Node;
  if (calls.size === 0) return program;
  const frame = tokenize('{{ f(0) }}', {}) as unknown as Token[];
  const [open, callee, close] = [frame[0], frame[1], frame.at(-1)];
  visit(program, (n) => {
    if (n.type !== 'TestExpression') return;
    const test = n as TestNode;
    const call = calls.get(test.test.value);
    if (call === undefined) return;
    const expr = (parse([open, callee, ...call, close] as unknown as Parameters<typeof parse>[0]) as unknown as { body: Node[] }).body[0] as Node;
    test.test = { type: 'Identifier', value: test.test.value.slice(0, test.test.value.indexOf(MARK)) };
    test.testArgs = expr.args as Node[];
  });
  return program;
}
