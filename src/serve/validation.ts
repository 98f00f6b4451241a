/**
 * Request bodies checked against a zod schema, with OpenAI's error wording, each naming the
 * parameter at fault:
 *
 *     missing                 400 missing_required_parameter  "Missing required parameter: 'messages'."
 *     wrong type              400 invalid_type                "Invalid type for 'max_tokens': expected an integer, but got a decimal number instead."
 *     out of range / options  400 invalid_value               "Invalid value for 'temperature': expected a value <= 2, but got 3 instead."
 *     unknown key             400 (no code)                   "Unrecognized request argument supplied: tools"
 *
 * Zod 4 leaves an issue's input out unless asked (`reportInput`), and a missing field is an
 * `invalid_type` whose input is undefined: without the input, every wrong type would read as
 * "missing" (the bug this file fixes).
 */
import { z } from 'zod';
import { ApiError } from './openai-errors.js';

/** `['messages', 2, 'content']` → `messages[2].content`; null for the body itself. */
export function paramOf(path: readonly PropertyKey[]): string | null {
  let out = '';
  for (const key of path) out += typeof key === 'number' ? `[${key}]` : out === '' ? String(key) : `.${String(key)}`;
  return out === '' ? null : out;
}

/**
 * The JSON type of a value in words, as OpenAI's messages name it.
 * @example typeWords(1.5) // 'a decimal number'
 */
export function typeWords(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'an integer' : 'a decimal number';
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'boolean') return 'a boolean';
  return 'an object';
}

const EXPECTED: Record<string, string> = {
  int: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'a boolean',
  array: 'an array',
  object: 'an object',
};

/** Short rendering of a value for a message (long strings and arrays are not echoed in full). */
function shown(value: unknown): string {
  if (typeof value === 'string') return value.length > 40 ? `a string of ${value.length} characters` : JSON.stringify(value);
  if (Array.isArray(value)) return `an array of ${value.length} items`;
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  return 'an object';
}

/** The 400 for one zod issue. */
function issueError(issue: z.core.$ZodIssue): ApiError {
  if (issue.code === 'unrecognized_keys') {
    const base = paramOf(issue.path);
    const keys = issue.keys.map((k) => (base === null ? k : `${base}.${k}`));
    return ApiError.invalid(keys[0] ?? null, `Unrecognized request argument supplied: ${keys.join(', ')}`);
  }
  const param = paramOf(issue.path);
  const name = `'${param ?? 'body'}'`;
  const input = issue.input;
  if (issue.code === 'invalid_union') {
    // The value is of one alternative's type but breaks its limits (17 stop strings, one of them
    // too long): that is the problem to name, not "expected a string or an array, got an array".
    const matched = issue.errors.find((alt) => alt.length > 0 && !alt.some((i) => i.path.length === 0 && i.code === 'invalid_type'));
    const first = matched?.[0];
    if (first !== undefined) return issueError({ ...first, path: [...issue.path, ...first.path] } as z.core.$ZodIssue);
  }
  if (issue.code === 'invalid_type' || issue.code === 'invalid_union') {
    if (input === undefined) return ApiError.invalid(param, `Missing required parameter: ${name}.`, 'missing_required_parameter');
    const custom = !issue.message.startsWith('Invalid input'); // a schema's own description of what it expects
    const expected = custom
      ? issue.message
      : issue.code === 'invalid_type'
        ? (EXPECTED[issue.expected] ?? issue.expected)
        : [...new Set(issue.errors.flatMap((alt) => alt.filter((i) => i.path.length === 0 && i.code === 'invalid_type').map((i) => EXPECTED[(i as { expected: string }).expected] ?? 'a value')))].join(' or ');
    return ApiError.invalid(param, `Invalid type for ${name}: expected ${expected}, but got ${typeWords(input)} instead.`, 'invalid_type');
  }
  if (issue.code === 'too_big' || issue.code === 'too_small') {
    const bound = issue.code === 'too_big' ? (issue.inclusive === false ? '<' : '<=') : issue.inclusive === false ? '>' : '>=';
    const limit = Number(issue.code === 'too_big' ? issue.maximum : issue.minimum);
    const what =
      issue.origin === 'array' || issue.origin === 'set'
        ? `${issue.code === 'too_big' ? 'at most' : 'at least'} ${limit} item${limit === 1 ? '' : 's'}`
        : issue.origin === 'string'
          ? `${issue.code === 'too_big' ? 'at most' : 'at least'} ${limit} character${limit === 1 ? '' : 's'}`
          : `a value ${bound} ${limit}`;
    return ApiError.invalid(param, `Invalid value for ${name}: expected ${what}, but got ${shown(input)} instead.`, 'invalid_value');
  }
  if (issue.code === 'invalid_value') {
    const options = issue.values.map((v) => JSON.stringify(v)).join(', ');
    return ApiError.invalid(param, `Invalid value for ${name}: expected one of ${options}, but got ${shown(input)} instead.`, 'invalid_value');
  }
  return ApiError.invalid(param, `Invalid value for ${name}: ${issue.message}.`, 'invalid_value');
}

/**
 * An integer field whose type error says "expected an integer" (a plain `z.number().int()` says
 * "a number" for a string).
 * @example const schema = z.object({ max_tokens: integer().min(0) });
 */
export function integer(): z.ZodNumber {
  return z.number({ error: 'an integer' }).int();
}

/**
 * Parses a JSON body with `schema`, throwing the {@link ApiError} of its first problem.
 * @example const req = parseBody(chatRequestSchema, await c.req.json());
 */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw ApiError.invalid(null, `The request body must be a JSON object, but got ${typeWords(body)}.`);
  }
  const parsed = schema.safeParse(body, { reportInput: true });
  if (parsed.success) return parsed.data;
  throw issueError(parsed.error.issues[0] as z.core.$ZodIssue);
}
