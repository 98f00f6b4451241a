/**
 * How each model family writes tool calls in its replies, and reading them back (the parsers vLLM
 * names `hermes`, `llama3_json` and `mistral`):
 *
 * - `hermes` (Qwen2.5, Qwen3, Hermes, …): optional text, then one `<tool_call>\n{"name": …,
 *   "arguments": {…}}\n</tool_call>` block per call;
 * - `llama3_json` (Llama 3.1+): the whole reply is `{"name": …, "parameters": {…}}`, optionally after
 *   `<|python_tag|>`, several calls separated by `;`;
 * - `mistral`: optional text, then `[TOOL_CALLS]` and a JSON list of `{"name", "arguments", "id"}`
 *   (v0.3), or `[TOOL_CALLS]name[ARGS]{…}` per call (newer tokenizers).
 *
 * A reply is read as text when it holds no call marker, as calls when every call parses, and as
 * malformed (with a message naming what is wrong, shown to the agent) otherwise. Pure.
 */
import { type ToolCall, toolCallOf } from '../../core/tools.js';

/** The tool-call formats turnwise reads (vLLM's parser names). */
export const TOOL_CALL_FORMATS = ['hermes', 'llama3_json', 'mistral'] as const;
export type ToolCallFormat = (typeof TOOL_CALL_FORMATS)[number];

/** A call read from a reply; `id` when the reply carried one (Mistral). */
export interface ReplyToolCall extends ToolCall {
  readonly id?: string;
}

/** What a reply holds. `content`: its text outside the calls (trimmed). */
export type ToolReply =
  | { readonly kind: 'text'; readonly content: string }
  | { readonly kind: 'calls'; readonly content: string; readonly calls: readonly ReplyToolCall[] }
  | { readonly kind: 'malformed'; readonly content: string; readonly error: string };

const HERMES_OPEN = '<tool_call>';
const HERMES_BLOCK = /<tool_call>([\s\S]*?)(?:<\/tool_call>|$)/g;
const PYTHON_TAG = '<|python_tag|>';
const MISTRAL_MARK = '[TOOL_CALLS]';
const MISTRAL_NAMED = /^\s*([A-Za-z0-9_.-]+)(?:\[CALL_ID\]([A-Za-z0-9]+))?\[ARGS\]([\s\S]*)$/;

/**
 * Reads the tool calls of a reply's text (special tokens kept, the end-of-turn token removed).
 * @example parseToolReply('hermes', '<tool_call>\n{"name": "guess", "arguments": {"word": "crane"}}\n</tool_call>')
 * // { kind: 'calls', content: '', calls: [{ name: 'guess', arguments: { word: 'crane' } }] }
 */
export function parseToolReply(format: ToolCallFormat, text: string): ToolReply {
  switch (format) {
    case 'hermes':
      return parseHermes(text);
    case 'llama3_json':
      return parseLlama3Json(text);
    case 'mistral':
      return parseMistral(text);
  }
}

function parseHermes(text: string): ToolReply {
  const open = text.indexOf(HERMES_OPEN);
  if (open < 0) return { kind: 'text', content: text.trim() };
  const content = text.slice(0, open).trim();
  const calls: ReplyToolCall[] = [];
  const blocks = [...text.slice(open).matchAll(HERMES_BLOCK)];
  for (const [i, block] of blocks.entries()) {
    const parsed = readJsonCall(block[1] ?? '', blocks.length > 1 ? i + 1 : 0);
    if (!parsed.ok) return { kind: 'malformed', content, error: parsed.message };
    calls.push(parsed.call);
  }
  return { kind: 'calls', content, calls };
}

function parseLlama3Json(text: string): ToolReply {
  const body = text.trim().startsWith(PYTHON_TAG) ? text.trim().slice(PYTHON_TAG.length) : text;
  const trimmed = body.trim();
  if (!trimmed.startsWith('{')) return { kind: 'text', content: text.trim() };
  const whole = readJsonCall(trimmed, 0);
  if (whole.ok) return { kind: 'calls', content: '', calls: [whole.call] };
  // Several calls: `{…}; {…}` (vLLM's llama3_json reads them the same way).
  const parts = trimmed.split(/;\s*(?=\{)/);
  if (parts.length < 2) return { kind: 'malformed', content: '', error: whole.message };
  const calls: ReplyToolCall[] = [];
  for (const [i, part] of parts.entries()) {
    const parsed = readJsonCall(part, i + 1);
    if (!parsed.ok) return { kind: 'malformed', content: '', error: parsed.message };
    calls.push(parsed.call);
  }
  return { kind: 'calls', content: '', calls };
}

function parseMistral(text: string): ToolReply {
  const mark = text.indexOf(MISTRAL_MARK);
  if (mark < 0) return { kind: 'text', content: text.trim() };
  const content = text.slice(0, mark).trim();
  const rest = text.slice(mark + MISTRAL_MARK.length).trim();
  if (rest.startsWith('[') || rest.startsWith('{')) {
    let value: unknown;
    try {
      value = JSON.parse(rest);
    } catch (error) {
      return { kind: 'malformed', content, error: `The tool calls after [TOOL_CALLS] are not valid JSON (${(error as Error).message}).` };
    }
    const items = Array.isArray(value) ? value : [value];
    if (items.length === 0) return { kind: 'malformed', content, error: 'The list after [TOOL_CALLS] holds no call.' };
    const calls: ReplyToolCall[] = [];
    for (const [i, item] of items.entries()) {
      const parsed = withId(toolCallOf(item), item, items.length > 1 ? i + 1 : 0);
      if (!parsed.ok) return { kind: 'malformed', content, error: parsed.message };
      calls.push(parsed.call);
    }
    return { kind: 'calls', content, calls };
  }
  // Newer tokenizers: `name[ARGS]{…}`, one per [TOOL_CALLS].
  const calls: ReplyToolCall[] = [];
  const pieces = rest.split(MISTRAL_MARK);
  for (const [i, piece] of pieces.entries()) {
    const match = MISTRAL_NAMED.exec(piece);
    const label = pieces.length > 1 ? `Tool call ${i + 1}: ` : '';
    if (match === null) return { kind: 'malformed', content, error: `${label}expected a JSON list or name[ARGS]{...} after [TOOL_CALLS].` };
    let args: unknown;
    try {
      args = JSON.parse(match[3]?.trim() || '{}');
    } catch (error) {
      return { kind: 'malformed', content, error: `${label}the arguments of "${match[1]}" are not valid JSON (${(error as Error).message}).` };
    }
    const parsed = toolCallOf({ name: match[1], arguments: args });
    if (!parsed.ok) return { kind: 'malformed', content, error: `${label}${parsed.message}` };
    calls.push(match[2] === undefined ? parsed.call : { ...parsed.call, id: match[2] });
  }
  return { kind: 'calls', content, calls };
}

type ReadCall = { readonly ok: true; readonly call: ReplyToolCall } | { readonly ok: false; readonly message: string };

/** One call from its JSON text; `index` > 0 numbers it in the message when a reply has several. */
function readJsonCall(json: string, index: number): ReadCall {
  let value: unknown;
  try {
    value = JSON.parse(json.trim());
  } catch (error) {
    return { ok: false, message: `${index > 0 ? `Tool call ${index}: t` : 'T'}he tool call is not valid JSON (${(error as Error).message}).` };
  }
  return withId(toolCallOf(value), value, index);
}

function withId(parsed: ReturnType<typeof toolCallOf>, value: unknown, index: number): ReadCall {
  if (!parsed.ok) return { ok: false, message: index > 0 ? `Tool call ${index}: ${parsed.message}` : parsed.message };
  const id = (value as Record<string, unknown>).id;
  return { ok: true, call: typeof id === 'string' && id.length > 0 ? { ...parsed.call, id } : parsed.call };
}
