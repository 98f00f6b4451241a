/**
 * Read-only walks over the config schema: the schema at a key path (for error messages that list
 * valid keys) and a short type label per field (for `describeConfig`). Kept apart from the schema
 * so that the schema file reads as a list of fields.
 */
import { z } from 'zod';

/** Removes default/prefault/optional wrappers; returns the inner schema and the default, if any. */
export function unwrapField(schema: z.ZodType): { inner: z.ZodType; hasDefault: boolean; defaultValue: unknown } {
  let inner = schema;
  let hasDefault = false;
  let defaultValue: unknown;
  for (;;) {
    if (inner instanceof z.ZodDefault || inner instanceof z.ZodPrefault) {
      if (!hasDefault) {
        hasDefault = true;
        defaultValue = inner._zod.def.defaultValue;
      }
      inner = inner._zod.def.innerType as z.ZodType;
    } else if (inner instanceof z.ZodOptional || inner instanceof z.ZodNullable) {
      inner = inner._zod.def.innerType as z.ZodType;
    } else {
      return { inner, hasDefault, defaultValue };
    }
  }
}

/** The description set with `.describe()` on the field or on its unwrapped schema. */
export function descriptionOf(schema: z.ZodType): string | undefined {
  return schema.description ?? unwrapField(schema).inner.description;
}

/** For a discriminated union and the raw input at its position, the option the input chose (or null). */
export function chosenOption(schema: z.ZodDiscriminatedUnion, input: unknown): z.ZodObject | null {
  const key = schema._zod.def.discriminator;
  const tag = input !== null && typeof input === 'object' ? (input as Record<string, unknown>)[key] : undefined;
  for (const option of schema.options) {
    if (option instanceof z.ZodObject && literalValues(option.shape[key] as z.ZodType).includes(tag)) return option;
  }
  return null;
}

function literalValues(schema: z.ZodType): unknown[] {
  const { inner, hasDefault } = unwrapField(schema);
  // A defaulted tag (e.g. algorithm.name = 'grpo') is also chosen when the input leaves it out.
  return inner instanceof z.ZodLiteral ? [...inner._zod.def.values, ...(hasDefault ? [undefined] : [])] : [];
}

/**
 * The object schema at a key path, following the raw input to choose union options; null when the
 * path does not lead to an object.
 */
export function objectSchemaAt(root: z.ZodType, path: readonly PropertyKey[], rootInput: unknown): z.ZodObject | null {
  let schema: z.ZodType = root;
  let input = rootInput;
  for (let i = 0; ; i++) {
    schema = unwrapField(schema).inner;
    if (schema instanceof z.ZodDiscriminatedUnion) {
      const option = chosenOption(schema, input);
      if (option === null) return null;
      schema = option;
    }
    if (i === path.length) return schema instanceof z.ZodObject ? schema : null;
    if (!(schema instanceof z.ZodObject)) return null;
    const key = String(path[i]);
    const next = schema.shape[key] as z.ZodType | undefined;
    if (next === undefined) return null;
    schema = next;
    input = input !== null && typeof input === 'object' ? (input as Record<string, unknown>)[key] : undefined;
  }
}

/** A short human label for a field's type: `integer > 0`, `'auto' | 'wasm'`, `number[]`. */
export function typeLabel(schema: z.ZodType): string {
  const { inner } = unwrapField(schema);
  if (inner instanceof z.ZodNumber) {
    const parts: string[] = [];
    for (const check of inner._zod.def.checks ?? []) {
      const def = check._zod.def as { check?: string; value?: unknown; inclusive?: boolean };
      if (def.check === 'greater_than') parts.push(`${def.inclusive ? '>=' : '>'} ${String(def.value)}`);
      if (def.check === 'less_than') parts.push(`${def.inclusive ? '<=' : '<'} ${String(def.value)}`);
    }
    const kind = inner.isInt ? 'integer' : 'number';
    return parts.length > 0 ? `${kind} ${parts.join(', ')}` : kind;
  }
  if (inner instanceof z.ZodString) return 'string';
  if (inner instanceof z.ZodBoolean) return 'boolean';
  if (inner instanceof z.ZodEnum) return inner.options.map((o) => `'${String(o)}'`).join(' | ');
  if (inner instanceof z.ZodLiteral) return [...inner._zod.def.values].map((v) => JSON.stringify(v).replaceAll('"', "'")).join(' | ');
  if (inner instanceof z.ZodArray) return `${typeLabel(inner.element as z.ZodType)}[]`;
  if (inner instanceof z.ZodRecord) return 'record';
  if (inner instanceof z.ZodUnion) return inner.options.map((o) => typeLabel(o as z.ZodType)).join(' | ');
  if (inner instanceof z.ZodObject) return 'object';
  return inner._zod.def.type;
}
