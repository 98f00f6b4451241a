/**
 * A server's refusal of a conversation longer than its model's context (OpenAI's and turnwise
 * serve's 400 `context_length_exceeded`, vLLM's 400 "This model's maximum context length is N
 * tokens…"). It is not an outage: the episode has no room left for a reply and ends by length, as
 * a token policy's episode does when its context is full — not as an error that asks whether the
 * server is up.
 */
import OpenAI from 'openai';
import { TurnwiseError } from '../core/errors.js';

/** A conversation the server's model cannot take: the episode ends by length. */
export class ContextLengthExceededError extends TurnwiseError {
  constructor(
    readonly policy: string,
    readonly serverMessage: string,
  ) {
    super(
      `policy '${policy}': the server refused the conversation as longer than its model's context (${serverMessage.replace(/\.+$/, '')}); the episode ends by length. Raise the server's context (vLLM --max-model-len, turnwise serve --max-context) or lower max-tokens`,
    );
    this.name = 'ContextLengthExceededError';
  }
}

/**
 * Whether `error` is a server's context-length refusal.
 * @example isContextLengthError(new OpenAI.BadRequestError(400, { code: 'context_length_exceeded' }, 'too long', new Headers())) // true
 */
export function isContextLengthError(error: unknown): error is InstanceType<typeof OpenAI.APIError> {
  if (!(error instanceof OpenAI.APIError) || error.status !== 400) return false;
  if (error.code === 'context_length_exceeded') return true;
  return /maximum context length|context length|max_model_len|too many tokens/i.test(error.message);
}
