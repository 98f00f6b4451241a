/**
 * Tools, as environments see them: an environment declares its actions as function declarations
 * ({@link ToolSpec}, `Environment.tools()`) and receives a call as its canonical text
 * ({@link toolCallText}) through the unchanged `step(actionText)`. The types and the call text live
 * in `src/core/tools.ts` (policies use them too); this file adds what an environment's action parser
 * needs to read a call.
 */
export type { JsonSchemaObject, JsonSchemaProperty, ParsedToolCall, ToolCall, ToolSpec } from '../core/tools.js';
export { checkToolCall, parseToolCallText, toolCallText } from '../core/tools.js';

/**
 * True when the text looks like a canonical tool call (a JSON object with a "name"), so an
 * environment's action parser knows to read it as one rather than as free text.
 * @example looksLikeToolCallText('{"name":"guess","arguments":{}}') // true
 */
export function looksLikeToolCallText(text: string): boolean {
  const trimmed = text.trim();
  return trimmed.startsWith('{') && trimmed.endsWith('}') && /"name"\s*:/.test(trimmed);
}
