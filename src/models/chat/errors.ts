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
 * The chat template went over its render budget (steps, size or time: `./bounded-render.ts`): the
 * template, not the conversation, is at fault, so loading the model fails on it.
 * @example throw new ChatTemplateBudgetError('m/chat_template.jinja', 'range() of 1,000,000,000 items (limit 100,000)');
 */
export class ChatTemplateBudgetError extends ChatTemplateError {
  constructor(origin: string, budgetDetail: string, options?: { cause?: unknown }) {
    super(origin, `refused: the render went over its budget (${budgetDetail}); a chat template this costly is not a chat template`, options);
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
