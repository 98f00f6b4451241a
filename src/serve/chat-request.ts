/**
 * Validates an OpenAI chat-completions request. A chat model renders the messages with its own
 * chat template (chat-prompts.ts); turnwise's own model has no template, only its compact episode
 * layout, so its messages are mapped onto a turnwise episode:
 *
 *     [system/developer…]           → the instruction (when present)
 *     user, assistant               → AgentGym's opening exchange (instruction, acknowledgement),
 *                                     when there is no system message and ≥ 3 messages
 *     (user, assistant)*            → past turns: observation, action text
 *     user                          → the current observation (must be last)
 *
 * A single user message is the first observation; the instruction is then the environment's own.
 * Past action texts are re-encoded (`encode(text) + <|end|>`): for constrained decoding this gives
 * back exactly the ids that were sampled, so the context equals the in-process one.
 *
 * The allowed actions for constrained decoding come from vLLM's `guided_choice` extension when the
 * client sends it, else from the environment's own observation format: the last
 * `Available actions: ["a", "b", …]` line of the current observation (BabyAI and AgentGym write
 * it so). Without either, decoding is free.
 */
import { z } from 'zod';
import { toolCallSchema, toolChoiceSchema, toolSchema } from './chat-tools.js';
import { ApiError } from './openai-errors.js';
import { guidedJsonSchema, responseFormatSchema } from './response-format.js';
import { MAX_TOP_LOGPROBS, samplingFields } from './sampling-params.js';
import { integer, parseBody } from './validation.js';

const textPart = z.object({ type: z.literal('text'), text: z.string() });

const messageSchema = z
  .object({
    role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']),
    // null only for an assistant message that makes tool calls (checked below).
    content: z.union([z.string(), z.array(textPart).min(1)], { error: 'a string or an array of text parts' }).nullable(),
    name: z.string().optional(),
    tool_calls: z.array(toolCallSchema).nullish(),
    tool_call_id: z.string().min(1).nullish(),
  })
  .superRefine((m, ctx) => {
    if (m.content === null && !(m.role === 'assistant' && (m.tool_calls?.length ?? 0) > 0)) {
      ctx.addIssue({ code: 'custom', path: ['content'], message: 'null only in an assistant message with tool_calls' });
    }
    if (m.role === 'tool' && (m.tool_call_id === null || m.tool_call_id === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['tool_call_id'], message: "required in a 'tool' message" });
    }
    if ((m.tool_calls?.length ?? 0) > 0 && m.role !== 'assistant') ctx.addIssue({ code: 'custom', path: ['tool_calls'], message: "only in an 'assistant' message" });
  });

/** The request body we accept (unknown keys are rejected, as OpenAI does). */
export const chatRequestSchema = z
  .object({
    model: z.string().min(1).nullish(), // the served model when left out (as vLLM)
    messages: z.array(messageSchema).min(1),
    ...samplingFields,
    max_tokens: integer().positive().nullish(),
    max_completion_tokens: integer().positive().nullish(),
    logprobs: z.boolean().nullish(),
    top_logprobs: integer().min(0).max(MAX_TOP_LOGPROBS).nullish(),
    // vLLM's extensions: constrained decoding over listed strings; extra chat-template variables.
    guided_choice: z.array(z.string().min(1)).min(1).nullish(),
    guided_json: guidedJsonSchema.nullish(),
    // Structured outputs (response-format.ts): a JSON reply kept to the grammar of its schema.
    response_format: responseFormatSchema.nullish(),
    chat_template_kwargs: z.record(z.string(), z.unknown()).nullish(),
    // No effect on what is generated.
    metadata: z.unknown().optional(),
    store: z.boolean().nullish(),
    service_tier: z.string().nullish(),
    // Function tools (chat-tools.ts): passed to the chat template; calls come back as tool_calls.
    tools: z.array(toolSchema).nullish(),
    tool_choice: toolChoiceSchema.nullish(),
    // false: a forced call (`tool_choice` required or named) is one call, not several.
    parallel_tool_calls: z.boolean().nullish(),
  })
  .strict();

export type ChatRequest = z.output<typeof chatRequestSchema>;

/** Caps on `guided_choice` (each choice becomes token sequences in a trie). */
export interface GuidedChoiceLimits {
  readonly maxEntries: number;
  readonly maxBytes: number;
}

/**
 * Parses a request body, throwing an {@link ApiError} naming the parameter at fault. An oversized
 * `guided_choice` is refused before anything looks at its entries.
 * @example parseChatRequest({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }, { maxEntries: 1024, maxBytes: 65536 }).model // 'm'
 */
export function parseChatRequest(body: unknown, guided: GuidedChoiceLimits): ChatRequest {
  const raw = typeof body === 'object' && body !== null ? (body as { guided_choice?: unknown }).guided_choice : undefined;
  if (Array.isArray(raw) && raw.length > guided.maxEntries) {
    throw ApiError.invalid('guided_choice', `Invalid value for 'guided_choice': expected at most ${guided.maxEntries} items, but got ${raw.length}.`, 'invalid_value');
  }
  const req = parseBody(chatRequestSchema, body);
  if (req.guided_choice) {
    let bytes = 0;
    for (const choice of req.guided_choice) bytes += Buffer.byteLength(choice);
    if (bytes > guided.maxBytes) {
      throw ApiError.invalid('guided_choice', `Invalid value for 'guided_choice': its strings hold ${bytes} bytes (at most ${guided.maxBytes}).`, 'invalid_value');
    }
  }
  if (req.top_logprobs != null && req.logprobs !== true) {
    throw ApiError.invalid('top_logprobs', "Invalid value for 'top_logprobs': logprobs must be true when top_logprobs is set.", 'invalid_value');
  }
  return req;
}

/** A message's text (text parts joined; none for a message that only makes tool calls). */
export const textOf = (content: ChatRequest['messages'][number]['content']): string =>
  content === null ? '' : typeof content === 'string' ? content : content.map((p) => p.text).join('');

/** The episode a conversation stands for. */
export interface EpisodeView {
  /** Null when the conversation does not carry one (use the environment's). */
  readonly instruction: string | null;
  readonly pastTurns: readonly { readonly observationText: string; readonly actionText: string }[];
  readonly observationText: string;
}

/**
 * Maps chat messages onto an episode (layout in the module comment).
 * @example toEpisodeView([{ role: 'user', content: 'Go.' }, { role: 'assistant', content: 'OK.' }, { role: 'user', content: 'A wall.' }])
 * // { instruction: 'Go.', pastTurns: [], observationText: 'A wall.' }
 */
export function toEpisodeView(messages: ChatRequest['messages']): EpisodeView {
  let start = 0;
  const system: string[] = [];
  while (start < messages.length && (messages[start]?.role === 'system' || messages[start]?.role === 'developer')) {
    system.push(textOf((messages[start] as ChatRequest['messages'][number]).content));
    start++;
  }
  const rest = messages.slice(start);
  rest.forEach((m, i) => {
    const expected = i % 2 === 0 ? 'user' : 'assistant';
    if (m.role !== expected) {
      throw ApiError.invalid(`messages[${start + i}].role`, `Expected a '${expected}' message at messages[${start + i}] (after any system messages, user and assistant turns alternate), got '${m.role}'.`);
    }
  });
  if (rest.length === 0 || rest.length % 2 === 0) {
    throw ApiError.invalid('messages', 'The last message must be a user message (the current observation).');
  }
  let instruction: string | null = system.length > 0 ? system.join('\n') : null;
  let turnsFrom = 0;
  if (instruction === null && rest.length >= 3) {
    instruction = textOf((rest[0] as ChatRequest['messages'][number]).content); // AgentGym opening: instruction, acknowledgement
    turnsFrom = 2;
  }
  const pastTurns: { observationText: string; actionText: string }[] = [];
  for (let i = turnsFrom; i + 1 < rest.length; i += 2) {
    pastTurns.push({ observationText: textOf((rest[i] as ChatRequest['messages'][number]).content), actionText: textOf((rest[i + 1] as ChatRequest['messages'][number]).content) });
  }
  return { instruction, pastTurns, observationText: textOf((rest[rest.length - 1] as ChatRequest['messages'][number]).content) };
}

/**
 * The actions listed on the last `Available actions: [...]` line of an observation, or null.
 * @example parseAvailableActions('You see a wall.\nAvailable actions: ["turn left", "move forward"]') // ['turn left', 'move forward']
 */
export function parseAvailableActions(observationText: string): string[] | null {
  const lines = observationText.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const match = /^\s*Available actions:\s*(\[.*\])\s*$/.exec(lines[i] as string);
    if (!match) continue;
    try {
      const list: unknown = JSON.parse(match[1] as string);
      if (Array.isArray(list) && list.length > 0 && list.every((a) => typeof a === 'string' && a.length > 0)) return list as string[];
    } catch {
      // Not JSON (an action with an unescaped quote inside): split the list as BabyAI writes it, `", "`.
      const inner = /^\["(.*)"\]$/.exec((match[1] as string).trim());
      const items = inner ? (inner[1] as string).split('", "') : [];
      if (items.length > 0 && items.every((a) => a.length > 0)) return items;
    }
    return null;
  }
  return null;
}
