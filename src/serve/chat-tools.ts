/**
 * Tools in `POST /v1/chat/completions`, in OpenAI's shapes: the request's `tools` go to the chat
 * template as the client sent them (transformers' `apply_chat_template(messages, tools=…)`), past `tool_calls` and `tool`
 * messages are rendered as the template writes them (arguments parsed from their JSON string, as
 * vLLM hands them to templates), and each reply is read in the model family's tool-call format
 * (`src/models/chat/tool-formats.ts`; vLLM's `hermes`, `llama3_json`, `mistral`): calls come back as
 * `tool_calls` with `finish_reason: "tool_calls"`.
 *
 * `tool_choice`: `auto` (the default with tools) reads calls; `none` renders the tools but reads
 * none; `required` and a named function start the reply with the format's call opening (the text
 * the template writes before a call's name, or before its arguments for a named one) and keep the
 * rest of the reply to the grammar of a call (`tool-call-grammar.ts`): a tool's name, arguments its
 * `parameters` schema admits, the template's closing text; several calls where the template
 * writes them and `parallel_tool_calls` is not false. Such a reply is a call unless it ran out of
 * `max_tokens` first.
 */
import { z } from 'zod';
import type { ChatMessage, ChatTemplate, HfTokenizer } from '../models/chat/index.js';
import { type ToolCallShape, toolCallShape } from '../models/chat/tool-call-shape.js';
import { parseToolReply, type ToolCallFormat, type ToolReply } from '../models/chat/tool-formats.js';
import { ApiError } from './openai-errors.js';

/** A function tool in a request. */
export const toolSchema = z
  .object({
    type: z.literal('function'),
    function: z
      .object({
        name: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'letters, digits, "_", "." or "-", at most 64'),
        description: z.string().optional(),
        parameters: z.record(z.string(), z.unknown()).optional(),
        strict: z.boolean().nullish(),
      })
      .strict(),
  })
  .strict();

/** `tool_choice`: a mode, or one named function. */
export const toolChoiceSchema = z.union([
  z.enum(['none', 'auto', 'required']),
  z.object({ type: z.literal('function'), function: z.object({ name: z.string() }).strict() }).strict(),
]);

/** A call in an assistant message of the conversation (arguments as a JSON string). */
export const toolCallSchema = z
  .object({
    id: z.string().min(1),
    type: z.literal('function'),
    function: z.object({ name: z.string().min(1), arguments: z.string() }).strict(),
  })
  .strict();

export type RequestTool = z.output<typeof toolSchema>;
export type RequestToolChoice = z.output<typeof toolChoiceSchema>;

/**
 * Checks `tool_choice` against `tools` (OpenAI refuses a choice without tools, and a named function
 * that is not among them).
 * @example checkToolChoice(req.tools, req.tool_choice) // 'auto' when tools are given and no choice
 */
export function checkToolChoice(tools: readonly RequestTool[] | null | undefined, choice: RequestToolChoice | null | undefined): RequestToolChoice {
  if (tools === null || tools === undefined || tools.length === 0) {
    if (choice !== null && choice !== undefined && choice !== 'none') {
      throw ApiError.invalid('tool_choice', "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.", 'invalid_value');
    }
    return 'none';
  }
  if (choice === null || choice === undefined) return 'auto';
  if (typeof choice === 'object' && !tools.some((t) => t.function.name === choice.function.name)) {
    throw ApiError.invalid('tool_choice', `Invalid value for 'tool_choice': the function '${choice.function.name}' is not among the tools.`, 'invalid_value');
  }
  return choice;
}

/** A request message as far as tools go (the chat request's message shape). */
export interface ToolAwareMessage {
  readonly role: string;
  readonly tool_calls?: readonly z.output<typeof toolCallSchema>[] | null;
  readonly tool_call_id?: string | null;
}

/**
 * The tool fields of message `index` for the template: `tool_calls` with their arguments parsed
 * (an argument string that is not a JSON object is refused, naming it), `tool_call_id`.
 * @example templateToolFields({ role: 'tool', tool_call_id: 'call_1' }, 3) // { tool_call_id: 'call_1' }
 */
export function templateToolFields(message: ToolAwareMessage, index: number): Partial<ChatMessage> {
  const out: Record<string, unknown> = {};
  if (message.tool_calls !== null && message.tool_calls !== undefined && message.tool_calls.length > 0) {
    out.tool_calls = message.tool_calls.map((call, j) => {
      let args: unknown;
      try {
        args = JSON.parse(call.function.arguments);
      } catch {
        args = undefined;
      }
      if (typeof args !== 'object' || args === null || Array.isArray(args)) {
        throw ApiError.invalid(`messages[${index}].tool_calls[${j}].function.arguments`, `Invalid value for 'messages[${index}].tool_calls[${j}].function.arguments': expected a JSON object in a string.`, 'invalid_value');
      }
      return { id: call.id, type: 'function', function: { name: call.function.name, arguments: args } };
    });
  }
  if (message.tool_call_id !== null && message.tool_call_id !== undefined) out.tool_call_id = message.tool_call_id;
  return out as Partial<ChatMessage>;
}

/** Reads a model's tool calls, and the text that starts a call. */
export interface ToolCallReader {
  readonly format: ToolCallFormat;
  /** How the template writes a call (for the grammar of forced calls). */
  readonly shape: ToolCallShape;
  /** What a reply's text (special tokens kept) holds. */
  read(text: string): ToolReply;
  /** The text a reply starts with to call some tool (`name` absent) or `name` (up to its arguments). */
  opener(name?: string): string;
}

/**
 * The tool-call reader of a template, or why there is none (a template that ignores tools, or
 * writes calls in a format turnwise cannot read).
 * @example const reader = toolCallReader(files.template, files.tokenizer, files.stopTokenIds);
 */
export function toolCallReader(template: ChatTemplate, tokenizer: HfTokenizer, stopTokenIds: readonly number[]): ToolCallReader | string {
  const shape = toolCallShape(template, tokenizer, stopTokenIds);
  if (typeof shape === 'string') return shape;
  return {
    format: shape.format,
    shape,
    read: (reply) => parseToolReply(shape.format, reply),
    opener: (name) => (name === undefined ? shape.before : `${shape.before}${name}${shape.between}`),
  };
}

/**
 * What of `opener` still has to follow `prompt` (both as text): a template that already ends its
 * generation prompt with the opener's start (Qwen3 with `enable_thinking: false` writes the empty
 * `<think>\n\n</think>\n\n` a call opens with) must not get it twice.
 * @example openerAfter('<|im_start|>assistant\n<think>\n\n</think>\n\n', '<think>\n\n</think>\n\n<tool_call>\n') // '<tool_call>\n'
 */
export function openerAfter(prompt: string, opener: string): string {
  for (let k = Math.min(prompt.length, opener.length); k > 0; k--) {
    if (prompt.endsWith(opener.slice(0, k))) return opener.slice(k);
  }
  return opener;
}
