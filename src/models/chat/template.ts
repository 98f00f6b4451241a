/**
 * `ChatTemplate`: a model's Jinja chat template rendered with `@huggingface/jinja` the way
 * transformers' `apply_chat_template` renders it: parsed as Jinja2 lexes it (`template-source.ts`)
 * and interpreted with Jinja2's Python semantics (`python-interpreter.ts`: `str()` output, Python
 * filters, tests, methods, equality and scoping).
 *
 * Variables passed, as transformers does: `messages`, `add_generation_prompt`, `tools` (OpenAI's
 * `{type: 'function', function: {name, description, parameters}}` list, or none) and `documents` (none), the named special tokens as strings (`bos_token`, `eos_token`, `unk_token`,
 * `sep_token`, `pad_token`, `cls_token`, `mask_token`, those the tokenizer has), then any extra
 * keyword arguments (`enable_thinking`, `date_string`, …), which override the special tokens. Globals:
 * `raise_exception(message)` (throws {@link ChatTemplateError}) and `strftime_now(format)` (from an
 * injected clock). Blocks are trimmed as transformers' environment does (`trim_blocks`,
 * `lstrip_blocks`: @huggingface/jinja applies both).
 */
import { Environment } from '@huggingface/jinja';
import type { ToolSpec } from '../../core/tools.js';
import { BoundedInterpreter, boundedRange, DEFAULT_RENDER_BUDGET, type RenderBudget, RenderBudgetExceeded } from './bounded-render.js';
import { ChatTemplateBudgetError, ChatTemplateError } from './errors.js';
import { PYTHON_GLOBALS } from './python-globals.js';
import { strftime } from './strftime.js';
import { type Node, parseTemplate } from './template-source.js';

/** One chat message; extra fields (`reasoning_content`, …) reach the template as they are. */
export interface ChatMessage {
  readonly role: string;
  readonly content: string;
  readonly [field: string]: unknown;
}

/** The special-token names transformers passes to templates (`special_tokens_map`). */
export const TEMPLATE_SPECIAL_TOKENS = ['bos_token', 'eos_token', 'unk_token', 'sep_token', 'pad_token', 'cls_token', 'mask_token'] as const;
export type TemplateSpecialToken = (typeof TEMPLATE_SPECIAL_TOKENS)[number];

/** How a template is built. */
export interface ChatTemplateOptions {
  /** Special-token strings (absent or null: not passed, as transformers omits unset tokens). */
  readonly specialTokens?: Partial<Record<TemplateSpecialToken, string | null>>;
  /** Where the template came from, for error messages (`<file>:<field>`). */
  readonly origin?: string;
  /** The clock behind `strftime_now`. Default: the system clock. */
  readonly now?: () => Date;
  /** Limits of each render (a template from a model folder is untrusted code). Default {@link DEFAULT_RENDER_BUDGET}. */
  readonly budget?: RenderBudget;
}

/** A tool as transformers passes it to a template (OpenAI's function-tool shape). */
export interface TemplateTool {
  readonly type: 'function';
  readonly function: ToolSpec;
}

/**
 * Tools in the shape templates read them (an empty description is left out, as a client that sends
 * none has it rendered).
 * @example templateTools([{ name: 'guess', description: 'Guess a word.', parameters }]) // [{ type: 'function', function: { name: 'guess', … } }]
 */
export function templateTools(tools: readonly ToolSpec[]): TemplateTool[] {
  return tools.map((tool) => ({
    type: 'function',
    function: (tool.description === '' ? { name: tool.name, parameters: tool.parameters } : { name: tool.name, description: tool.description, parameters: tool.parameters }) as ToolSpec,
  }));
}

/** One render. */
export interface RenderOptions {
  /** The tools the model may call (transformers' `tools=`); absent or null: none. */
  readonly tools?: readonly TemplateTool[] | null;
  /** Append the assistant header the model generates after. Default false. */
  readonly addGenerationPrompt?: boolean;
  /** Extra template variables (transformers' `**kwargs`), e.g. `{ enable_thinking: false }`. */
  readonly kwargs?: Readonly<Record<string, unknown>>;
}

/**
 * A compiled chat template.
 * @example
 * const template = new ChatTemplate(source, { specialTokens: { eos_token: '<|im_end|>' } });
 * template.render([{ role: 'user', content: 'hi' }], { addGenerationPrompt: true });
 * // '<|im_start|>system\n…<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n'
 */
export class ChatTemplate {
  /** The template text. */
  readonly source: string;
  /** Where it came from (error messages). */
  readonly origin: string;
  /** Special-token strings passed to every render. */
  readonly specialTokens: Readonly<Partial<Record<TemplateSpecialToken, string>>>;
  private readonly parsed: Node;
  private readonly now: () => Date;
  private readonly budget: RenderBudget;

  constructor(source: string, options: ChatTemplateOptions = {}) {
    this.source = source;
    this.origin = options.origin ?? 'chat_template';
    this.now = options.now ?? (() => new Date());
    this.budget = options.budget ?? DEFAULT_RENDER_BUDGET;
    const tokens: Partial<Record<TemplateSpecialToken, string>> = {};
    for (const name of TEMPLATE_SPECIAL_TOKENS) {
      const value = options.specialTokens?.[name];
      if (typeof value === 'string') tokens[name] = value;
    }
    this.specialTokens = tokens;
    try {
      this.parsed = parseTemplate(source);
    } catch (cause) {
      throw new ChatTemplateError(this.origin, `cannot parse: ${(cause as Error).message}`, { cause });
    }
  }

  /**
   * Renders `messages` to text (what transformers' `apply_chat_template(..., tokenize=False)` returns).
   * Throws {@link ChatTemplateError} with the template's own message when it raises.
   * @example template.render(messages, { addGenerationPrompt: true, kwargs: { enable_thinking: false } })
   */
  render(messages: readonly ChatMessage[], options: RenderOptions = {}): string {
    const env = new Environment();
    // The globals Template.render would set, with raise_exception and strftime_now of our own
    // (Template.render does not let a caller replace them).
    for (const [name, value] of Object.entries({ false: false, true: true, none: null, False: false, True: true, None: null })) env.set(name, value);
    env.set('range', boundedRange(this.budget.maxItems));
    const scope = env as unknown as { setVariable(name: string, value: unknown): void };
    for (const [name, value] of Object.entries(PYTHON_GLOBALS)) scope.setVariable(name, value);
    env.set('raise_exception', (message: unknown) => {
      throw new ChatTemplateError(this.origin, `raised: ${String(message)}`);
    });
    env.set('strftime_now', (format: unknown) => strftime(this.now(), String(format)));
    const variables: Record<string, unknown> = {
      messages: messages.map((m) => ({ ...m })),
      add_generation_prompt: options.addGenerationPrompt ?? false,
      tools: options.tools ?? null,
      documents: null,
      ...this.specialTokens,
      ...options.kwargs,
    };
    for (const [name, value] of Object.entries(variables)) {
      if (value !== undefined) env.set(name, value);
    }
    try {
      return new BoundedInterpreter(env, this.budget).run(this.parsed).value as string;
    } catch (error) {
      if (error instanceof ChatTemplateError) throw error;
      if (error instanceof RenderBudgetExceeded) throw new ChatTemplateBudgetError(this.origin, error.detail, { cause: error });
      throw new ChatTemplateError(this.origin, `failed to render: ${(error as Error).message}`, { cause: error });
    }
  }
}
