/**
 * The grammar of a forced tool call (`tool_choice: "required"` or a named function): what a reply
 * may hold after the call's opening (`chat-tools.ts` puts `ToolCallReader.opener` in the prompt),
 * in the template's own shape (`ToolCallShape`): for `required`, one of the tools' names, the text
 * between name and arguments, arguments that the tool's `parameters` schema admits, then the end of
 * the call, and, where the template writes several calls a reply and `parallel_tool_calls` is not
 * false, more calls after the template's separator; for a named function, its arguments and the
 * end of one call. Decoding kept to it always ends in a call that parses and whose arguments fit
 * their schema (as far as `json-schema-grammar.ts` enforces schemas), or stops at `max_tokens`.
 */
import { CALL_ID, type ShapeText, type ToolCallShape } from '../models/chat/tool-call-shape.js';
import { END, type GrammarState, literal, union } from '../models/constrain/grammar-state.js';
import { compileSchema, SchemaGrammarError, type SchemaNode } from '../models/constrain/json-schema-grammar.js';
import type { RequestTool } from './chat-tools.js';
import { ApiError } from './openai-errors.js';

/** A forced call: any tool (`required`) or the named one. */
export type ForcedChoice = 'required' | { readonly name: string };

/**
 * The grammar after the opener of a forced call. Throws an `ApiError` naming the tool whose
 * `parameters` is not a schema.
 * @example const start = toolCallGrammar(reader.shape, req.tools, 'required', true);
 */
export function toolCallGrammar(shape: ToolCallShape, tools: readonly RequestTool[], choice: ForcedChoice, parallel: boolean): GrammarState {
  const args = new Map<string, SchemaNode>();
  tools.forEach((tool, i) => {
    if (typeof choice === 'object' && tool.function.name !== choice.name) return;
    try {
      // No `parameters`: any JSON object (as OpenAI reads a function without them).
      args.set(tool.function.name, compileSchema(tool.function.parameters ?? { type: 'object' }));
    } catch (error) {
      if (!(error instanceof SchemaGrammarError)) throw error;
      const field = `tools[${i}].function.parameters${error.path.split('/').join('.')}`;
      throw ApiError.invalid(field, `Invalid value for '${field}': ${error.detail}.`, 'invalid_value');
    }
  });
  if (typeof choice === 'object') return call(args, choice.name, shapeText(shape.tail, END));
  const separator = parallel ? shape.separator : null;
  const calls = (): GrammarState => {
    const next = union([shapeText(shape.tail, END), separator === null ? null : shapeText(separator, lazyCalls)]) as GrammarState;
    return union([...args.keys()].map((name) => literal(name, literal(shape.between, call(args, name, next))))) as GrammarState;
  };
  // The separator leads back to the names: built when a second call starts.
  let built: GrammarState | undefined;
  const lazyCalls: GrammarState = {
    complete: false,
    step: (b) => {
      built ??= calls();
      return built.step(b);
    },
  };
  return calls();
}

/** Arguments of `name`, then `next`. */
function call(args: ReadonlyMap<string, SchemaNode>, name: string, next: GrammarState): GrammarState {
  const schema = args.get(name) as SchemaNode;
  return schema.start(next) ?? literal('{}', next);
}

const ID_BYTE = /[A-Za-z0-9]/;

/** Literal text, each call-id slot nine letters or digits, then `next`. */
function shapeText(text: ShapeText, next: GrammarState): GrammarState {
  return text.reduceRight<GrammarState>((after, piece) => (typeof piece === 'string' ? literal(piece, after) : callId(CALL_ID.idLength, after)), next);
}

function callId(left: number, next: GrammarState): GrammarState {
  return { complete: false, step: (b) => (ID_BYTE.test(String.fromCharCode(b)) ? (left === 1 ? next : callId(left - 1, next)) : null) };
}
