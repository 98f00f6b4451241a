/**
 * Reading a tool call sent as an environment action: a `step` text that looks like a call's
 * canonical JSON (`toolCallText`) is parsed, checked against the environment's tools
 * (`checkToolCall`: known name, required arguments, types) and its required string arguments
 * read (non-empty after trimming). Everything else is left to the environment's text parser
 * (AgentGym's `Thought: … Action: …`, tags). Pure; shared by the native environments.
 */
import { checkToolCall, looksLikeToolCallText, parseToolCallText, type ToolSpec } from './tools.js';

/** What an action text holds: no call (free text), a checked call, or the message a malformed call gets. */
export type ToolAction =
  | { readonly kind: 'text' }
  | { readonly kind: 'call'; readonly name: string; readonly args: Readonly<Record<string, string>> }
  | { readonly kind: 'invalid'; readonly message: string };

/**
 * Reads `text` as a call of one of `tools` (required parameters must be non-empty strings after
 * trimming; other parameters are ignored).
 * @example readToolAction('{"name":"guess","arguments":{"word":"crane"}}', [guessTool]) // { kind: 'call', name: 'guess', args: { word: 'crane' } }
 */
export function readToolAction(text: string, tools: readonly ToolSpec[]): ToolAction {
  if (!looksLikeToolCallText(text)) return { kind: 'text' };
  const parsed = parseToolCallText(text);
  if (!parsed.ok) return { kind: 'invalid', message: `Error: ${parsed.message}` };
  const problem = checkToolCall(parsed.call, tools);
  if (problem !== null) return { kind: 'invalid', message: `Error: ${problem}` };
  const tool = tools.find((t) => t.name === parsed.call.name) as ToolSpec;
  const args: Record<string, string> = {};
  for (const key of tool.parameters.required ?? []) {
    const value = parsed.call.arguments[key];
    if (typeof value !== 'string' || value.trim().length === 0) return { kind: 'invalid', message: `Error: The argument "${key}" of "${tool.name}" must not be empty.` };
    args[key] = value.trim();
  }
  return { kind: 'call', name: tool.name, args };
}

/**
 * A tool with string parameters, all required.
 * @example stringTool('guess', 'Guess a word.', { word: 'A five-letter English word.' })
 */
export function stringTool(name: string, description: string, parameters: Readonly<Record<string, string>>): ToolSpec {
  const properties = Object.fromEntries(Object.entries(parameters).map(([key, doc]) => [key, { type: 'string' as const, description: doc }]));
  return { name, description, parameters: { type: 'object', properties, required: Object.keys(parameters) } };
}
