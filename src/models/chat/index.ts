/**
 * Chat models' tokenizer side: a model folder's tokenizer and chat template, token-in/token-out
 * multi-turn contexts, and the files a checkpoint needs for transformers.
 * @example
 * import { loadChatModelFiles, ChatContextBuilder } from './models/chat/index.js';
 * const files = await loadChatModelFiles('models/Qwen2.5-0.5B-Instruct');
 * const chat = ChatContextBuilder.create(files.template!, files.tokenizer, { stopTokenIds: files.stopTokenIds });
 * const ids = chat.context({ instruction, pastTurns, observationText });
 */
export type { AppendOnlyReport, AppendOnlyViolation } from './append-only.js';
export { probeAppendOnly } from './append-only.js';
export type { ChatContextInput, ChatContextOptions, ChatPastTurn, ChatTokenizer, ClosedReply } from './context-builder.js';
export { ChatContextBuilder, startsWith } from './context-builder.js';
export { ChatTemplateBudgetError, ChatTemplateError, ModelFilesError } from './errors.js';
export { DEFAULT_RENDER_BUDGET, type RenderBudget } from './bounded-render.js';
export type { GenerationConfigInput, TokenizerConfigInput } from './export.js';
export { generationConfigJson, tokenizerConfigJson } from './export.js';
export type { ChatLayout } from './layout.js';
export { AGENTGYM_ACKNOWLEDGEMENT, episodeMessages, headMessages } from './layout.js';
export type { ChatModelFileContents, ChatModelFiles, ChatModelFilesOptions } from './model-files.js';
export { loadChatModelFiles, parseChatModelFiles, readChatModelFileContents } from './model-files.js';
export type { ChatMessage, ChatTemplateOptions, RenderOptions, TemplateSpecialToken } from './template.js';
export { ChatTemplate, TEMPLATE_SPECIAL_TOKENS } from './template.js';
export { TURNWISE_CHAT_TEMPLATE, TURNWISE_SPECIAL_TOKENS, turnwiseChatFiles } from './turnwise-template.js';
export type { AddedTokenInfo, HfTokenizerOptions } from '../tokenizer/hf-tokenizer.js';
export { HfTokenizer } from '../tokenizer/hf-tokenizer.js';
