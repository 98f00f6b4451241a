/**
 * The legacy `/v1/completions` request, as OpenAI defines it and vLLM and lm-evaluation-harness's
 * `local-completions` model send it: `prompt` as text, a list of texts, token ids or a list of
 * token-id lists; `max_tokens` (default 16; 0 with `echo` scores the prompt only); `echo`;
 * `logprobs` (an integer: alternatives per position); and the shared sampling fields.
 */
import { z } from 'zod';
import { ApiError } from './openai-errors.js';
import { MAX_TOP_LOGPROBS, samplingFields } from './sampling-params.js';
import { integer, parseBody } from './validation.js';

const tokenIds = z.array(integer().min(0)).min(1);

/** The request body we accept (unknown keys are rejected). */
export const completionRequestSchema = z
  .object({
    model: z.string().min(1).nullish(), // the served model when left out (as vLLM)
    prompt: z.union([z.string(), z.array(z.string()).min(1), tokenIds, z.array(tokenIds).min(1)], {
      error: 'a string, an array of strings, an array of token ids or an array of token-id arrays',
    }),
    ...samplingFields,
    max_tokens: integer().min(0).nullish(),
    echo: z.boolean().nullish(),
    logprobs: integer().min(0).max(MAX_TOP_LOGPROBS).nullish(),
    // Accepted only when they change nothing.
    suffix: z.null().optional(),
    best_of: z.literal(1).nullish(),
  })
  .strict();

export type CompletionRequest = z.output<typeof completionRequestSchema>;

/** One prompt of a request: its text, or its ids. */
export type PromptInput = { readonly text: string } | { readonly ids: readonly number[] };

/** OpenAI's default `max_tokens` for completions. */
export const DEFAULT_COMPLETION_TOKENS = 16;

/**
 * Parses a request body, throwing an {@link ApiError} naming the parameter at fault; `maxPrompts`
 * caps the prompts of one request.
 * @example parseCompletionRequest({ model: 'm', prompt: 'Once' }, 64).prompt // 'Once'
 */
export function parseCompletionRequest(body: unknown, maxPrompts: number): CompletionRequest {
  const raw = typeof body === 'object' && body !== null ? (body as { prompt?: unknown }).prompt : undefined;
  if (Array.isArray(raw) && raw.length > maxPrompts && (typeof raw[0] === 'string' || Array.isArray(raw[0]))) {
    throw ApiError.invalid('prompt', `Invalid value for 'prompt': expected at most ${maxPrompts} prompts per request, but got ${raw.length}.`, 'invalid_value');
  }
  const req = parseBody(completionRequestSchema, body);
  if (req.max_tokens === 0 && req.echo !== true) {
    throw ApiError.invalid('max_tokens', "Invalid value for 'max_tokens': 0 generates nothing; it is allowed only with echo: true (to score the prompt).", 'invalid_value');
  }
  return req;
}

/**
 * The prompts of a request, one entry each.
 * @example promptInputs('hi') // [{ text: 'hi' }]
 */
export function promptInputs(prompt: CompletionRequest['prompt']): PromptInput[] {
  if (typeof prompt === 'string') return [{ text: prompt }];
  if (prompt.length > 0 && typeof prompt[0] === 'number') return [{ ids: prompt as number[] }];
  return (prompt as (string | number[])[]).map((p) => (typeof p === 'string' ? { text: p } : { ids: p }));
}
