/**
 * The two ways chat messages become a prompt:
 * - a chat model's own template, rendered as transformers' `apply_chat_template(messages,
 *   add_generation_prompt=True)` and tokenized as transformers tokenizes a rendered template
 *   (special-token strings recognised, nothing added): what vLLM's chat endpoint does. The system
 *   message is the template's to place; `developer` is read as `system` (templates know only that);
 * - turnwise's own model, which has no template but the compact episode layout it was trained on:
 *   the messages are mapped onto an episode (`toEpisodeView`) and built as its rollouts build them.
 */
import { ChatContextBuilder, ChatTemplateBudgetError, ChatTemplateError, type ChatMessage, type ChatTemplate, type HfTokenizer } from '../models/chat/index.js';
import type { PolicyText } from '../models/policy-text.js';
import { InvalidArgumentError } from '../core/errors.js';
import { type ChatRequest, parseAvailableActions, textOf, toEpisodeView } from './chat-request.js';
import type { ChatPrompts } from './served-model.js';
import { ApiError } from './openai-errors.js';

/** The last user message's `Available actions: [...]` list, or null. */
function listedActions(messages: ChatRequest['messages']): string[] | null {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as ChatRequest['messages'][number];
    if (m.role === 'user') return parseAvailableActions(textOf(m.content));
  }
  return null;
}

/** Options of {@link templatePrompts}. */
export interface TemplatePromptOptions {
  /** Constrain decoding to the last user message's `Available actions: [...]` (a run trained so). */
  readonly constrainToListedActions: boolean;
  /** The builder behind constrained choices (its end-of-turn id is the policy's end id), or the reason there is none. */
  readonly builder: ChatContextBuilder | string;
}

/**
 * Prompts from a chat template.
 * @example const prompts = templatePrompts(files.template, files.tokenizer, { constrainToListedActions: false, builder });
 */
export function templatePrompts(template: ChatTemplate, tokenizer: HfTokenizer, options: TemplatePromptOptions): ChatPrompts {
  return {
    kind: 'template',
    prompt(messages, templateKwargs) {
      const rendered: ChatMessage[] = messages.map((m) => ({ role: m.role === 'developer' ? 'system' : m.role, content: textOf(m.content), ...(m.name !== undefined ? { name: m.name } : {}) }));
      let text: string;
      try {
        text = template.render(rendered, { addGenerationPrompt: true, ...(templateKwargs ? { kwargs: templateKwargs } : {}) });
      } catch (error) {
        if (error instanceof ChatTemplateError) throw ApiError.invalid('messages', `The model's chat template cannot render these messages: ${error.message}`, 'invalid_value');
        throw error;
      }
      const ids = tokenizer.encode(text);
      // A client's messages that render to nothing leave nothing to complete: their fault, not the server's.
      if (ids.length === 0) throw ApiError.invalid('messages', "The model's chat template renders these messages as empty text: there is no prompt to complete.", 'invalid_value');
      return { ids, actions: options.constrainToListedActions ? listedActions(messages) : null };
    },
    actionChoices(actions) {
      if (typeof options.builder === 'string') throw ApiError.invalid('guided_choice', `guided_choice is not available for this model: ${options.builder}`, 'invalid_value');
      try {
        return options.builder.actionChoices(actions);
      } catch (error) {
        if (error instanceof ChatTemplateError) throw ApiError.invalid('guided_choice', `guided_choice cannot be encoded with this chat template: ${error.message}`, 'invalid_value');
        throw error;
      }
    },
  };
}

/**
 * The builder of a template's constrained choices, or why it cannot be made (a template that
 * cannot be extended turn by turn, or no stop id among what ends an assistant message).
 * @example const builder = choiceBuilder(files.template, files.tokenizer, files.stopTokenIds);
 */
export function choiceBuilder(template: ChatTemplate, tokenizer: HfTokenizer, stopTokenIds: readonly number[]): ChatContextBuilder | string {
  try {
    return ChatContextBuilder.create(template, tokenizer, { stopTokenIds });
  } catch (error) {
    // A template over its render budget is refused at load, not served without guided_choice.
    if (error instanceof ChatTemplateBudgetError) throw error;
    if (error instanceof ChatTemplateError || error instanceof InvalidArgumentError) return error.message;
    throw error;
  }
}

/**
 * Prompts in turnwise's own episode layout (module comment); `constrained`: decode over the
 * listed actions as the run did.
 * @example const prompts = episodePrompts(stack.text, 'Reach the goal.', config.sampling.constrained, config.model.maxContext);
 */
export function episodePrompts(text: PolicyText, envInstruction: string, constrained: boolean, maxContext: number): ChatPrompts {
  return {
    kind: 'episode',
    prompt(messages) {
      const view = toEpisodeView(messages);
      let ids: Int32Array;
      try {
        ids = text.context({
          instruction: view.instruction ?? envInstruction,
          pastTurns: view.pastTurns.map((t) => ({ observationText: t.observationText, actionTokens: text.actionChoices([t.actionText])[0] as Int32Array })),
          observationText: view.observationText,
        });
      } catch (error) {
        // The layout drops old turns until a reply fits; it throws only when the instruction and observation alone cannot.
        if (error instanceof InvalidArgumentError) {
          throw ApiError.invalid('messages', `This model's maximum context length is ${maxContext} tokens. However, the instruction and the last observation alone do not fit in it with room for a reply. Please reduce the length of the messages.`, 'context_length_exceeded');
        }
        throw error;
      }
      return { ids, actions: constrained ? parseAvailableActions(view.observationText) : null };
    },
    actionChoices: (actions) => text.actionChoices(actions),
  };
}
