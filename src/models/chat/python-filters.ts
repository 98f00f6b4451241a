/**
 * Jinja2's filters as transformers' environment has them, where @huggingface/jinja's differ or are
 * missing: `tojson` is `json.dumps(x, ensure_ascii=False, indent, separators, sort_keys)`, text
 * filters write a value as Python's `str()` (`None | trim` is `'None'`), `format` is `%`
 * formatting, `map`/`select`/`selectattr` take any filter or test, `length` of an undefined value
 * is 0. A filter not here falls through to the package's own.
 */
import { dict, float, int, isArray, isBoolean, isDict, isNamespace, isNumber, isString, type JinjaValue, list, str, tuple, undef } from './jinja-values.js';
import { pyPercent } from './python-format.js';
import { pyMethod, pyTitle } from './python-methods.js';
import { pyTest } from './python-tests.js';
import { type JsonOptions, pyCompare, pyEquals, pyFixed, pyJson, pyLen, pyRepr, pySplitLines, pyStr, pyStrip, pyTypeName } from './python-values.js';

/** What filters need of the interpreter. */
export interface FilterContext {
  /** Applies filter `name` (one of these or the package's). */
  filter(name: string, value: JinjaValue, args: JinjaValue[], kwargs: Map<string, JinjaValue>): JinjaValue;
  /** Jinja2's `getitem` (a key, else an attribute). */
  getitem(value: JinjaValue, key: JinjaValue): JinjaValue;
}

type Filter = (value: JinjaValue, args: JinjaValue[], kwargs: Map<string, JinjaValue>, ctx: FilterContext) => JinjaValue;

/** The items a Python `for` (or `list()`) yields; TypeError where Python raises. */
export function pyIterate(v: JinjaValue): JinjaValue[] {
  if (isArray(v)) return v.value;
  if (isString(v)) return [...v.value].map(str);
  if (isDict(v)) return [...v.value.keys()].map(str);
  if (v.type === 'UndefinedValue') return [];
  throw new TypeError(`'${pyTypeName(v)}' object is not iterable`);
}

function pyLength(v: JinjaValue): number {
  if (isString(v)) return pyLen(v.value);
  if (isArray(v)) return v.value.length;
  if (isDict(v)) return v.value.size;
  if (v.type === 'UndefinedValue') return 0;
  throw new TypeError(`object of type '${pyTypeName(v)}' has no len()`);
}

/** An argument by position or keyword, else its default. */
const param = (args: JinjaValue[], kwargs: Map<string, JinjaValue>, at: number, name: string): JinjaValue | undefined => args[at] ?? kwargs.get(name);
const truthy = (v: JinjaValue | undefined, fallback = false): boolean => (v === undefined ? fallback : v.__bool__().value);

/** Jinja2's attribute getter: a dotted path, integer parts as indices, each part by `getitem`. */
function attribute(ctx: FilterContext, path: JinjaValue): (v: JinjaValue) => JinjaValue {
  const parts = isString(path) ? path.value.split('.').map((p) => (/^\d+$/.test(p) ? int(Number(p)) : str(p))) : [path];
  return (v) => parts.reduce((x, p) => ctx.getitem(x, p), v);
}

function indent(s: string, width: JinjaValue | undefined, first: boolean, blank: boolean): string {
  const indention = width !== undefined && isString(width) ? width.value : ' '.repeat(width === undefined ? 4 : Number(width.value));
  const lines = pySplitLines(`${s}\n`); // Jinja2 appends the newline before splitting, so a final one is dropped
  let out = blank ? lines.join(`\n${indention}`) : (lines[0] ?? '') + lines.slice(1).map((line) => `\n${line === '' ? line : indention + line}`).join('');
  if (first) out = indention + out;
  return out;
}

function toInt(v: JinjaValue, fallback: JinjaValue, base: number): JinjaValue {
  if (isString(v)) {
    const s = pyStrip(v.value).replace(/_/g, '');
    if (base === 10 && /^[+-]?\d+$/.test(s)) return int(Number.parseInt(s, 10));
    if (base !== 10 && s !== '' && !Number.isNaN(Number.parseInt(s, base))) return int(Number.parseInt(s, base));
    const f = toFloat(v);
    return f === null || !Number.isFinite(f) ? fallback : int(Math.trunc(f));
  }
  if (isNumber(v) || isBoolean(v)) return Number.isFinite(Number(v.value)) ? int(Math.trunc(Number(v.value))) : fallback;
  return fallback;
}

function toFloat(v: JinjaValue): number | null {
  if (isNumber(v) || isBoolean(v)) return Number(v.value);
  if (!isString(v)) return null;
  const s = pyStrip(v.value).replace(/(\d)_(?=\d)/g, '$1').toLowerCase();
  if (/^[+-]?(inf|infinity)$/.test(s)) return s.startsWith('-') ? -Infinity : Infinity;
  if (/^[+-]?nan$/.test(s)) return Number.NaN;
  return /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/.test(s) ? Number(s) : null;
}

/** Python's `round(x, n)` (exact halves to even). */
const pyRound = (x: number, digits: number): number => (digits < 0 ? x : Number(pyFixed(x, digits)));

const textFilter =
  (f: (s: string, args: JinjaValue[], kwargs: Map<string, JinjaValue>) => string): Filter =>
  (v, args, kwargs) =>
    str(f(pyStr(v), args, kwargs));

const select =
  (keep: boolean, byAttribute: boolean): Filter =>
  (v, args, _kwargs, ctx) => {
    const get = byAttribute ? attribute(ctx, args[0] ?? str('')) : (x: JinjaValue) => x;
    const [testName, ...testArgs] = byAttribute ? args.slice(1) : args;
    const passes = (x: JinjaValue): boolean => (testName === undefined ? get(x).__bool__().value : pyTest(pyStr(testName), get(x), testArgs));
    return list(pyIterate(v).filter((x) => passes(x) === keep));
  };

/** `min` / `max`: the first smallest or largest item (undefined for none), strings folded unless case_sensitive. */
function extreme(sign: number): Filter {
  return (v, args, kwargs, ctx) => {
    const by = param(args, kwargs, 1, 'attribute');
    const key = by === undefined || by.type === 'NullValue' ? (x: JinjaValue) => x : attribute(ctx, by);
    const fold = (x: JinjaValue): JinjaValue => (!truthy(param(args, kwargs, 0, 'case_sensitive')) && isString(x) ? str(x.value.toLowerCase()) : x);
    let best: JinjaValue | undefined;
    for (const x of pyIterate(v)) if (best === undefined || sign * pyCompare(fold(key(x)), fold(key(best)), '<') > 0) best = x;
    return best ?? undef();
  };
}

const FILTERS: Record<string, Filter> = {
  tojson: (v, args, kwargs) => {
    const separators = param(args, kwargs, 2, 'separators');
    const options: JsonOptions = {
      ensureAscii: truthy(param(args, kwargs, 0, 'ensure_ascii')),
      indent: (param(args, kwargs, 1, 'indent')?.value ?? null) as number | string | null,
      separators: separators !== undefined && isArray(separators) ? [pyStr(separators.value[0] as JinjaValue), pyStr(separators.value[1] as JinjaValue)] : null,
      sortKeys: truthy(param(args, kwargs, 3, 'sort_keys')),
    };
    return str(pyJson(v, options));
  },
  string: (v) => str(pyStr(v)),
  safe: (v) => str(pyStr(v)),
  format: (v, args, kwargs) => {
    if (args.length > 0 && kwargs.size > 0) throw new Error("can't handle positional and keyword arguments at the same time");
    return str(pyPercent(pyStr(v), args, kwargs.size > 0 ? dict(kwargs) : null));
  },
  trim: textFilter((s, args, kwargs) => {
    const chars = param(args, kwargs, 0, 'chars');
    return pyStrip(s, chars === undefined || chars.type === 'NullValue' ? null : pyStr(chars));
  }),
  upper: textFilter((s) => s.toUpperCase()),
  lower: textFilter((s) => s.toLowerCase()),
  capitalize: textFilter((s) => {
    const [first = '', ...rest] = [...s];
    return first.toUpperCase() + rest.join('').toLowerCase();
  }),
  title: textFilter((s) =>
    s
      .split(/([-\s({[<]+)/)
      .filter((x) => x !== '')
      .map((x) => pyTitle(x.slice(0, 1)).toUpperCase() + x.slice(1).toLowerCase())
      .join(''),
  ),
  replace: textFilter((s, args, kwargs) => {
    const from = pyStr(param(args, kwargs, 0, 'old') ?? str(''));
    const to = pyStr(param(args, kwargs, 1, 'new') ?? str(''));
    const count = param(args, kwargs, 2, 'count');
    let n = count === undefined || count.type === 'NullValue' ? -1 : Number(count.value);
    if (from === '') return s;
    let out = '';
    let rest = s;
    for (let at = rest.indexOf(from); at >= 0 && n !== 0; at = rest.indexOf(from), n--) {
      out += rest.slice(0, at) + to;
      rest = rest.slice(at + from.length);
    }
    return out + rest;
  }),
  indent: (v, args, kwargs) => {
    if (!isString(v)) throw new TypeError(`unsupported operand type(s) for +=: '${pyTypeName(v)}' and 'str'`);
    return str(indent(v.value, param(args, kwargs, 0, 'width'), truthy(param(args, kwargs, 1, 'first')), truthy(param(args, kwargs, 2, 'blank'))));
  },
  center: textFilter((s, args, kwargs) => {
    const width = Number(param(args, kwargs, 0, 'width')?.value ?? 80);
    const n = Math.max(0, width - pyLen(s));
    const left = Math.floor(n / 2) + (n % 2 === 1 && width % 2 === 1 ? 1 : 0);
    return ' '.repeat(left) + s + ' '.repeat(n - left);
  }),
  wordcount: (v) => int((pyStr(v).match(/[\p{L}\p{N}_]+/gu) ?? []).length),
  length: (v) => int(pyLength(v)),
  count: (v) => int(pyLength(v)),
  list: (v) => list(pyIterate(v)),
  items: (v) => {
    if (v.type === 'UndefinedValue') return list([]);
    if (!isDict(v)) throw new TypeError('Can only get item pairs from a mapping.');
    return list([...v.value].map(([k, x]) => tuple([str(k), x])));
  },
  first: (v) => pyIterate(v)[0] ?? undef(),
  join: (v, args, kwargs, ctx) => {
    const by = param(args, kwargs, 1, 'attribute');
    const items = pyIterate(v).map(by === undefined || by.type === 'NullValue' ? (x) => x : attribute(ctx, by));
    return str(items.map(pyStr).join(pyStr(param(args, kwargs, 0, 'd') ?? str(''))));
  },
  default: (v, args, kwargs) => {
    const fallback = param(args, kwargs, 0, 'default_value') ?? str('');
    return v.type === 'UndefinedValue' || (truthy(param(args, kwargs, 1, 'boolean')) && !v.__bool__().value) ? fallback : v;
  },
  int: (v, args, kwargs) => toInt(v, param(args, kwargs, 0, 'default') ?? int(0), Number(param(args, kwargs, 1, 'base')?.value ?? 10)),
  float: (v, args, kwargs) => {
    const f = toFloat(v);
    return f === null ? (param(args, kwargs, 0, 'default') ?? float(0)) : float(f);
  },
  abs: (v) => {
    if (!(isNumber(v) || isBoolean(v))) throw new TypeError(`bad operand type for abs(): '${pyTypeName(v)}'`);
    return v.type === 'FloatValue' ? float(Math.abs(v.value)) : int(Math.abs(Number(v.value)));
  },
  round: (v, args, kwargs) => {
    const digits = Number(param(args, kwargs, 0, 'precision')?.value ?? 0);
    const method = pyStr(param(args, kwargs, 1, 'method') ?? str('common'));
    const x = Number(v.value);
    if (method === 'common') return float(pyRound(x, digits));
    const f = 10 ** digits;
    return float((method === 'ceil' ? Math.ceil(x * f) : Math.floor(x * f)) / f);
  },
  reverse: (v) => (isString(v) ? str([...v.value].reverse().join('')) : list([...pyIterate(v)].reverse())),
  map: (v, args, kwargs, ctx) => {
    const by = kwargs.get('attribute');
    if (by !== undefined) {
      const get = attribute(ctx, by);
      const fallback = kwargs.get('default');
      return list(pyIterate(v).map((x) => {
        const y = get(x);
        return y.type === 'UndefinedValue' && fallback !== undefined ? fallback : y;
      }));
    }
    const [name, ...rest] = args;
    if (name === undefined) return list(pyIterate(v));
    return list(pyIterate(v).map((x) => ctx.filter(pyStr(name), x, rest, kwargs)));
  },
  select: select(true, false),
  reject: select(false, false),
  selectattr: select(true, true),
  rejectattr: select(false, true),
  unique: (v, args, kwargs, ctx) => {
    const by = param(args, kwargs, 1, 'attribute');
    const key = by === undefined || by.type === 'NullValue' ? (x: JinjaValue) => x : attribute(ctx, by);
    const fold = (x: JinjaValue): JinjaValue => (!truthy(param(args, kwargs, 0, 'case_sensitive')) && isString(x) ? str(x.value.toLowerCase()) : x);
    const out: JinjaValue[] = [];
    for (const x of pyIterate(v)) if (!out.some((y) => pyEquals(fold(key(x)), fold(key(y))))) out.push(x);
    return list(out);
  },
  sort: (v, args, kwargs, ctx) => {
    const by = param(args, kwargs, 2, 'attribute');
    const key = by === undefined || by.type === 'NullValue' ? (x: JinjaValue) => x : attribute(ctx, by);
    const fold = (x: JinjaValue): JinjaValue => (!truthy(param(args, kwargs, 1, 'case_sensitive')) && isString(x) ? str(x.value.toLowerCase()) : x);
    const sign = truthy(param(args, kwargs, 0, 'reverse')) ? -1 : 1;
    return list([...pyIterate(v)].sort((a, b) => sign * pyCompare(fold(key(a)), fold(key(b)), '<')));
  },
  pprint: (v) => str(pyRepr(v)),
  // A Python attribute only: a dict's keys are not attributes (its methods are).
  attr: (v, args) => {
    const name = pyStr(args[0] ?? str(''));
    return pyMethod(v, name) ?? (isNamespace(v) ? (v.value.get(name) ?? undef()) : undef());
  },
  truncate: textFilter((s, args, kwargs) => {
    const length = Number(param(args, kwargs, 0, 'length')?.value ?? 255);
    const killwords = truthy(param(args, kwargs, 1, 'killwords'));
    const end = pyStr(param(args, kwargs, 2, 'end') ?? str('...'));
    const leeway = Number(param(args, kwargs, 3, 'leeway')?.value ?? 5);
    const cps = [...s];
    if (cps.length <= length + leeway) return s;
    const head = cps.slice(0, Math.max(0, length - [...end].length)).join('');
    if (killwords) return head + end;
    const cut = head.lastIndexOf(' ');
    return (cut < 0 ? head : head.slice(0, cut)) + end;
  }),
  batch: (v, args, kwargs) => {
    const size = Number(param(args, kwargs, 0, 'linecount')?.value ?? 1);
    const fill = param(args, kwargs, 1, 'fill_with');
    const items = pyIterate(v);
    const out: JinjaValue[] = [];
    for (let i = 0; i < items.length; i += size) {
      const row = items.slice(i, i + size);
      while (fill !== undefined && fill.type !== 'NullValue' && row.length < size) row.push(fill);
      out.push(list(row));
    }
    return list(out);
  },
  slice: (v, args, kwargs) => {
    const slices = Number(param(args, kwargs, 0, 'slices')?.value ?? 1);
    const fill = param(args, kwargs, 1, 'fill_with');
    const items = pyIterate(v);
    const per = Math.floor(items.length / slices);
    const extra = items.length % slices;
    const out: JinjaValue[] = [];
    let at = 0;
    for (let i = 0; i < slices; i++) {
      const n = per + (i < extra ? 1 : 0);
      const row = items.slice(at, at + n);
      at += n;
      if (fill !== undefined && fill.type !== 'NullValue' && i >= extra && extra > 0) row.push(fill);
      out.push(list(row));
    }
    return list(out);
  },
  striptags: textFilter((s) => s.replace(/<!--[\s\S]*?-->|<[^>]*>/g, '').split(/\s+/).filter((w) => w !== '').join(' ')),
  sum: (v, args, kwargs, ctx) => {
    const by = param(args, kwargs, 0, 'attribute');
    const key = by === undefined || by.type === 'NullValue' ? (x: JinjaValue) => x : attribute(ctx, by);
    let total: JinjaValue = param(args, kwargs, 1, 'start') ?? int(0);
    for (const x of pyIterate(v).map(key)) {
      if (!(isNumber(x) || isBoolean(x)) || !(isNumber(total) || isBoolean(total))) throw new TypeError(`unsupported operand type(s) for +: '${pyTypeName(total)}' and '${pyTypeName(x)}'`);
      const n = Number(total.value) + Number(x.value);
      total = total.type === 'FloatValue' || x.type === 'FloatValue' ? float(n) : int(n);
    }
    return total;
  },
  min: extreme(-1),
  max: extreme(1),
  dictsort: (v, args, kwargs) => {
    if (!isDict(v)) throw new TypeError('You can only sort by either "key" or "value"');
    const byValue = pyStr(param(args, kwargs, 1, 'by') ?? str('key')) === 'value';
    const fold = (x: JinjaValue): JinjaValue => (!truthy(param(args, kwargs, 0, 'case_sensitive')) && isString(x) ? str(x.value.toLowerCase()) : x);
    const sign = truthy(param(args, kwargs, 2, 'reverse')) ? -1 : 1;
    const pairs = [...v.value].map(([k, x]) => tuple([str(k), x]));
    return list(pairs.sort((a, b) => sign * pyCompare(fold(a.value[byValue ? 1 : 0] as JinjaValue), fold(b.value[byValue ? 1 : 0] as JinjaValue), '<')));
  },
};
FILTERS.d = FILTERS.default as Filter;
FILTERS.e = textFilter((s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&#34;').replace(/'/g, '&#39;'));
FILTERS.escape = FILTERS.e;
FILTERS.last = (v) => pyIterate(v).at(-1) ?? undef();

/**
 * Applies Jinja2's filter `name` if turnwise has it, else returns undefined (the package's applies).
 * @example pyFilter('trim', none(), [], new Map(), ctx) // str('None')
 */
export function pyFilter(name: string, value: JinjaValue, args: JinjaValue[], kwargs: Map<string, JinjaValue>, ctx: FilterContext): JinjaValue | undefined {
  const filter = Object.hasOwn(FILTERS, name) ? FILTERS[name] : undefined;
  return filter === undefined ? undefined : filter(value, args, kwargs, ctx);
}

