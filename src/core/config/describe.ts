/**
 * Every config field with its type, default and description, read from the schema itself so that
 * the table in docs/configuration.md cannot drift from the code.
 */
import { z } from 'zod';
import { configSchema } from './schema.js';
import { descriptionOf, typeLabel, unwrapField } from './walk.js';

/** One documented config field. */
export interface ConfigFieldDoc {
  /** Dotted key path, e.g. `algorithm.lr`. */
  readonly path: string;
  /** Type label, e.g. `number > 0` or `'auto' | 'wasm'`. */
  readonly type: string;
  /** Default value, when the field has one. */
  readonly default?: unknown;
  readonly description: string;
  /** For fields of one horizon schedule: which one, e.g. `schedule: 'stepwise'`. */
  readonly when?: string;
  /** May be left out with no default (the code then decides, as the description says). */
  readonly optional?: boolean;
}

function pushField(path: string, field: z.ZodType, when: string | undefined, out: ConfigFieldDoc[]): void {
  const unwrapped = unwrapField(field);
  if (unwrapped.inner instanceof z.ZodObject || unwrapped.inner instanceof z.ZodDiscriminatedUnion) {
    visit(field, path, when, out);
    return;
  }
  out.push({
    path,
    type: typeLabel(field),
    description: descriptionOf(field) ?? '',
    ...(unwrapped.hasDefault ? { default: unwrapped.defaultValue } : {}),
    ...(when === undefined ? {} : { when }),
    ...(!unwrapped.hasDefault && field.safeParse(undefined).success ? { optional: true } : {}),
  });
}

function tagOf(option: z.ZodObject, key: string): string {
  const tag = unwrapField(option.shape[key] as z.ZodType).inner;
  return tag instanceof z.ZodLiteral ? String([...tag._zod.def.values][0]) : '?';
}

function visit(schema: z.ZodType, prefix: string, when: string | undefined, out: ConfigFieldDoc[]): void {
  const { inner, hasDefault, defaultValue } = unwrapField(schema);
  if (inner instanceof z.ZodObject) {
    for (const [key, field] of Object.entries(inner.shape)) {
      pushField(prefix.length === 0 ? key : `${prefix}.${key}`, field as z.ZodType, when, out);
    }
  } else if (inner instanceof z.ZodDiscriminatedUnion) {
    // One row for the discriminator, then each option's own fields marked with the option they belong to.
    const key = inner._zod.def.discriminator;
    const options = inner.options.filter((o): o is z.ZodObject => o instanceof z.ZodObject);
    const tags = options.map((o) => tagOf(o, key));
    // The default tag: from the union's default value, else from an option whose tag field has a default.
    const defaultTag =
      (hasDefault ? (defaultValue as Record<string, unknown>)[key] : undefined) ??
      options.map((o) => unwrapField(o.shape[key] as z.ZodType)).find((u) => u.hasDefault)?.defaultValue;
    out.push({
      path: `${prefix}.${key}`,
      type: tags.map((t) => `'${t}'`).join(' | '),
      description: descriptionOf(schema) ?? '',
      ...(defaultTag === undefined ? {} : { default: defaultTag }),
    });
    // A field every option has is listed once, for all; the others once per option that has it.
    const common = new Set(Object.keys(options[0]?.shape ?? {}).filter((field) => field !== key && options.every((o) => field in o.shape)));
    for (const field of common) pushField(`${prefix}.${field}`, options[0].shape[field] as z.ZodType, when, out);
    options.forEach((option, i) => {
      for (const [field, fieldSchema] of Object.entries(option.shape)) {
        if (field !== key && !common.has(field)) pushField(`${prefix}.${field}`, fieldSchema as z.ZodType, `${key}: '${tags[i]}'`, out);
      }
    });
  }
}

/**
 * Lists every config field path with its type, default and description, in schema order.
 * @example describeConfig().find((f) => f.path === 'algorithm.lr') // { path: 'algorithm.lr', type: 'number > 0', default: 0.001, ... }
 */
export function describeConfig(): ConfigFieldDoc[] {
  const out: ConfigFieldDoc[] = [];
  visit(configSchema, '', undefined, out);
  return out;
}

/**
 * The config reference as a Markdown table (for docs/configuration.md).
 * @example console.log(configMarkdownTable());
 */
export function configMarkdownTable(): string {
  const cell = (text: string) => text.replaceAll('|', '\\|');
  const rows = describeConfig().map((f) => {
    // Required: the config must set it; optional: it may be left out, and has no fixed default.
    const fallback = 'default' in f ? `\`${JSON.stringify(f.default)}\`` : f.optional === true ? 'optional' : 'required';
    const description = f.when === undefined ? f.description : `${f.description} (when ${f.when})`;
    return `| \`${f.path}\` | ${cell(f.type)} | ${cell(fallback)} | ${cell(description)} |`;
  });
  return ['| field | type | default | description |', '|---|---|---|---|', ...rows].join('\n');
}
