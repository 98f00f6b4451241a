/**
 * How an agent's actions reach the environment (`context.actions`), and what a tool-calling reply
 * becomes:
 *
 * - `listed`: constrained decoding over the environment's available actions;
 * - `text`: free text the environment parses (AgentGym's "Thought: … Action: …");
 * - `tools`: the environment's tools go to the model (its chat template, or the API's `tools`), a
 *   reply must make exactly one valid call, which reaches the environment as its canonical text
 *   (`toolCallText`); anything else is an invalid action whose observation is the error, and the
 *   environment is not stepped.
 *
 * `auto` picks `tools` where the environment declares tools and the policy can pass them (a chat
 * template that takes tools, or a remote chat API), else `listed` or `text` as `sampling.constrained`
 * says. Pure.
 */
import { InvalidConfigError } from '../core/errors.js';
import { checkToolCall, type ToolCall, type ToolSpec, toolCallText } from '../core/tools.js';
import type { StepResult } from '../core/types.js';
import type { ToolText, ToolTextResult } from '../models/policy-text.js';

/** The forms an action can take. */
export const ACTION_MODES = ['listed', 'text', 'tools'] as const;
export type ActionMode = (typeof ACTION_MODES)[number];
/** The config's choice: a mode, or `auto`. */
export type ActionsSetting = ActionMode | 'auto';

/** What a reply held, as far as tools go (a model's parsed reply or a chat API's message). */
export type ToolReplyLike =
  | { readonly kind: 'text'; readonly content: string }
  | { readonly kind: 'calls'; readonly content: string; readonly calls: readonly ToolCall[] }
  | { readonly kind: 'malformed'; readonly content: string; readonly error: string };

/** What a reply becomes: the text sent to the environment (or recorded), and the error when it is invalid. */
export interface ToolAction {
  readonly actionText: string;
  /** Why the reply is no valid call (the agent's next observation), or null. */
  readonly error: string | null;
}

/**
 * The action of a tool-calling reply: exactly one call that matches its declaration, sent as its
 * canonical text; otherwise the error to show (no call, several calls, a malformed or invalid call).
 * @example toolActionOf({ kind: 'calls', content: '', calls: [{ name: 'guess', arguments: { word: 'crane' } }] }, tools)
 * // { actionText: '{"name":"guess","arguments":{"word":"crane"}}', error: null }
 */
export function toolActionOf(reply: ToolReplyLike, tools: readonly ToolSpec[]): ToolAction {
  const names = tools.map((t) => t.name).join(', ');
  if (reply.kind === 'text') return { actionText: reply.content, error: `Your reply calls no tool. Call one of the tools: ${names}.` };
  if (reply.kind === 'malformed') return { actionText: reply.content, error: `${reply.error} Call one of the tools: ${names}.` };
  if (reply.calls.length !== 1) {
    return { actionText: reply.calls.map((c) => toolCallText(c)).join('\n'), error: `Call one tool per turn; this reply makes ${reply.calls.length} calls.` };
  }
  const call = reply.calls[0];
  const text = toolCallText({ name: call.name, arguments: call.arguments });
  return { actionText: text, error: checkToolCall(call, tools) };
}

/**
 * The step an invalid tool-calling reply gets instead of an environment step: the error as the
 * observation, no reward, the episode goes on, flagged invalid (counted in `rollout/invalidActionRate`).
 * @example invalidToolStep('Your reply calls no tool. Call one of the tools: guess.')
 */
export function invalidToolStep(error: string): StepResult {
  return { observation: { text: error }, reward: 0, done: false, info: { invalid: true, toolCallError: true } };
}

/** The resolved action mode; `toolText` for a token policy acting through tools. */
export type ResolvedActions =
  | { readonly mode: 'listed' | 'text' }
  | { readonly mode: 'tools'; readonly tools: readonly ToolSpec[]; readonly toolText: ToolText | null };

/** What {@link resolveActions} decides from. */
export interface ActionsInput {
  readonly setting: ActionsSetting;
  /** `sampling.constrained`: under `auto`, listed when true, text when false. */
  readonly constrained: boolean;
  readonly envName: string;
  /** The environment's tools (`Environment.tools()`; empty when it declares none). */
  readonly envTools: readonly ToolSpec[];
  /** The token policy's tool text for these tools, or null for a remote chat API (which takes tools as they are). */
  readonly toolText: ((tools: readonly ToolSpec[]) => ToolTextResult) | null;
}

/**
 * Resolves `context.actions` for a run.
 * @throws InvalidConfigError naming `context.actions` when `tools` is asked for and cannot be had, or
 * `listed` contradicts `sampling.constrained: false`.
 * @example resolveActions({ setting: 'auto', constrained: true, envName: 'wordle', envTools: env.tools(), toolText: (t) => text.toolText(t) })
 */
export function resolveActions(input: ActionsInput): ResolvedActions {
  const { setting, constrained, envName, envTools } = input;
  if (setting === 'listed' && !constrained) {
    throw new InvalidConfigError('context.actions', "'listed' decodes over the listed actions, but sampling.constrained is false; set one of them to match");
  }
  if (setting === 'listed' || setting === 'text') return { mode: setting };
  const fallback: ResolvedActions = { mode: constrained ? 'listed' : 'text' };
  if (envTools.length === 0) {
    if (setting === 'tools') throw new InvalidConfigError('context.actions', `'tools' needs an environment that declares tools; ${envName} declares none`);
    return fallback;
  }
  if (input.toolText === null) return { mode: 'tools', tools: envTools, toolText: null };
  const result = input.toolText(envTools);
  if (result.ok) return { mode: 'tools', tools: envTools, toolText: result.text };
  if (setting === 'tools') throw new InvalidConfigError('context.actions', `'tools' cannot be used with this model: ${result.reason}`);
  return fallback;
}
