/**
 * Template text as Jinja2's lexer sees it, for @huggingface/jinja's tokenizer (which is then run
 * without its own `lstrip_blocks`/`trim_blocks`, whose regular expressions differ from Jinja2's):
 *
 * - newlines are `\n` (Jinja2 normalizes `\r\n` and `\r`);
 * - `lstrip_blocks`: spaces and tabs before `{%` / `{#` at the start of a line go, but not before
 *   `{%+` / `{#+`; `trim_blocks`: the newline after `%}` / `#}` goes, but not after `+%}`;
 *   the `+` markers themselves are then dropped (the package's lexer rejects them);
 * - in string literals, escapes Python decodes and the package does not (`\a`, octal `\0`–`\7`,
 *   `\U0001F600`, a backslash-newline) are decoded here, and unknown ones (`\d`) keep their
 *   backslash, as Python keeps it.
 */

// Escapes the package's lexer decodes itself.
const PACKAGE_ESCAPES = new Set(['n', 't', 'r', 'b', 'f', 'v', "'", '"', '\\', 'x', 'u']);

function decodeEscapes(tag: string): string {
  return tag.replace(/\\(U[0-9a-fA-F]{8}|[0-7]{1,3}|[\s\S])/g, (whole, esc: string) => {
    if (PACKAGE_ESCAPES.has(esc)) return whole;
    if (esc.length === 9) return String.fromCodePoint(Number.parseInt(esc.slice(1), 16));
    if (/^[0-7]+$/.test(esc)) return String.fromCodePoint(Number.parseInt(esc, 8));
    if (esc === 'a') return '\x07';
    if (esc === '\n') return '';
    return `\\\\${esc}`;
  });
}

/**
 * The text to hand the package's tokenizer (module comment).
 * @example jinjaText('  {% if x %}\n{{ "\\d" }}') // '{% if x %}{{ "\\\\d" }}'
 */
export function jinjaText(source: string): string {
  return source
    .replace(/\r\n?/g, '\n')
    .replace(/^[ \t]+(?=\{[%#](?!\+))/gm, '')
    .replace(/(?<!\+)([%#]\})\n/g, '$1')
    .replace(/\{([%#])\+/g, '{$1')
    .replace(/\+([%#])\}/g, '$1}')
    .replace(/\{\{[\s\S]*?\}\}|\{%[\s\S]*?%\}/g, decodeEscapes);
}
