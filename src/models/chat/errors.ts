/**
 * Errors of the chat side of a model folder: a template that refuses a conversation, or files that
 * are missing or disagree.
 */
import { TurnwiseError } from '../../core/errors.js';

/**
 * The chat template refused the conversation (its `raise_exception`) or failed to render.
 * @example throw new ChatTemplateError('tokenizer_config.json:chat_template', 'roles must alternate');
 */
export class ChatTemplateError extends TurnwiseError {
  constructor(
    readonly origin: string,
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(`chat template '${origin}': ${detail}`, options);
  }
}

/**
 * A file of a model folder is missing, unreadable, or a field in it is wrong or inconsistent with
 * another file. `location` is `<file>:<field>`.
 * @example throw new ModelFilesError('generation_config.json:eos_token_id', 'expected an integer or a list of integers');
 */
export class ModelFilesError extends TurnwiseError {
  constructor(
    readonly location: string,
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(`model files '${location}': ${detail}`, options);
  }
}
