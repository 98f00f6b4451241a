/**
 * Tools: an environment's actions as function declarations, and the one canonical text form of a
 * call.
 *
 * A model that calls tools writes them in its family's own format (Qwen/Hermes `<tool_call>`,
 * Llama 3.1 JSON, Mistral `[TOOL_CALLS]`); the chat layer parses that and hands the environment
 * {@link toolCallText} of the call, so a call reaches every environment through the unchanged
 * `step(actionText)` — over worker threads, NATS and AgentGym HTTP alike. Pure; no model imports.
 */

/** A JSON-schema property (the subset function declarations use: type, description, enum, items). */
export interface JsonSchemaProperty {
  readonly type?: 'string' | 'number' | 'integer' | 'boolean' | 'array' | 'object' | 'null';
  readonly description?: string;
  readonly enum?: readonly (string | number | boolean)[];
  readonly items?: JsonSchemaProperty;
  readonly [key: string]: unknown;
}

/** The parameters of a tool: a JSON-schema object (as OpenAI's and transformers' tool formats take it). */
export interface JsonSchemaObject {
  readonly type: 'object';
  readonly properties: Readonly<Record<string, JsonSchemaProperty>>;
  readonly required?: readonly string[];
}

/** One tool the agent may call: a function declaration. */
export interface ToolSpec {
  /** Function name, e.g. `guess`. */
  readonly name: string;
  /** What the tool does, shown to the model. */
  readonly description: string;
  /** JSON-schema object describing the arguments. */
  readonly parameters: JsonSchemaObject;
}

/** A tool call: the function's name and its arguments. */
export interface ToolCall {
  readonly name: string;
  readonly arguments: Readonly<Record<string, unknown>>;
}

/** Result of {@link parseToolCallText}: a call, or a message that says what is wrong with the text. */
export type ParsedToolCall = { readonly ok: true; readonly call: ToolCall } | { readonly ok: false; readonly message: string };

/**
 * The canonical text of a call: compact JSON `{"name":…,"arguments":{…}}` (keys in that order).
 * @example toolCallText({ name: 'guess', arguments: { word: 'crane' } }) // '{"name":"guess","arguments":{"word":"crane"}}'
 */
export function toolCallText(call: ToolCall): string {
  return JSON.stringify({ name: call.name, arguments: call.arguments });
}

/**
 * Parses a call's canonical text (also accepts `parameters` for `arguments`, as Llama 3.1 writes
 * it, and surrounding whitespace). A text that is not one JSON object with a string `name` and an
 * object `arguments` gives `{ ok: false }` with a message naming what is missing.
 * @example parseToolCallText('{"name":"guess","arguments":{"word":"crane"}}') // { ok: true, call: { name: 'guess', arguments: { word: 'crane' } } }
 */
export function parseToolCallText(text: string): ParsedToolCall {
  let value: unknown;
  try {
    value = JSON.parse(text.trim());
  } catch (error) {
    return { ok: false, message: `The tool call is not valid JSON (${(error as Error).message}).` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, message: 'The tool call must be a JSON object {"name": ..., "arguments": {...}}.' };
  }
  const record = value as Record<string, unknown>;
  if (typeof record.name !== 'string' || record.name.length === 0) {
    return { ok: false, message: 'The tool call has no "name" string.' };
  }
  const args = record.arguments ?? record.parameters ?? {};
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    return { ok: false, message: `The tool call "${record.name}" has "arguments" that are not a JSON object.` };
  }
  return { ok: true, call: { name: record.name, arguments: args as Record<string, unknown> } };
}

/**
 * True when the text looks like a canonical tool call (a JSON object with a "name"), so an
 * environment's action parser knows to read it as one rather than as free text.
 * @example looksLikeToolCallText('{"name":"guess","arguments":{}}') // true
 */
export function looksLikeToolCallText(text: string): boolean {
  const trimmed = text.trim();
  return trimmed.startsWith('{') && trimmed.endsWith('}') && /"name"\s*:/.test(trimmed);
}
