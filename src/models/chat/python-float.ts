/**
 * JSON numbers as Python reads them: `3.0` and `1e2` are floats in Python (`json.loads`) but the
 * integer 3 and 100 in JavaScript, so a template given them would write `3` where transformers
 * writes `3.0` (`{{ x }}`, `tojson`). Where turnwise parses JSON that a template will render (a
 * request's `tools`, a call's `arguments`), such numbers are kept as {@link PyFloat}, and
 * {@link templateValue} turns them into the interpreter's float values.
 *
 * lossless-json (well kept, ~2M downloads a week) gives the parser each number's text; nothing else
 * in Node 20 does (`JSON.parse`'s source-text access needs a newer V8).
 */
import { parse } from 'lossless-json';
import { bool, dict, float, fn, int, type JinjaValue, list, none, str, undef } from './jinja-values.js';

/** A number written as a float whose value is integral. Serializes as the number. */
export class PyFloat {
  constructor(readonly value: number) {}
  toJSON(): number {
    return this.value;
  }
}

/**
 * Parses JSON text, keeping integral floats as {@link PyFloat} (every other number a plain number).
 * Throws `SyntaxError` on text that is not JSON.
 * @example parseJsonKeepingFloats('{"x": 3.0, "y": 3}') // { x: PyFloat(3), y: 3 }
 */
export function parseJsonKeepingFloats(text: string): unknown {
  return parse(text, null, (digits: string) => {
    const n = Number(digits);
    return /[.eE]/.test(digits) && Number.isInteger(n) ? new PyFloat(n) : n;
  });
}

/**
 * A JavaScript value as the interpreter's value, as `Environment.set` converts it, with
 * {@link PyFloat} as a float.
 * @example templateValue({ x: new PyFloat(3) }) // a dict whose x prints 3.0
 */
export function templateValue(input: unknown): JinjaValue {
  if (input instanceof PyFloat) return float(input.value);
  switch (typeof input) {
    case 'number':
      return Number.isInteger(input) ? int(input) : float(input);
    case 'string':
      return str(input);
    case 'boolean':
      return bool(input);
    case 'undefined':
      return undef();
    case 'function': {
      const f = input as (...args: unknown[]) => unknown;
      return fn((args) => templateValue(f(...args.map((a) => a.value)) ?? null));
    }
    case 'object':
      if (input === null) return none();
      if (Array.isArray(input)) return list(input.map(templateValue));
      return dict(new Map(Object.entries(input).map(([key, value]) => [key, templateValue(value)])));
    default:
      throw new TypeError(`a template cannot take a ${typeof input}`);
  }
}
