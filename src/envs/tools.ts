/**
 * Tools, as environments see them: an environment declares its actions as function declarations
 * ({@link ToolSpec}, `Environment.tools()`) and receives a call as its canonical text
 * ({@link toolCallText}, compact JSON `{"name":…,"arguments":{…}}`) through the unchanged
 * `step(actionText)`, so calls work over worker threads, NATS and AgentGym HTTP alike. The
 * definitions live in `src/core/tools.ts` because policies use them too (and may not import envs).
 */
export type { JsonSchemaObject, JsonSchemaProperty, ParsedToolCall, ToolCall, ToolSpec } from '../core/tools.js';
export { checkToolCall, parseToolCallText, toolCallOf, toolCallText } from '../core/tools.js';
/** True when the text looks like a canonical tool call (a JSON object naming a call), so an action parser reads it as one. */
export { looksLikeCallJson as looksLikeToolCallText } from '../core/tools.js';
