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
}

/** Token counts reported by the serving side. */
export interface TokenUsage {
  readonly promptTokens: number;
  readonly completionTokens: number;
}

/** What a text policy answers. */
export interface TextActResult {
  /** Raw reply; the environment parses it (`Thought: … Action: …` or a bare action). */
  readonly text: string;
  readonly usage: TokenUsage;
}

/**
 * A policy that acts on text.
 * @example const { text } = await policy.act({ episodeId: 'e1', instruction, turns: [], observation, seed: 1 });
 */
export interface TextPolicy {
  act(request: TextActRequest, signal?: AbortSignal): Promise<TextActResult>;
}

/** One chat message in OpenAI's shape. */
export interface ChatMessage {
  readonly role: 'system' | 'user' | 'assistant';
  readonly content: string;
}

/** AgentGym's acknowledgement of the instruction (`conversation_start[1]`). */
export const AGENTGYM_ACKNOWLEDGEMENT = "OK. I'll follow your instructions and try my best to solve the task.";

/**
 * The AgentGym conversation of an episode: user: instruction, assistant: acknowledgement, then
 * one user message per observation and one assistant message per past action.
 * @example chatMessages({ instruction: 'Reach the ball.', turns: [], observation: { text: 'A ball.' } })
 * // [{ role: 'user', content: 'Reach the ball.' }, { role: 'assistant', content: "OK. …" }, { role: 'user', content: 'A ball.' }]
 */
export function chatMessages(
  request: Pick<TextActRequest, 'instruction' | 'turns' | 'observation'>,
  acknowledgement: string = AGENTGYM_ACKNOWLEDGEMENT,
): ChatMessage[] {
  const messages: ChatMessage[] = [
    { role: 'user', content: request.instruction },
    { role: 'assistant', content: acknowledgement },
  ];
  for (const turn of request.turns) {
    messages.push({ role: 'user', content: turn.observationText }, { role: 'assistant', content: turn.actionText });
  }
  messages.push({ role: 'user', content: request.observation.text });
  return messages;
}
