/**
 * Jinja2's tests (`x is defined`, `x is iterable`, `x is sameas true`, …) with Python's answers:
 * a dict is iterable, an undefined value is iterable and a sequence (Jinja2's `Undefined` iterates as
 * empty), a boolean is a number but not an integer, `equalto` compares as Python's `==` does.
 */
import { isArray, isBoolean, isDict, isFunction, isNumber, isString, type JinjaValue } from './jinja-values.js';
import { pyCompare, pyEquals, pyStr, pyTypeName } from './python-values.js';

/** `value in container`, as Python answers it (TypeError where Python raises). */
export function pyContains(container: JinjaValue, value: JinjaValue): boolean {
  if (isString(container)) {
    if (!isString(value)) throw new TypeError(`'in <string>' requires string as left operand, not ${pyTypeName(value)}`);
    return container.value.includes(value.value);
  }
  if (isArray(container)) return container.value.some((x) => pyEquals(x, value));
  if (isDict(container)) return isString(value) && container.value.has(value.value);
  if (container.type === 'UndefinedValue') return false;
  throw new TypeError(`argument of type '${pyTypeName(container)}' is not iterable`);
}

const modulo = (v: JinjaValue, n: number): number => {
  if (!(isNumber(v) || isBoolean(v))) throw new TypeError(`unsupported operand type(s) for %: '${pyTypeName(v)}' and 'int'`);
  return ((Number(v.value) % n) + n) % n;
};

const isLower = (s: string): boolean => s.toLowerCase() === s && s.toUpperCase() !== s;
const isUpper = (s: string): boolean => s.toUpperCase() === s && s.toLowerCase() !== s;

type Test = (value: JinjaValue, args: readonly JinjaValue[]) => boolean;
const arg = (args: readonly JinjaValue[]): JinjaValue => {
  const a = args[0];
  if (a === undefined) throw new TypeError('the test takes an argument');
  return a;
};

/** Python's `is`: the same object, or the same immutable value of the same type. */
function sameAs(a: JinjaValue, b: JinjaValue): boolean {
  if (a === b) return true;
  if (a.type !== b.type) return false;
  return ['BooleanValue', 'NullValue', 'UndefinedValue', 'IntegerValue', 'StringValue'].includes(a.type) && a.value === b.value;
}

const TESTS: Record<string, Test> = {
  defined: (v) => v.type !== 'UndefinedValue',
  undefined: (v) => v.type === 'UndefinedValue',
  none: (v) => v.type === 'NullValue',
  boolean: (v) => isBoolean(v),
  true: (v) => isBoolean(v) && v.value,
  false: (v) => isBoolean(v) && !v.value,
  integer: (v) => v.type === 'IntegerValue',
  float: (v) => v.type === 'FloatValue',
  number: (v) => isNumber(v) || isBoolean(v),
  string: (v) => isString(v),
  mapping: (v) => isDict(v),
  iterable: (v) => isString(v) || isArray(v) || isDict(v) || v.type === 'UndefinedValue',
  sequence: (v) => isString(v) || isArray(v) || isDict(v) || v.type === 'UndefinedValue',
  callable: (v) => isFunction(v),
  odd: (v) => modulo(v, 2) === 1,
  even: (v) => modulo(v, 2) === 0,
  divisibleby: (v, args) => modulo(v, Number(arg(args).value)) === 0,
  lower: (v) => isLower(pyStr(v)),
  upper: (v) => isUpper(pyStr(v)),
  escaped: () => false,
  sameas: (v, args) => sameAs(v, arg(args)),
  eq: (v, args) => pyEquals(v, arg(args)),
  ne: (v, args) => !pyEquals(v, arg(args)),
  lt: (v, args) => pyCompare(v, arg(args), '<') < 0,
  le: (v, args) => pyCompare(v, arg(args), '<=') <= 0,
  gt: (v, args) => pyCompare(v, arg(args), '>') > 0,
  ge: (v, args) => pyCompare(v, arg(args), '>=') >= 0,
  in: (v, args) => pyContains(arg(args), v),
};
for (const [alias, name] of [
  ['equalto', 'eq'],
  ['==', 'eq'],
  ['!=', 'ne'],
  ['lessthan', 'lt'],
  ['<', 'lt'],
  ['<=', 'le'],
  ['greaterthan', 'gt'],
  ['>', 'gt'],
  ['>=', 'ge'],
] as const) {
  TESTS[alias] = TESTS[name] as Test;
}

/** Whether Jinja2 has a test of this name. */
export const hasPyTest = (name: string): boolean => Object.hasOwn(TESTS, name);

/**
 * Runs Jinja2's test `name`; throws for a test Jinja2 does not have.
 * @example pyTest('iterable', dict(new Map()), []) // true
 */
export function pyTest(name: string, value: JinjaValue, args: readonly JinjaValue[]): boolean {
  const test = Object.hasOwn(TESTS, name) ? TESTS[name] : undefined;
  if (test === undefined) throw new Error(`No test named '${name}'.`);
  return test(value, args);
}
