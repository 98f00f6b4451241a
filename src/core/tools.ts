/**
 * Tools: an action as a function declaration, a call of it, and the one canonical text form of a
 * call. In core because both the environments (which declare tools and read calls) and the policies
 * (which pass tools to a model and read its calls) use them; `src/envs/tools.ts` is the
 * environments' face of it.
 *
 * A model that calls tools writes them in its family's own format (Qwen/Hermes `<tool_call>`,
 * Llama 3.1 JSON, Mistral `[TOOL_CALLS]`); the chat layer parses that and hands the environment
 * {@link toolCallText} of the call, so a call reaches every environment through the unchanged
 * `step(actionText)` — over worker threads, NATS and AgentGym HTTP alike. Pure.
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

const typeOf = (value: unknown): string => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);

/** Whether a value matches a declared JSON-schema type (`integer`: a whole number). */
function matchesType(value: unknown, type: JsonSchemaProperty['type']): boolean {
  if (type === undefined) return true;
  if (type === 'integer') return typeof value === 'number' && Number.isInteger(value);
  return typeOf(value) === type;
}

/**
 * Checks a call against the declared tools: a known name, every required argument present, each
 * argument of its declared type and among its `enum` when it has one. Arguments the schema does not
 * declare are allowed (JSON schema's default). Returns null when the call is valid, else a message
 * naming the tool and argument at fault (an environment's observation for an invalid call).
 * @example checkToolCall({ name: 'guess', arguments: {} }, tools) // 'The tool "guess" needs the argument "word".'
 */
export function checkToolCall(call: ToolCall, tools: readonly ToolSpec[]): string | null {
  const tool = tools.find((t) => t.name === call.name);
  if (tool === undefined) {
    return `There is no tool "${call.name}"; the tools are ${tools.map((t) => `"${t.name}"`).join(', ')}.`;
  }
  for (const name of tool.parameters.required ?? []) {
    if (!(name in call.arguments)) return `The tool "${tool.name}" needs the argument "${name}".`;
  }
  for (const [name, value] of Object.entries(call.arguments)) {
    const schema = tool.parameters.properties[name];
    if (schema === undefined) continue;
    if (!matchesType(value, schema.type)) return `The argument "${name}" of "${tool.name}" must be of type ${schema.type}, got ${typeOf(value)}.`;
    if (schema.enum !== undefined && !schema.enum.includes(value as string | number | boolean)) {
      return `The argument "${name}" of "${tool.name}" must be one of ${schema.enum.map((v) => JSON.stringify(v)).join(', ')}.`;
    }
  }
  return null;
}
