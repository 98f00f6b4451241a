/**
 * The Python methods a template calls on values (`content.strip()`, `s.split('</think>')`,
 * `message.get('tool_calls')`, `d.items()`), with Python's arguments and results. Jinja2 looks a
 * method up before a dict key on `d.name` (so `schema.items` is the method, not an `items` key),
 * and transformers' sandbox refuses the mutating ones (`append`, `update`, …): they are absent
 * here, so calling one fails as it does there.
 */
import { bool, dict, fn, int, isArray, isBoolean, isDict, isNamespace, isNumber, isString, type JinjaValue, list, type MapValue, none, splitArgs, str, tuple, undef } from './jinja-values.js';
import { pyEquals, pyLen, pyRepr, pySplit, pySplitLines, pyStr, pyStrip, pyTypeName } from './python-values.js';

type Method = (self: JinjaValue, args: JinjaValue[], kwargs: Map<string, JinjaValue>) => JinjaValue;

const text = (v: JinjaValue | undefined, what: string): string => {
  if (v !== undefined && isString(v)) return v.value;
  throw new TypeError(`${what} must be str, not ${v === undefined ? 'nothing' : pyTypeName(v)}`);
};
const optionalText = (v: JinjaValue | undefined): string | null => (v === undefined || v.type === 'NullValue' ? null : text(v, 'argument'));
const integer = (v: JinjaValue | undefined, fallback: number): number => (v === undefined || v.type === 'NullValue' ? fallback : Number(v.value));
const self = (v: JinjaValue): string => (v as { value: string }).value;
const prefixes = (v: JinjaValue | undefined): string[] => (v !== undefined && isArray(v) ? v.value.map((x) => text(x, 'prefix')) : [text(v, 'prefix')]);

/** Python's `str.title()`: a cased letter after an uncased character starts a word. */
export function pyTitle(s: string): string {
  let out = '';
  let previousCased = false;
  for (const ch of s) {
    const cased = ch.toLowerCase() !== ch.toUpperCase();
    out += cased ? (previousCased ? ch.toLowerCase() : ch.toUpperCase()) : ch;
    previousCased = cased;
  }
  return out;
}

const pad = (s: string, width: number, fill: string, where: 'left' | 'right' | 'center'): string => {
  const n = Math.max(0, width - pyLen(s));
  if (where === 'left') return fill.repeat(n) + s;
  if (where === 'right') return s + fill.repeat(n);
  const left = Math.floor(n / 2) + (n % 2 === 1 && width % 2 === 1 ? 1 : 0);
  return fill.repeat(left) + s + fill.repeat(n - left);
};

const STRING_METHODS: Record<string, Method> = {
  strip: (s, [chars]) => str(pyStrip(self(s), optionalText(chars))),
  lstrip: (s, [chars]) => str(pyStrip(self(s), optionalText(chars), true, false)),
  rstrip: (s, [chars]) => str(pyStrip(self(s), optionalText(chars), false, true)),
  split: (s, [sep, max], kw) => list(pySplit(self(s), optionalText(sep ?? kw.get('sep')), integer(max ?? kw.get('maxsplit'), -1)).map(str)),
  rsplit: (s, [sep, max], kw) => {
    const separator = optionalText(sep ?? kw.get('sep'));
    const n = integer(max ?? kw.get('maxsplit'), -1);
    if (separator === null || n < 0) return list(pySplit(self(s), separator, n).map(str));
    const parts = self(s).split(separator);
    return list([parts.slice(0, Math.max(0, parts.length - n)).join(separator), ...parts.slice(Math.max(1, parts.length - n))].map(str));
  },
  splitlines: (s) => list(pySplitLines(self(s)).map(str)),
  startswith: (s, [p]) => bool(prefixes(p).some((x) => self(s).startsWith(x))),
  endswith: (s, [p]) => bool(prefixes(p).some((x) => self(s).endsWith(x))),
  replace: (s, [a, b, count]) => {
    const parts = self(s).split(text(a, 'replace() argument 1'));
    const n = integer(count, -1);
    const joined = n < 0 || n >= parts.length - 1 ? parts.join(text(b, 'replace() argument 2')) : parts.slice(0, n + 1).join(text(b, 'replace() argument 2')) + text(a, '') + parts.slice(n + 1).join(text(a, ''));
    return str(joined);
  },
  upper: (s) => str(self(s).toUpperCase()),
  lower: (s) => str(self(s).toLowerCase()),
  title: (s) => str(pyTitle(self(s))),
  capitalize: (s) => {
    const [first = '', ...rest] = [...self(s)];
    return str(first.toUpperCase() + rest.join('').toLowerCase());
  },
  find: (s, [sub]) => int(indexOfCodePoints(self(s), text(sub, 'find() argument'), false)),
  rfind: (s, [sub]) => int(indexOfCodePoints(self(s), text(sub, 'rfind() argument'), true)),
  count: (s, [sub]) => int(self(s).split(text(sub, 'count() argument')).length - 1),
  join: (s, [items]) => {
    if (items === undefined || !isArray(items)) throw new TypeError('can only join an iterable of str');
    return str(items.value.map((x) => text(x, 'sequence item')).join(self(s)));
  },
  isdigit: (s) => bool(/^\p{Nd}+$/u.test(self(s))),
  isalpha: (s) => bool(/^\p{L}+$/u.test(self(s))),
  isalnum: (s) => bool(/^[\p{L}\p{N}]+$/u.test(self(s))),
  isspace: (s) => bool(self(s) !== '' && pyStrip(self(s)) === ''),
  islower: (s) => bool(self(s).toLowerCase() === self(s) && self(s).toUpperCase() !== self(s)),
  isupper: (s) => bool(self(s).toUpperCase() === self(s) && self(s).toLowerCase() !== self(s)),
  center: (s, [w, f]) => str(pad(self(s), integer(w, 0), optionalText(f) ?? ' ', 'center')),
  ljust: (s, [w, f]) => str(pad(self(s), integer(w, 0), optionalText(f) ?? ' ', 'right')),
  rjust: (s, [w, f]) => str(pad(self(s), integer(w, 0), optionalText(f) ?? ' ', 'left')),
  zfill: (s, [w]) => {
    const v = self(s);
    const sign = v.startsWith('-') || v.startsWith('+') ? v[0] : '';
    return str(sign + pad(v.slice(sign.length), integer(w, 0) - sign.length, '0', 'left'));
  },
  removeprefix: (s, [p]) => str(self(s).startsWith(text(p, 'prefix')) ? self(s).slice(text(p, '').length) : self(s)),
  removesuffix: (s, [p]) => {
    const suffix = text(p, 'suffix');
    return str(suffix !== '' && self(s).endsWith(suffix) ? self(s).slice(0, -suffix.length) : self(s));
  },
  format: (s, args, kw) => {
    let auto = 0;
    return str(
      self(s).replace(/\{\{|\}\}|\{([^{}]*)\}/g, (whole, field: string | undefined) => {
        if (whole === '{{') return '{';
        if (whole === '}}') return '}';
        const name = field ?? '';
        const value = name === '' ? args[auto++] : /^\d+$/.test(name) ? args[Number(name)] : kw.get(name);
        if (value === undefined) throw new Error(`IndexError: replacement field {${name}} has no argument`);
        return pyStr(value);
      }),
    );
  },
};

function indexOfCodePoints(s: string, sub: string, last: boolean): number {
  const at = last ? s.lastIndexOf(sub) : s.indexOf(sub);
  return at < 0 ? -1 : pyLen(s.slice(0, at));
}

const DICT_METHODS: Record<string, Method> = {
  get: (d, [key, fallback]) => (key !== undefined && isString(key) ? (d as MapValue).value.get(key.value) : undefined) ?? fallback ?? none(),
  items: (d) => list([...(d as MapValue).value].map(([k, v]) => tuple([str(k), v]))),
  keys: (d) => list([...(d as MapValue).value.keys()].map(str)),
  values: (d) => list([...(d as MapValue).value.values()]),
  copy: (d) => dict(new Map((d as MapValue).value)),
};

const LIST_METHODS: Record<string, Method> = {
  count: (l, [x]) => int((l.value as JinjaValue[]).filter((y) => x !== undefined && pyEquals(x, y)).length),
  index: (l, [x]) => {
    const at = (l.value as JinjaValue[]).findIndex((y) => x !== undefined && pyEquals(x, y));
    if (at < 0) throw new Error('ValueError: value is not in list');
    return int(at);
  },
};

/**
 * The bound method `name` of `value`, or undefined when Python's type has none by that name (or
 * the sandbox refuses it).
 * @example pyMethod(str(' a '), 'strip') // a FunctionValue returning 'a'
 */
export function pyMethod(value: JinjaValue, name: string): JinjaValue | undefined {
  const table = isString(value) ? STRING_METHODS : isDict(value) ? DICT_METHODS : isArray(value) ? LIST_METHODS : null;
  const method = table !== null && Object.hasOwn(table, name) ? table[name] : undefined;
  if (method === undefined) return undefined;
  return fn((args) => {
    const [positional, kwargs] = splitArgs(args);
    return method(value, positional, kwargs);
  });
}

// dict attributes the sandbox refuses (they mutate) or turnwise lacks: `d.update` is not the key 'update'.
const DICT_ATTRIBUTES = new Set(['clear', 'fromkeys', 'pop', 'popitem', 'setdefault', 'update']);

/** Jinja2 fails on any use of an undefined value but testing and printing it. */
export class UndefinedError extends Error {
  override readonly name = 'UndefinedError';
}

function failOnUndefined(value: JinjaValue, what: string): void {
  if (value.type === 'UndefinedValue') throw new UndefinedError(`cannot read ${what} of an undefined value`);
}

/**
 * Jinja2's `value.name`: a method of the value's Python type, else a key of a dict or namespace,
 * else undefined; on an undefined value it fails.
 * @example pyGetattr(dict(new Map([['items', str('x')]])), 'items') // the dict's items() method
 */
export function pyGetattr(value: JinjaValue, name: string): JinjaValue {
  failOnUndefined(value, `attribute ${pyRepr(str(name))}`);
  const method = pyMethod(value, name);
  if (method !== undefined) return method;
  if (isDict(value) && DICT_ATTRIBUTES.has(name)) return undef();
  if (isDict(value) || isNamespace(value)) return value.value.get(name) ?? undef();
  return undef();
}

/**
 * Jinja2's `value[key]`: a key or index (negative from the end, strings by code point), else an
 * attribute by that name, else undefined; on an undefined value it fails.
 * @example pyGetitem(list([str('a')]), int(-1)) // str('a')
 */
export function pyGetitem(value: JinjaValue, key: JinjaValue): JinjaValue {
  failOnUndefined(value, `item ${pyRepr(key)}`);
  if (isDict(value) && isString(key)) {
    const found = value.value.get(key.value);
    if (found !== undefined) return found;
  }
  if ((isArray(value) || isString(value)) && (key.type === 'IntegerValue' || isBoolean(key))) {
    const items = isString(value) ? [...value.value] : value.value;
    const i = Number(key.value) < 0 ? items.length + Number(key.value) : Number(key.value);
    const item = items[i];
    if (item === undefined) return undef();
    return typeof item === 'string' ? str(item) : item;
  }
  if (isString(key)) return isNumber(value) ? undef() : pyGetattr(value, key.value);
  return undef();
}
