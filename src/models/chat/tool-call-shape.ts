/**
 * How a chat template writes tool calls, read off the template itself: a probe call (and, where
 * the template takes them, two calls in one reply) is rendered as an assistant message and cut
 * around the probe's name and arguments. What comes out is the literal text around the parts a
 * model writes: before a call's name, between its name and its arguments, after the arguments (to
 * the end of the reply, or to the next call's name). Call ids the template writes (Mistral's
 * nine-character ids) are marked as {@link CALL_ID} slots.
 *
 * Serve uses it to open a forced call and to keep the rest of the call to this shape
 * (`src/serve/tool-call-grammar.ts`).
 */
import type { HfTokenizer } from '../tokenizer/index.js';
import { ChatTemplateBudgetError, ChatTemplateError } from './errors.js';
import type { ChatTemplate } from './template.js';
import { ToolChatBuilder } from './tool-chat.js';
import type { ToolCallFormat } from './tool-formats.js';

/** A call id the model writes itself: nine letters or digits (as vLLM's Mistral ids). */
export const CALL_ID = { idLength: 9 } as const;

/** Literal text, with slots where the model writes a call id. */
export type ShapeText = readonly (string | typeof CALL_ID)[];

/** The template's tool-call text around the names and arguments a model writes. */
export interface ToolCallShape {
  readonly format: ToolCallFormat;
  /** Before the first call's name (e.g. `<tool_call>\n{"name": "`). */
  readonly before: string;
  /** Between a call's name and its arguments (e.g. `", "arguments": `). */
  readonly between: string;
  /** After the last call's arguments, up to the end-of-turn id (e.g. `}\n</tool_call>`). */
  readonly tail: ShapeText;
  /** After a call's arguments, up to the next call's name; null when the template takes one call a reply. */
  readonly separator: ShapeText | null;
}

const PROBE = { name: 'probe_function', other: 'other_function', argument: 'probe_argument', ids: ['probe0000', 'probe0001'] } as const;

/**
 * The shape of `template`'s calls, or why there is none (a template that ignores tools, or writes
 * calls in a format turnwise cannot read).
 * @example const shape = toolCallShape(files.template, files.tokenizer, files.stopTokenIds);
 */
export function toolCallShape(template: ChatTemplate, tokenizer: HfTokenizer, stopTokenIds: readonly number[]): ToolCallShape | string {
  const parameters = { type: 'object' as const, properties: { [PROBE.argument]: { type: 'integer' as const } } };
  let builder: ToolChatBuilder;
  try {
    builder = ToolChatBuilder.create(template, tokenizer, {
      stopTokenIds,
      tools: [
        { name: PROBE.name, description: 'probe', parameters },
        { name: PROBE.other, description: 'probe', parameters },
      ],
    });
  } catch (error) {
    if (error instanceof ChatTemplateError && !(error instanceof ChatTemplateBudgetError)) return error.message;
    throw error;
  }
  const call = (name: string, k: number) => ({ name, arguments: { [PROBE.argument]: k + 1 }, id: PROBE.ids[k] as string });
  const render = (calls: ReturnType<typeof call>[]): string | null => {
    try {
      const ids = builder.encodeToolReply(calls);
      return tokenizer.decode(ids.subarray(0, ids.length - 1), { skipSpecialTokens: false }); // the end-of-turn id is the stop
    } catch (error) {
      if (error instanceof ChatTemplateError && !(error instanceof ChatTemplateBudgetError)) return null; // e.g. Llama 3.1: "only single tool-calls"
      throw error;
    }
  };
  const one = render([call(PROBE.name, 0)]);
  if (one === null) return 'its template does not render a tool call';
  const name = one.indexOf(PROBE.name);
  const args = name < 0 ? -1 : one.indexOf(`"${PROBE.argument}"`, name);
  const open = args < 0 ? -1 : one.lastIndexOf('{', args);
  if (open < 0) return 'its template writes a tool call without its name and arguments as JSON';
  const close = one.indexOf('}', args) + 1;
  const shape = { format: builder.format, before: one.slice(0, name), between: one.slice(name + PROBE.name.length, open), tail: slots(one.slice(close)) };
  const two = render([call(PROBE.name, 0), call(PROBE.other, 1)]);
  const second = two === null ? -1 : two.indexOf(PROBE.other);
  const firstClose = two === null ? -1 : two.indexOf('}', two.indexOf(`"${PROBE.argument}"`)) + 1;
  return { ...shape, separator: two === null || second < 0 || firstClose <= 0 ? null : slots(two.slice(firstClose, second)) };
}

/** `text` with the probe's call ids marked as slots. */
function slots(text: string): ShapeText {
  const out: (string | typeof CALL_ID)[] = [];
  let rest = text;
  for (;;) {
    const at = Math.min(...PROBE.ids.map((id) => rest.indexOf(id)).filter((i) => i >= 0), rest.length);
    if (at > 0) out.push(rest.slice(0, at));
    if (at === rest.length) return out;
    out.push(CALL_ID);
    rest = rest.slice(at + (PROBE.ids[0] as string).length);
  }
}
