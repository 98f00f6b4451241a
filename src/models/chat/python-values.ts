/**
 * Python's view of template values, as Jinja2 under transformers has it: `str()` and `repr()`
 * (what `{{ x }}`, `~` and `|string` write: `True`, `None`, `{'a': 1}`), `json.dumps` (transformers'
 * `tojson`), `==` and ordering. @huggingface/jinja writes JavaScript's views instead (`true`,
 * nothing for None, JSON for a dict), so turnwise's interpreter routes through these.
 */
import { isArray, isBoolean, isDict, isNamespace, isNumber, isString, type JinjaValue, type MapValue } from './jinja-values.js';

/** Python's `repr(float)`: shortest round-trip digits, `.0` on whole numbers, exponent past 1e16 or under 1e-4. */
export function pyFloat(n: number): string {
  if (Number.isNaN(n)) return 'nan';
  if (!Number.isFinite(n)) return n > 0 ? 'inf' : '-inf';
  if (n === 0) return Object.is(n, -0) ? '-0.0' : '0.0';
  const [mantissa, exp] = n.toExponential().split('e') as [string, string];
  const e = Number(exp);
  const sign = mantissa.startsWith('-') ? '-' : '';
  const digits = mantissa.replace(/[-.]/g, '');
  if (e >= -4 && e < 16) {
    if (e < 0) return `${sign}0.${'0'.repeat(-e - 1)}${digits}`;
    const whole = digits.slice(0, e + 1).padEnd(e + 1, '0');
    const frac = digits.slice(e + 1);
    return `${sign}${whole}.${frac === '' ? '0' : frac}`;
  }
  const m = digits.length === 1 ? digits : `${digits[0]}.${digits.slice(1)}`;
  return `${sign}${m}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
}

// Python's str.isprintable() is false for these (space excepted).
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

/** Python's `repr(str)`: single quotes unless the text has one and no double quote; unprintables escaped. */
export function pyStringRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const cp = ch.codePointAt(0) as number;
    if (ch === quote || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch !== ' ' && UNPRINTABLE.test(ch)) out += cp < 0x100 ? `\\x${cp.toString(16).padStart(2, '0')}` : cp < 0x10000 ? `\\u${cp.toString(16).padStart(4, '0')}` : `\\U${cp.toString(16).padStart(8, '0')}`;
    else out += ch;
  }
  return out + quote;
}

function mapRepr(v: MapValue): string {
  return `{${[...v.value].map(([k, x]) => `${pyStringRepr(k)}: ${pyRepr(x)}`).join(', ')}}`;
}

/** Python's `repr()` of a template value. */
export function pyRepr(v: JinjaValue): string {
  if (isString(v)) return pyStringRepr(v.value);
  if (v.type === 'TupleValue') {
    const items = (v.value as JinjaValue[]).map(pyRepr);
    return items.length === 1 ? `(${items[0]},)` : `(${items.join(', ')})`;
  }
  if (isArray(v)) return `[${v.value.map(pyRepr).join(', ')}]`;
  if (v.type === 'UndefinedValue') return 'Undefined';
  return pyStr(v);
}

/** Python's `str()` of a template value (Jinja2 writes an undefined value as nothing). */
export function pyStr(v: JinjaValue): string {
  switch (v.type) {
    case 'StringValue':
      return v.value as string;
    case 'IntegerValue':
      return Object.is(v.value, -0) ? '-0.0' : String(v.value); // -0 came from a float
    case 'FloatValue':
      return pyFloat(v.value as number);
    case 'BooleanValue':
      return v.value ? 'True' : 'False';
    case 'NullValue':
      return 'None';
    case 'UndefinedValue':
      return '';
    case 'ObjectValue':
    case 'KeywordArgumentsValue':
      return mapRepr(v as MapValue);
    case 'NamespaceValue':
      return `<Namespace ${mapRepr(v as MapValue)}>`;
    case 'FunctionValue':
      return '<function>';
    default:
      return pyRepr(v);
  }
}

/** Options of Python's `json.dumps` that transformers' `tojson` takes. */
export interface JsonOptions {
  readonly ensureAscii?: boolean;
  readonly indent?: number | string | null;
  readonly separators?: readonly [string, string] | null;
  readonly sortKeys?: boolean;
}

function jsonString(s: string, ensureAscii: boolean): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0) as number;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else if (cp < 0x20 || (ensureAscii && cp > 0x7e)) {
      for (let i = 0; i < ch.length; i++) out += `\\u${ch.charCodeAt(i).toString(16).padStart(4, '0')}`;
    } else out += ch;
  }
  return `${out}"`;
}

const byCodePoint = (a: string, b: string): number => {
  const x = [...a].map((c) => c.codePointAt(0) as number);
  const y = [...b].map((c) => c.codePointAt(0) as number);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number);
  return x.length - y.length;
};

/**
 * Python's `json.dumps(value, ensure_ascii=False, …)`, as transformers' `tojson` filter calls it.
 * Throws on what Python cannot serialize (an undefined value, a namespace, a function).
 */
export function pyJson(v: JinjaValue, options: JsonOptions = {}, depth = 0): string {
  const indent = options.indent === undefined || options.indent === null ? null : typeof options.indent === 'number' ? ' '.repeat(options.indent) : options.indent;
  const [itemSep, keySep] = options.separators ?? (indent === null ? [', ', ': '] : [',', ': ']);
  const ascii = options.ensureAscii ?? false;
  if (isString(v)) return jsonString(v.value, ascii);
  if (isBoolean(v)) return v.value ? 'true' : 'false';
  if (v.type === 'NullValue') return 'null';
  if (v.type === 'IntegerValue') return Object.is(v.value, -0) ? '-0.0' : String(v.value);
  if (v.type === 'FloatValue') {
    const n = v.value as number;
    return Number.isNaN(n) ? 'NaN' : Number.isFinite(n) ? pyFloat(n) : n > 0 ? 'Infinity' : '-Infinity';
  }
  const open = indent === null ? '' : `\n${indent.repeat(depth + 1)}`;
  const close = indent === null ? '' : `\n${indent.repeat(depth)}`;
  const join = indent === null ? itemSep : `${itemSep}${open}`;
  if (isArray(v)) {
    if (v.value.length === 0) return '[]';
    return `[${open}${v.value.map((x) => pyJson(x, options, depth + 1)).join(join)}${close}]`;
  }
  if (isDict(v)) {
    let entries = [...v.value];
    if (entries.length === 0) return '{}';
    if (options.sortKeys) entries = entries.sort(([a], [b]) => byCodePoint(a, b));
    return `{${open}${entries.map(([k, x]) => `${jsonString(k, ascii)}${keySep}${pyJson(x, options, depth + 1)}`).join(join)}${close}}`;
  }
  const name = v.type === 'UndefinedValue' ? 'Undefined' : isNamespace(v) ? 'Namespace' : v.type === 'FunctionValue' ? 'function' : v.type;
  throw new TypeError(`Object of type ${name} is not JSON serializable`);
}

/** Python's `==` on template values (numbers and booleans by value, containers item by item). */
export function pyEquals(a: JinjaValue, b: JinjaValue): boolean {
  if ((isNumber(a) || isBoolean(a)) && (isNumber(b) || isBoolean(b))) return Number(a.value) === Number(b.value);
  if (isString(a) && isString(b)) return a.value === b.value;
  if (isArray(a) && isArray(b)) return a.type === b.type && a.value.length === b.value.length && a.value.every((x, i) => pyEquals(x, b.value[i] as JinjaValue));
  if (isDict(a) && isDict(b)) {
    if (a.value.size !== b.value.size) return false;
    for (const [k, x] of a.value) {
      const y = b.value.get(k);
      if (y === undefined || !pyEquals(x, y)) return false;
    }
    return true;
  }
  if (a.type === 'NullValue' || a.type === 'UndefinedValue') return a.type === b.type;
  return a === b;
}

/** Python's ordering (`<`): numbers with numbers, strings by code point, sequences item by item; else TypeError. */
export function pyCompare(a: JinjaValue, b: JinjaValue, op: string): number {
  if ((isNumber(a) || isBoolean(a)) && (isNumber(b) || isBoolean(b))) return Number(a.value) - Number(b.value);
  if (isString(a) && isString(b)) return byCodePoint(a.value, b.value);
  if (isArray(a) && isArray(b) && a.type === b.type) {
    for (let i = 0; i < Math.min(a.value.length, b.value.length); i++) {
      const x = a.value[i] as JinjaValue;
      const y = b.value[i] as JinjaValue;
      if (!pyEquals(x, y)) return pyCompare(x, y, op);
    }
    return a.value.length - b.value.length;
  }
  throw new TypeError(`'${op}' not supported between instances of '${pyTypeName(a)}' and '${pyTypeName(b)}'`);
}

/** Python's name of a value's type, for error messages. */
export function pyTypeName(v: JinjaValue): string {
  const names: Record<string, string> = { StringValue: 'str', IntegerValue: 'int', FloatValue: 'float', BooleanValue: 'bool', NullValue: 'NoneType', UndefinedValue: 'Undefined', ArrayValue: 'list', TupleValue: 'tuple', ObjectValue: 'dict', KeywordArgumentsValue: 'dict', NamespaceValue: 'Namespace', FunctionValue: 'function' };
  return names[v.type] ?? v.type;
}

// Python's str.isspace() characters (JavaScript's trim also strips U+FEFF, Python's strip does not).
const PY_SPACE = '\t\n\v\f\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000';

/** Python's `str.strip(chars)` (`lstrip` with `end` false, `rstrip` with `start` false). */
export function pyStrip(s: string, chars: string | null = null, start = true, end = true): string {
  const set = chars ?? PY_SPACE;
  const cps = [...s];
  let i = 0;
  let j = cps.length;
  if (start) while (i < j && set.includes(cps[i] as string)) i++;
  if (end) while (j > i && set.includes(cps[j - 1] as string)) j--;
  return cps.slice(i, j).join('');
}

/** Python's `str.split(sep, maxsplit)`: on runs of whitespace without a separator. */
export function pySplit(s: string, sep: string | null, maxsplit = -1): string[] {
  if (sep === '') throw new Error('ValueError: empty separator');
  const out: string[] = [];
  if (sep === null) {
    let rest = pyStrip(s, null, true, false);
    while (rest !== '') {
      if (maxsplit >= 0 && out.length === maxsplit) return [...out, rest];
      const cps = [...rest];
      const at = cps.findIndex((c) => PY_SPACE.includes(c));
      if (at < 0) return [...out, rest];
      out.push(cps.slice(0, at).join(''));
      rest = pyStrip(cps.slice(at).join(''), null, true, false);
    }
    return out;
  }
  let rest = s;
  for (;;) {
    const at = rest.indexOf(sep);
    if (at < 0 || (maxsplit >= 0 && out.length === maxsplit)) return [...out, rest];
    out.push(rest.slice(0, at));
    rest = rest.slice(at + sep.length);
  }
}

/** Python's `len()` of a string: code points, not UTF-16 units. */
export const pyLen = (s: string): number => [...s].length;

// Python's str.splitlines() boundaries (\r\n counts as one).
const LINE_BREAKS = new Set(['\n', '\r', '\v', '\f', '\x1c', '\x1d', '\x1e', '\x85', '\u2028', '\u2029']);

/** Python's `str.splitlines()`: no empty piece after a final line break. */
export function pySplitLines(s: string): string[] {
  const out: string[] = [];
  let line = '';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i] as string;
    if (!LINE_BREAKS.has(ch)) {
      line += ch;
      continue;
    }
    if (ch === '\r' && s[i + 1] === '\n') i++;
    out.push(line);
    line = '';
  }
  if (line !== '') out.push(line);
  return out;
}

/** Python's fixed-point digits of `x` (`'%.{digits}f' % x`): its exact value decides, an exact half goes to even (JavaScript's toFixed rounds it up). */
export function pyFixed(x: number, digits: number): string {
  if (!Number.isFinite(x) || digits > 60) return x.toFixed(Math.min(100, digits));
  const exact = Math.abs(x).toFixed(digits + 30); // enough digits to tell an exact half from a near one
  const [whole = '', frac = ''] = exact.split('.');
  if (!/^50*$/.test(frac.slice(digits))) return x.toFixed(digits);
  const kept = BigInt(whole + frac.slice(0, digits));
  const even = (kept % 2n === 0n ? kept : kept + 1n).toString().padStart(digits + 1, '0');
  const text = digits === 0 ? even : `${even.slice(0, -digits)}.${even.slice(-digits)}`;
  return (x < 0 || Object.is(x, -0) ? '-' : '') + text;
}
