/**
 * A JSON schema as a byte grammar: the JSON texts it admits, as `GrammarState`s, so decoding can
 * be kept to valid tool-call arguments (vLLM's and SGLang's structured outputs do the same with
 * xgrammar / outlines).
 *
 * What constrains the text: `type` (one or a list), `enum`, `const`, `properties` with `required`
 * (keys in any order, each at most once; a required key that is not declared is not enforced), `additionalProperties` (false, true or a schema),
 * `items`, `minItems` / `maxItems`, `minLength` / `maxLength`, `anyOf` / `oneOf`, a single-element
 * `allOf`, `nullable`, local `$ref`s (`#/$defs/…`, `#/definitions/…`, recursion included), and the
 * boolean schemas. As xgrammar's strict mode does, an object that declares `properties` takes only
 * those keys unless `additionalProperties` says otherwise (a model given free keys writes them).
 * What is not enforced, so the grammar admits a superset: `pattern`, `format`, numeric bounds,
 * `uniqueItems`, `prefixItems`, `not`, and `allOf` of several schemas. Anything else that is not a
 * schema is refused with a {@link SchemaGrammarError} naming where, and so is a schema past
 * {@link SCHEMA_LIMITS} (a request's schema must not cost the server unbounded time per token).
 */
import { type GrammarState, lazy, literal, space, union } from './grammar-state.js';
import { jsonNumber, jsonString } from './json-values.js';

/** A schema that cannot be turned into a grammar; `path` is the JSON pointer of the part at fault. */
export class SchemaGrammarError extends Error {
  constructor(
    readonly path: string,
    readonly detail: string,
  ) {
    super(`${path === '' ? 'the schema' : path}: ${detail}`);
    this.name = 'SchemaGrammarError';
  }
}

/** A compiled schema: the grammar of one value it admits, followed by `next`. */
export interface SchemaNode {
  start(next: GrammarState): GrammarState | null;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type SchemaObject = Readonly<Record<string, unknown>>;

const TYPES = ['string', 'number', 'integer', 'boolean', 'null', 'object', 'array'] as const;
type JsonType = (typeof TYPES)[number];

const NOTHING: SchemaNode = { start: () => null };

/**
 * Compiles `schema` (a JSON schema object or boolean).
 * @example compileSchema({ type: 'object', properties: { word: { type: 'string' } }, required: ['word'] }).start(END)
 */
export function compileSchema(schema: unknown): SchemaNode {
  return new Compiler(schema).node(schema, '');
}

/**
 * Bounds on a schema from a request: its nesting, its size and the alternatives a grammar state may
 * hold at once (each alternative is stepped for every byte of every token the vocabulary walk tries).
 */
export const SCHEMA_LIMITS = { depth: 32, nodes: 4096, enumValues: 1024, alternatives: 64, properties: 256 } as const;

class Compiler {
  private readonly refs = new Map<string, SchemaNode>();
  private depth = 0;
  private nodes = 0;
  constructor(private readonly root: unknown) {}

  node(schema: unknown, path: string): SchemaNode {
    if (this.depth >= SCHEMA_LIMITS.depth) throw new SchemaGrammarError(path, `nested deeper than ${SCHEMA_LIMITS.depth} schemas`);
    if (++this.nodes > SCHEMA_LIMITS.nodes) throw new SchemaGrammarError(path, `more than ${SCHEMA_LIMITS.nodes} schemas in all`);
    this.depth++;
    try {
      return this.compile(schema, path);
    } finally {
      this.depth--;
    }
  }

  private compile(schema: unknown, path: string): SchemaNode {
    if (schema === true) return this.any();
    if (schema === false) return NOTHING;
    if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) throw new SchemaGrammarError(path, 'expected a schema (an object or a boolean)');
    const s = schema as SchemaObject;
    if (s.$ref !== undefined) return this.ref(s.$ref, path);
    if (s.const !== undefined) return literals([s.const as Json]);
    if (s.enum !== undefined) {
      if (!Array.isArray(s.enum) || s.enum.length === 0) throw new SchemaGrammarError(`${path}/enum`, 'expected a non-empty array');
      if (s.enum.length > SCHEMA_LIMITS.enumValues) throw new SchemaGrammarError(`${path}/enum`, `more than ${SCHEMA_LIMITS.enumValues} values`);
      return literals(s.enum as Json[]);
    }
    const alternatives = s.anyOf ?? s.oneOf;
    if (alternatives !== undefined) {
      const key = s.anyOf !== undefined ? 'anyOf' : 'oneOf';
      if (!Array.isArray(alternatives) || alternatives.length === 0) throw new SchemaGrammarError(`${path}/${key}`, 'expected a non-empty array of schemas');
      if (alternatives.length > SCHEMA_LIMITS.alternatives) throw new SchemaGrammarError(`${path}/${key}`, `more than ${SCHEMA_LIMITS.alternatives} alternatives`);
      return nullable(s, anyNode(alternatives.map((a, i) => this.node(a, `${path}/${key}/${i}`))));
    }
    if (s.allOf !== undefined) {
      if (!Array.isArray(s.allOf) || s.allOf.length === 0) throw new SchemaGrammarError(`${path}/allOf`, 'expected a non-empty array of schemas');
      if (s.allOf.length === 1) return nullable(s, this.node(s.allOf[0], `${path}/allOf/0`));
    }
    return nullable(s, anyNode(this.types(s, path).map((t) => this.typed(t, s, path))));
  }

  /** The types `s` admits: its `type`, or what its keywords imply, or all. */
  private types(s: SchemaObject, path: string): JsonType[] {
    const declared = s.type;
    if (declared === undefined) {
      if (s.properties !== undefined || s.required !== undefined || s.additionalProperties !== undefined) return ['object'];
      if (s.items !== undefined || s.minItems !== undefined || s.maxItems !== undefined) return ['array'];
      if (s.minLength !== undefined || s.maxLength !== undefined) return ['string'];
      return [...TYPES].filter((t) => t !== 'integer');
    }
    const list = Array.isArray(declared) ? declared : [declared];
    list.forEach((t, i) => {
      if (!TYPES.includes(t as JsonType)) throw new SchemaGrammarError(`${path}/type${Array.isArray(declared) ? `/${i}` : ''}`, `unknown type ${JSON.stringify(t)} (expected one of ${TYPES.join(', ')})`);
    });
    return list as JsonType[];
  }

  private typed(type: JsonType, s: SchemaObject, path: string): SchemaNode {
    switch (type) {
      case 'string': {
        const min = count(s.minLength, `${path}/minLength`, 0);
        const max = count(s.maxLength, `${path}/maxLength`, Number.POSITIVE_INFINITY);
        if (min > max) throw new SchemaGrammarError(path, `minLength ${min} exceeds maxLength ${max}`);
        return { start: (next) => jsonString(next, { min, max }) };
      }
      case 'number':
      case 'integer':
        return { start: (next) => jsonNumber(next, type === 'integer') };
      case 'boolean':
        return literals([true, false]);
      case 'null':
        return literals([null]);
      case 'object':
        return this.object(s, path);
      case 'array':
        return this.array(s, path);
    }
  }

  private object(s: SchemaObject, path: string): SchemaNode {
    const props = s.properties ?? {};
    if (typeof props !== 'object' || props === null || Array.isArray(props)) throw new SchemaGrammarError(`${path}/properties`, 'expected an object of schemas');
    if (Object.keys(props).length > SCHEMA_LIMITS.properties) throw new SchemaGrammarError(`${path}/properties`, `more than ${SCHEMA_LIMITS.properties} properties`);
    const properties = new Map<string, SchemaNode>();
    for (const [key, value] of Object.entries(props)) properties.set(key, this.node(value, `${path}/properties/${escapePointer(key)}`));
    const required = s.required ?? [];
    if (!Array.isArray(required) || required.some((r) => typeof r !== 'string')) throw new SchemaGrammarError(`${path}/required`, 'expected an array of property names');
    // Declared properties close the object unless it says otherwise; an object that declares none is free.
    const extraSchema = s.additionalProperties ?? (s.properties === undefined ? true : false);
    const extra = extraSchema === false ? null : this.node(extraSchema, `${path}/additionalProperties`);
    return objectNode(properties, new Set(required as string[]), extra);
  }

  private array(s: SchemaObject, path: string): SchemaNode {
    const item = s.items === undefined ? this.any() : this.node(s.items, `${path}/items`);
    const min = count(s.minItems, `${path}/minItems`, 0);
    const max = count(s.maxItems, `${path}/maxItems`, Number.POSITIVE_INFINITY);
    if (min > max) throw new SchemaGrammarError(path, `minItems ${min} exceeds maxItems ${max}`);
    return arrayNode(item, min, max);
  }

  private ref(ref: unknown, path: string): SchemaNode {
    if (typeof ref !== 'string' || !ref.startsWith('#')) throw new SchemaGrammarError(`${path}/$ref`, 'only references inside the schema ("#/…") are followed');
    const known = this.refs.get(ref);
    if (known !== undefined) return known;
    // Registered before it is compiled, so a schema that refers to itself finds it.
    let compiled: SchemaNode | undefined;
    const node: SchemaNode = { start: (next) => lazy(() => (compiled as SchemaNode).start(next)) };
    this.refs.set(ref, node);
    let target: unknown = this.root;
    for (const part of ref.slice(1).split('/').filter((p) => p !== '')) {
      const key = part.replaceAll('~1', '/').replaceAll('~0', '~');
      if (typeof target !== 'object' || target === null || !(key in target)) throw new SchemaGrammarError(`${path}/$ref`, `${ref} points at nothing`);
      target = (target as Record<string, unknown>)[key];
    }
    compiled = this.node(target, ref.slice(1));
    return node;
  }

  private anyCache: SchemaNode | undefined;
  private any(): SchemaNode {
    this.anyCache ??= anyNode([
      { start: (next) => jsonString(next) },
      { start: (next) => jsonNumber(next, false) },
      literals([true, false, null]),
      { start: (next) => lazy(() => objectNode(new Map(), new Set(), this.any()).start(next)) },
      { start: (next) => lazy(() => arrayNode(this.any(), 0, Number.POSITIVE_INFINITY).start(next)) },
    ]);
    return this.anyCache;
  }
}

function count(value: unknown, path: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) throw new SchemaGrammarError(path, `expected an integer >= 0, got ${JSON.stringify(value)}`);
  return value;
}

function escapePointer(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}

/** Exactly one of these values, written as `JSON.stringify` writes them. */
function literals(values: readonly Json[]): SchemaNode {
  const texts = values.map((v) => JSON.stringify(v));
  return { start: (next) => union(texts.map((t) => literal(t, next))) };
}

function anyNode(nodes: readonly SchemaNode[]): SchemaNode {
  return nodes.length === 1 ? (nodes[0] as SchemaNode) : { start: (next) => union(nodes.map((n) => n.start(next))) };
}

/** OpenAPI's `nullable: true`: the value or null. */
function nullable(s: SchemaObject, node: SchemaNode): SchemaNode {
  return s.nullable === true ? anyNode([node, literals([null])]) : node;
}

/** `{`, declared keys in any order (each once, the required ones all), free keys when `extra` is set, `}`. */
function objectNode(properties: ReadonlyMap<string, SchemaNode>, required: ReadonlySet<string>, extra: SchemaNode | null): SchemaNode {
  // A required key the object does not declare cannot be tracked among free keys: not enforced.
  const needed = [...required].filter((key) => properties.has(key));
  const closes = (seen: ReadonlySet<string>, next: GrammarState) => (needed.every((key) => seen.has(key)) ? literal('}', next) : null);
  const member = (seen: ReadonlySet<string>, next: GrammarState): GrammarState | null => {
    const after = (key: string | null) => lazy(() => spaced(rest(key === null ? seen : new Set([...seen, key]), next)));
    const value = (node: SchemaNode, key: string | null) => space(literal(':', space(lazy(() => node.start(after(key))))));
    const declared = [...properties].filter(([key]) => !seen.has(key)).map(([key, node]) => literal(JSON.stringify(key), value(node, key)));
    return union([...declared, extra === null ? null : jsonString(value(extra, null))]);
  };
  const rest = (seen: ReadonlySet<string>, next: GrammarState): GrammarState | null => {
    const more = member(seen, next);
    return union([more === null ? null : literal(',', space(more)), closes(seen, next)]);
  };
  return { start: (next) => literal('{', spaced(union([member(new Set(), next), closes(new Set(), next)]))) };
}

/** `[`, between `min` and `max` items separated by commas, `]`. */
function arrayNode(item: SchemaNode, min: number, max: number): SchemaNode {
  const first = (next: GrammarState) => union([max > 0 ? lazy(() => item.start(after(1, next))) : null, min === 0 ? literal(']', next) : null]);
  const after = (n: number, next: GrammarState): GrammarState =>
    spaced(union([n < max ? literal(',', space(lazy(() => item.start(after(n + 1, next))))) : null, n >= min ? literal(']', next) : null]));
  return { start: (next) => literal('[', spaced(first(next))) };
}

/** Optional whitespace before `state`; a dead end stays one (a state that takes nothing). */
function spaced(state: GrammarState | null): GrammarState {
  return state === null ? DEAD : space(state);
}

const DEAD: GrammarState = { step: () => null, complete: false };
