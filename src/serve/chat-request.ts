/**
 * Validates an OpenAI chat-completions request and maps its messages onto a turnwise episode:
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
import { ApiError } from './openai-errors.js';

const textPart = z.object({ type: z.literal('text'), text: z.string() });

const messageSchema = z.object({
  role: z.enum(['system', 'developer', 'user', 'assistant']),
  content: z.union([z.string(), z.array(textPart).min(1)]),
  name: z.string().optional(),
});

/** Parameters OpenAI clients commonly send that do not change what we generate; accepted and ignored. */
const IGNORED = ['user', 'stop', 'presence_penalty', 'frequency_penalty', 'logit_bias', 'metadata', 'store', 'service_tier', 'parallel_tool_calls'] as const;

/** The request body we accept (unknown keys are rejected, as OpenAI does). */
export const chatRequestSchema = z
  .object({
    model: z.string().min(1),
    messages: z.array(messageSchema).min(1),
    temperature: z.number().min(0).max(2).nullish(),
    top_p: z.number().gt(0).max(1).nullish(),
    max_tokens: z.number().int().positive().nullish(),
    max_completion_tokens: z.number().int().positive().nullish(),
    n: z.number().int().positive().nullish(),
    seed: z.number().int().nullish(),
    stream: z.boolean().nullish(),
    stream_options: z.object({ include_usage: z.boolean().optional() }).nullish(),
    logprobs: z.boolean().nullish(),
    guided_choice: z.array(z.string().min(1)).min(1).nullish(),
    ...Object.fromEntries(IGNORED.map((k) => [k, z.unknown().optional()])),
  })
  .strict();

export type ChatRequest = z.output<typeof chatRequestSchema>;

/** `['messages', 2, 'content']` → `messages[2].content`. */
function paramOf(path: readonly PropertyKey[]): string | null {
  let out = '';
  for (const key of path) out += typeof key === 'number' ? `[${key}]` : out === '' ? String(key) : `.${String(key)}`;
  return out === '' ? null : out;
}

/**
 * Parses a request body, throwing an {@link ApiError} naming the parameter at fault.
 * @example parseChatRequest({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }).model // 'm'
 */
export function parseChatRequest(body: unknown): ChatRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw ApiError.invalid(null, 'The request body must be a JSON object.');
  const parsed = chatRequestSchema.safeParse(body);
  if (parsed.success) {
    if ((parsed.data.n ?? 1) !== 1) throw ApiError.invalid('n', `Only n=1 is supported, got ${parsed.data.n}.`, 'invalid_value');
    if (parsed.data.logprobs === true) throw ApiError.invalid('logprobs', 'logprobs are not supported by turnwise serve.', 'invalid_value');
    return parsed.data;
  }
  const issue = parsed.error.issues[0] as z.core.$ZodIssue;
  if (issue.code === 'unrecognized_keys') {
    throw ApiError.invalid(issue.keys[0] ?? null, `Unrecognized request argument supplied: ${issue.keys.join(', ')}`);
  }
  const param = paramOf(issue.path);
  const message = issue.code === 'invalid_type' && issue.input === undefined ? `Missing required parameter: '${param}'.` : `Invalid value for '${param}': ${issue.message}.`;
  throw ApiError.invalid(param, message, issue.code === 'invalid_type' && issue.input === undefined ? 'missing_required_parameter' : 'invalid_value');
}

/** The episode a conversation stands for. */
export interface EpisodeView {
  /** Null when the conversation does not carry one (use the environment's). */
  readonly instruction: string | null;
  readonly pastTurns: readonly { readonly observationText: string; readonly actionText: string }[];
  readonly observationText: string;
}

const textOf = (content: ChatRequest['messages'][number]['content']): string =>
  typeof content === 'string' ? content : content.map((p) => p.text).join('');

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
