/**
 * The text-level policy contract: a policy that reads the conversation as text and answers with
 * text (a remote chat model), as opposed to {@link Policy}, which works on token ids.
 *
 * Why a second contract rather than an adapter to `Policy`: a chat model has its own tokenizer and
 * its own chat template, so our token contexts mean nothing to it. The episode's `act` effect
 * therefore has a text path (see `RolloutOptions.textPolicy` in `src/runtime/rollout.ts`); the
 * turns it records keep their token-level fields empty and carry {@link TEXT_POLICY_VERSION}, so
 * nothing can mistake them for trainable samples.
 */
import { parseToolCallText, type ToolCall, type ToolSpec, toolCallId } from '../core/tools.js';
import type { Observation } from '../core/types.js';

/** Policy version stamped on turns produced by a text policy: not a turnwise weights version. */
export const TEXT_POLICY_VERSION = -1;

/** One completed turn, as text. */
export interface TextTurn {
  readonly observationText: string;
  readonly actionText: string;
}

/** What a text policy acts on: the whole episode so far. */
export interface TextActRequest {
  /** Trajectory id of the episode (usage accounting is kept per episode). */
  readonly episodeId: string;
  /** The environment's instruction (AgentGym's `conversation_start[0]`). */
  readonly instruction: string;
  /** Completed turns, oldest first. */
  readonly turns: readonly TextTurn[];
  /** The observation to act on now. */
  readonly observation: Observation;
  /** Per-turn sampling seed (the same one the token path uses), for servers that honour `seed`. */
  readonly seed: number;
  /**
   * The environment's tools when the agent acts through them: sent with the request, and a past
   * turn whose `actionText` is a call's canonical text (`toolCallText`) is replayed as that call
   * answered by a tool message.
   */
  readonly tools?: readonly ToolSpec[];
}

/** Token counts reported by the serving side. */
export interface TokenUsage {
  readonly promptTokens: number;
  readonly completionTokens: number;
}

/** What a text policy answers. */
export interface TextActResult {
  /** Raw reply; the environment parses it (`Thought: … Action: …` or a bare action). With tools: the reply's text besides its calls. */
  readonly text: string;
  readonly usage: TokenUsage;
  /** With tools: the calls the reply made (possibly none). */
  readonly toolCalls?: readonly ToolCall[];
  /** With tools: why the reply's calls could not be read (e.g. arguments that are not JSON). */
  readonly toolCallError?: string;
}

/**
 * A policy that acts on text.
 * @example const { text } = await policy.act({ episodeId: 'e1', instruction, turns: [], observation, seed: 1 });
 */
export interface TextPolicy {
  act(request: TextActRequest, signal?: AbortSignal): Promise<TextActResult>;
}

/** One chat message in OpenAI's shape. */
export type ChatMessage =
  | { readonly role: 'system' | 'user'; readonly content: string }
  | { readonly role: 'assistant'; readonly content: string | null; readonly tool_calls?: OpenAIToolCall[] }
  | { readonly role: 'tool'; readonly content: string; readonly tool_call_id: string };

/** A tool call in OpenAI's wire shape (arguments as a JSON string). */
export interface OpenAIToolCall {
  readonly id: string;
  readonly type: 'function';
  readonly function: { readonly name: string; readonly arguments: string };
}

/** AgentGym's acknowledgement of the instruction (`conversation_start[1]`). */
export const AGENTGYM_ACKNOWLEDGEMENT = "OK. I'll follow your instructions and try my best to solve the task.";

/**
 * The AgentGym conversation of an episode: user: instruction, assistant: acknowledgement, then
 * one user message per observation and one assistant message per past action. With tools, a past
 * action that is a call's canonical text is an assistant message making that call, and the
 * observation after it a tool message answering it.
 * @example chatMessages({ instruction: 'Reach the ball.', turns: [], observation: { text: 'A ball.' } })
 * // [{ role: 'user', content: 'Reach the ball.' }, { role: 'assistant', content: "OK. …" }, { role: 'user', content: 'A ball.' }]
 */
export function chatMessages(
  request: Pick<TextActRequest, 'instruction' | 'turns' | 'observation' | 'tools'>,
  acknowledgement: string = AGENTGYM_ACKNOWLEDGEMENT,
): ChatMessage[] {
  const messages: ChatMessage[] = [
    { role: 'user', content: request.instruction },
    { role: 'assistant', content: acknowledgement },
  ];
  let callId: string | null = null;
  request.turns.forEach((turn, k) => {
    messages.push(callId === null ? { role: 'user', content: turn.observationText } : { role: 'tool', content: turn.observationText, tool_call_id: callId });
    const call = request.tools === undefined ? null : parseToolCallText(turn.actionText);
    if (call?.ok === true) {
      callId = toolCallId(k);
      messages.push({ role: 'assistant', content: null, tool_calls: [{ id: callId, type: 'function', function: { name: call.call.name, arguments: JSON.stringify(call.call.arguments) } }] });
    } else {
      callId = null;
      messages.push({ role: 'assistant', content: turn.actionText });
    }
  });
  messages.push(callId === null ? { role: 'user', content: request.observation.text } : { role: 'tool', content: request.observation.text, tool_call_id: callId });
  return messages;
}
