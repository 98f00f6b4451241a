/**
 * Request validation with FastAPI's 422 answers, so AgentGym's clients (and people reading them)
 * see what AgentGym's own servers send: `{"detail": [{"type", "loc", "msg", "input"[, "ctx"]}]}`
 * with pydantic v2's error types (`missing`, `int_parsing`, `int_from_float`, `int_type`,
 * `string_type`, `json_invalid`, `model_attributes_type`, `less_than_equal`, `greater_than_equal`).
 *
 * Why not zod here: the bodies are two or three scalar fields, and what matters is pydantic's
 * exact lax-mode rules (an integer may arrive as `3`, `3.0` or `"3"`) and error names, which a field
 * table states more plainly than a mapping from zod's issue codes. Two departures, both refusing what
 * no client means: a boolean is not an integer (`int_type`), and an integer must be exact in a
 * double (|n| <= 2^53 - 1; `less_than_equal` / `greater_than_equal`).
 */

/** Field types the AgentGym bodies use. */
export type FieldType = 'int' | 'str';

/** One field of a body or query. */
export interface FieldSpec {
  readonly name: string;
  readonly type: FieldType;
  /** Required fields report `missing`; optional ones take `fallback` (null allowed). */
  readonly required: boolean;
  readonly fallback?: number | string | null;
}

/** One entry of FastAPI's `detail` list. */
export interface ValidationIssue {
  readonly type: string;
  readonly loc: readonly (string | number)[];
  readonly msg: string;
  readonly input: unknown;
  readonly ctx?: Readonly<Record<string, unknown>>;
}

export type Validated = { readonly ok: true; readonly value: Record<string, number | string | null> } | { readonly ok: false; readonly detail: ValidationIssue[] };

const INT_RE = /^\s*[-+]?\d+\s*$/;

function checkField(spec: FieldSpec, present: boolean, value: unknown, where: 'body' | 'query', whole: unknown): { value?: number | string | null; issue?: ValidationIssue } {
  const loc = [where, spec.name];
  if (!present) {
    if (spec.required) return { issue: { type: 'missing', loc, msg: 'Field required', input: where === 'body' ? whole : null } };
    return { value: spec.fallback ?? null };
  }
  if (value === null && !spec.required) return { value: null };
  if (spec.type === 'str') {
    if (typeof value === 'string') return { value };
    return { issue: { type: 'string_type', loc, msg: 'Input should be a valid string', input: value } };
  }
  if (typeof value === 'number') {
    if (Number.isInteger(value)) return safeInt(value, loc, value);
    if (Number.isFinite(value)) return { issue: { type: 'int_from_float', loc, msg: 'Input should be a valid integer, got a number with a fractional part', input: value } };
  }
  // pydantic's lax mode takes true as 1; no AgentGym client sends one, and an id of `true` is a bug to report, not to run.
  if (typeof value === 'boolean') return { issue: { type: 'int_type', loc, msg: 'Input should be a valid integer, got a boolean', input: value } };
  if (typeof value === 'string') {
    if (INT_RE.test(value)) return safeInt(Number(value), loc, value);
    return { issue: { type: 'int_parsing', loc, msg: 'Input should be a valid integer, unable to parse string as an integer', input: value } };
  }
  return { issue: { type: 'int_type', loc, msg: 'Input should be a valid integer', input: value } };
}

/**
 * An integer beyond ±(2^53 - 1) has lost its exact value (`1e308` parses as an integer): refused in
 * pydantic's words for a bound (`less_than_equal` / `greater_than_equal`).
 */
function safeInt(value: number, loc: (string | number)[], input: unknown): { value?: number; issue?: ValidationIssue } {
  if (value > Number.MAX_SAFE_INTEGER) return { issue: { type: 'less_than_equal', loc, msg: `Input should be less than or equal to ${Number.MAX_SAFE_INTEGER}`, input, ctx: { le: Number.MAX_SAFE_INTEGER } } };
  if (value < -Number.MAX_SAFE_INTEGER) return { issue: { type: 'greater_than_equal', loc, msg: `Input should be greater than or equal to ${-Number.MAX_SAFE_INTEGER}`, input, ctx: { ge: -Number.MAX_SAFE_INTEGER } } };
  return { value };
}

function checkFields(fields: readonly FieldSpec[], source: Record<string, unknown>, where: 'body' | 'query', whole: unknown): Validated {
  const value: Record<string, number | string | null> = {};
  const detail: ValidationIssue[] = [];
  for (const spec of fields) {
    const checked = checkField(spec, Object.hasOwn(source, spec.name) && source[spec.name] !== undefined, source[spec.name], where, whole);
    if (checked.issue) detail.push(checked.issue);
    else value[spec.name] = checked.value ?? null;
  }
  return detail.length > 0 ? { ok: false, detail } : { ok: true, value };
}

function isJsonContentType(contentType: string | undefined): boolean {
  if (contentType === undefined || contentType.trim() === '') return true; // FastAPI parses a body without content-type as JSON
  const media = (contentType.split(';')[0] ?? '').trim().toLowerCase();
  return media === 'application/json' || (media.startsWith('application/') && media.endsWith('+json'));
}

/**
 * Validates a JSON request body against `fields`, as FastAPI does for a pydantic model parameter.
 * @example validateBody('{"id": "x"}', 'application/json', [{ name: 'id', type: 'int', required: true }])
 * // { ok: false, detail: [{ type: 'int_parsing', loc: ['body', 'id'], ... }] }
 */
export function validateBody(raw: string, contentType: string | undefined, fields: readonly FieldSpec[]): Validated {
  if (raw.length === 0) return { ok: false, detail: [{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }] };
  if (!isJsonContentType(contentType)) {
    return { ok: false, detail: [{ type: 'model_attributes_type', loc: ['body'], msg: 'Input should be a valid dictionary or object to extract fields from', input: raw }] };
  }
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch (error) {
    const position = Number(/position (\d+)/.exec((error as Error).message)?.[1] ?? 0);
    return { ok: false, detail: [{ type: 'json_invalid', loc: ['body', position], msg: 'JSON decode error', input: {}, ctx: { error: 'Expecting value' } }] };
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { ok: false, detail: [{ type: 'model_attributes_type', loc: ['body'], msg: 'Input should be a valid dictionary or object to extract fields from', input: body }] };
  }
  return checkFields(fields, body as Record<string, unknown>, 'body', body);
}

/**
 * Validates query parameters (`GET /observation?id=3`).
 * @example validateQuery(new URLSearchParams('id=3'), [{ name: 'id', type: 'int', required: true }]) // { ok: true, value: { id: 3 } }
 */
export function validateQuery(params: URLSearchParams, fields: readonly FieldSpec[]): Validated {
  const source: Record<string, unknown> = {};
  for (const spec of fields) {
    const value = params.get(spec.name);
    if (value !== null) source[spec.name] = value;
  }
  return checkFields(fields, source, 'query', null);
}
