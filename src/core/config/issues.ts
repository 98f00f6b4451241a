/**
 * Turns zod issues into one `InvalidConfigError` whose path is the dotted key path
 * (`algorithm.lr`) and whose message says what was expected and what was found. Unknown keys name
 * the key and list the valid ones.
 */
import type { z } from 'zod';
import { InvalidConfigError } from '../errors.js';
import { objectSchemaAt } from './walk.js';

/** `['horizon', 'horizons', 0]` -> `horizon.horizons[0]`; the root is `<root>`. */
export function dottedPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out.length === 0 ? String(key) : `.${String(key)}`;
  }
  return out.length === 0 ? '<root>' : out;
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[key as string];
  }
  return value;
}

/** A short rendering of a found value: `string "abc"`, `number -1`, `an array`. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing (the field is missing)';
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === 'object') return 'an object';
  const text = JSON.stringify(value) ?? String(value);
  return `${typeof value} ${text.length > 60 ? `${text.slice(0, 57)}...` : text}`;
}

interface Problem {
  readonly path: string;
  readonly detail: string;
}

function stripPrefix(message: string): string {
  // zod writes "Too small: expected number to be >0"; the part after the colon is what we want.
  const cut = message.indexOf(': ');
  return cut > 0 && cut < 20 ? message.slice(cut + 2) : message;
}

function problemsOf(issue: z.core.$ZodIssue, schema: z.ZodType, input: unknown): Problem[] {
  const found = valueAt(input, issue.path);
  switch (issue.code) {
    case 'unrecognized_keys': {
      const owner = objectSchemaAt(schema, issue.path, input);
      const valid = owner === null ? '' : `; valid keys: ${Object.keys(owner.shape).join(', ')}`;
      return issue.keys.map((key) => ({ path: dottedPath([...issue.path, key]), detail: `unknown key '${key}'${valid}` }));
    }
    case 'invalid_type':
      if (found === undefined) return [{ path: dottedPath(issue.path), detail: `required field is missing (expected ${issue.expected})` }];
      return [{ path: dottedPath(issue.path), detail: `expected ${issue.expected}, got ${describeValue(found)}` }];
    case 'invalid_value':
      return [
        {
          path: dottedPath(issue.path),
          detail: `expected one of ${issue.values.map((v) => `'${String(v)}'`).join(' | ')}, got ${describeValue(found)}`,
        },
      ];
    case 'invalid_union': {
      // A discriminated union reports the tag it wanted as `discriminator` and the valid tags as `options`.
      const extra = issue as { discriminator?: unknown; options?: unknown };
      if (typeof extra.discriminator === 'string' && Array.isArray(extra.options)) {
        const options = extra.options.filter((v) => v !== undefined).map((v) => `'${String(v)}'`).join(' | ');
        return [{ path: dottedPath(issue.path), detail: `expected one of ${options}, got ${describeValue(found)}` }];
      }
      return [{ path: dottedPath(issue.path), detail: `${stripPrefix(issue.message)}, got ${describeValue(found)}` }];
    }
    case 'custom':
      return [{ path: dottedPath(issue.path), detail: issue.message }];
    default:
      return [{ path: dottedPath(issue.path), detail: `${stripPrefix(issue.message)}, got ${describeValue(found)}` }];
  }
}

/**
 * One error for all issues: the first names `path`, the rest are listed in the message.
 * @example
 * const result = configSchema.safeParse(raw);
 * if (!result.success) throw configErrorFrom(result.error, configSchema, raw, 'configs/x.yaml');
 */
export function configErrorFrom(error: z.ZodError, schema: z.ZodType, input: unknown, source?: string): InvalidConfigError {
  const problems = error.issues.flatMap((issue) => problemsOf(issue, schema, input));
  const [first, ...rest] = problems.length > 0 ? problems : [{ path: '<root>', detail: error.message }];
  let detail = first.detail;
  if (rest.length > 0) detail += `; also ${rest.map((p) => `'${p.path}': ${p.detail}`).join('; ')}`;
  if (source !== undefined) detail += ` (in ${source})`;
  return new InvalidConfigError(first.path, detail, { cause: error });
}
