/**
 * Python's `%` string formatting, which Jinja2's `format` filter (`"%s" | format(x)`) and the `%`
 * operator on a string use. Chat templates write pythonic tool calls with it
 * (`param=` + `"%s" | format(value)`), so a value must come out as Python's `str()` has it.
 */
import { isBoolean, isDict, isNumber, isString, type JinjaValue, type MapValue } from './jinja-values.js';
import { pyFixed, pyRepr, pyStr, pyTypeName } from './python-values.js';

const DIRECTIVE = /%(?:\(([^)]*)\))?([-+ #0]*)(\*|\d+)?(?:\.(\*|\d+))?[hlL]?([diouxXeEfFgGcrsa%])/y;

function number(v: JinjaValue, conversion: string): number {
  if (isNumber(v) || isBoolean(v)) return Number(v.value);
  throw new TypeError(`%${conversion} format: a real number is required, not ${pyTypeName(v)}`);
}

function exponential(n: number, precision: number, upper: boolean): string {
  const [m, e] = n.toExponential(precision).split('e') as [string, string];
  const exp = Number(e);
  const out = `${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  return upper ? out.toUpperCase() : out;
}

function general(n: number, precision: number, alt: boolean, upper: boolean): string {
  const p = precision === 0 ? 1 : precision;
  if (n === 0) return alt ? `0.${'0'.repeat(p - 1)}` : '0';
  const x = Math.floor(Math.log10(Math.abs(Number(n.toExponential(p - 1)))));
  let out = x >= -4 && x < p ? pyFixed(n, Math.max(0, p - 1 - x)) : exponential(n, p - 1, upper);
  if (!alt) out = out.replace(/(\.\d*?)0+(?=$|e|E)/, '$1').replace(/\.(?=$|e|E)/, '');
  return out;
}

function finite(n: number, upper: boolean): string | null {
  if (Number.isNaN(n)) return upper ? 'NAN' : 'nan';
  if (!Number.isFinite(n)) return (n > 0 ? 'inf' : '-inf')[upper ? 'toUpperCase' : 'toLowerCase']();
  return null;
}

/** One conversion's digits (without sign) and whether the value is negative. */
function convert(v: JinjaValue, conversion: string, precision: number | null, alt: boolean): { body: string; negative: boolean; numeric: boolean } {
  switch (conversion) {
    case 's':
    case 'r':
    case 'a': {
      const s = conversion === 's' ? pyStr(v) : pyRepr(v);
      return { body: precision === null ? s : [...s].slice(0, precision).join(''), negative: false, numeric: false };
    }
    case 'c': {
      if (isString(v) && [...v.value].length === 1) return { body: v.value, negative: false, numeric: false };
      return { body: String.fromCodePoint(number(v, conversion)), negative: false, numeric: false };
    }
    case 'd':
    case 'i':
    case 'u':
    case 'o':
    case 'x':
    case 'X': {
      const n = Math.trunc(number(v, conversion));
      const radix = conversion === 'o' ? 8 : conversion === 'x' || conversion === 'X' ? 16 : 10;
      let body = Math.abs(n).toString(radix);
      if (precision !== null) body = body.padStart(precision, '0');
      if (alt && radix !== 10) body = (radix === 8 ? '0o' : '0x') + body;
      return { body: conversion === 'X' ? body.toUpperCase() : body, negative: n < 0, numeric: true };
    }
    default: {
      const n = number(v, conversion);
      const upper = conversion === conversion.toUpperCase();
      const special = finite(Math.abs(n), upper);
      const p = precision ?? 6;
      const kind = conversion.toLowerCase();
      const body = special ?? (kind === 'f' ? pyFixed(Math.abs(n), p) : kind === 'e' ? exponential(Math.abs(n), p, upper) : general(Math.abs(n), p, alt, upper));
      return { body, negative: n < 0 || Object.is(n, -0), numeric: special === null };
    }
  }
}

/**
 * `format % args` as Python computes it: `args` the tuple's items, or `mapping` for `%(name)s`.
 * @example pyPercent('%s=%r', [str('a'), str('b')], null) // "a='b'"
 */
export function pyPercent(format: string, args: readonly JinjaValue[], mapping: MapValue | null): string {
  let out = '';
  let next = 0;
  let at = 0;
  const take = (): JinjaValue => {
    const v = args[next++];
    if (v === undefined) throw new TypeError('not enough arguments for format string');
    return v;
  };
  for (;;) {
    const percent = format.indexOf('%', at);
    if (percent < 0) break;
    out += format.slice(at, percent);
    DIRECTIVE.lastIndex = percent;
    const m = DIRECTIVE.exec(format);
    if (m === null) throw new Error(`ValueError: unsupported format character at index ${percent}`);
    at = DIRECTIVE.lastIndex;
    const [, key, flags = '', widthText, precisionText, conversion = 's'] = m;
    if (conversion === '%') {
      out += '%';
      continue;
    }
    const width = widthText === '*' ? number(take(), '*') : widthText === undefined ? 0 : Number(widthText);
    const precision = precisionText === '*' ? number(take(), '*') : precisionText === undefined ? null : Number(precisionText);
    let value: JinjaValue;
    if (key !== undefined) {
      if (mapping === null) throw new TypeError('format requires a mapping');
      const found = mapping.value.get(key);
      if (found === undefined) throw new Error(`KeyError: ${pyRepr({ type: 'StringValue', value: key } as JinjaValue)}`);
      value = found;
    } else value = take();
    const { body, negative, numeric } = convert(value, conversion, precision, flags.includes('#'));
    const sign = negative ? '-' : numeric && flags.includes('+') ? '+' : numeric && flags.includes(' ') ? ' ' : '';
    const length = [...sign].length + [...body].length;
    const pad = Math.max(0, width - length);
    if (flags.includes('-')) out += sign + body + ' '.repeat(pad);
    else if (flags.includes('0') && numeric) out += sign + '0'.repeat(pad) + body;
    else out += ' '.repeat(pad) + sign + body;
  }
  out += format.slice(at);
  if (mapping === null && next < args.length) throw new TypeError('not all arguments converted during string formatting');
  return out;
}

/** The `%` operator: `format % value`, a tuple's items as the arguments, a dict as a mapping. */
export function pyPercentOperator(format: string, value: JinjaValue): string {
  if (value.type === 'TupleValue') return pyPercent(format, value.value as JinjaValue[], null);
  if (isDict(value)) return pyPercent(format, [value], value);
  return pyPercent(format, [value], null);
}
