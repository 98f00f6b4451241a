/**
 * How an environment's episode becomes chat messages, as AgentGym lays it out: an optional system
 * message, the environment's instruction as the first user message, a canned assistant
 * acknowledgement, then the first observation as a user message; after that, the agent's replies
 * (assistant) and the environment's observations (user) alternate.
 */
import { InvalidArgumentError } from '../../core/errors.js';
import type { ChatMessage } from './template.js';

/** AgentGym's canned acknowledgement after the instruction (BabyAI, TextCraft, SciWorld, …). */
export const AGENTGYM_ACKNOWLEDGEMENT = "OK. I'll follow your instructions and try my best to solve the task.";

/** The messages before the first reply. */
export interface ChatLayout {
  /** A system message first, or none (templates like Qwen2.5's then write their default one). */
  readonly system?: string | null;
  /**
   * The assistant message after the instruction (rendered by the template, not generated, never
   * trained on). `null`: no acknowledgement; the instruction and the first observation then form
   * one user message, joined by `instructionSeparator`. Default: {@link AGENTGYM_ACKNOWLEDGEMENT}.
   */
  readonly acknowledgement?: string | null;
  /** Joins instruction and first observation when there is no acknowledgement. Default `'\n\n'`. */
  readonly instructionSeparator?: string;
  /**
   * The role of the instruction: `user` (AgentGym) or `system` (turnwise's own layout, where the
   * instruction follows `<|system|>`; `system` above must then be unset). Default `user`.
   */
  readonly instructionRole?: 'user' | 'system';
}

/**
 * The messages up to and including the first observation.
 * @example
 * headMessages({}, 'Your goal: go to the red ball', 'You see a red ball 1')
 * // [{ role: 'user', content: 'Your goal…' }, { role: 'assistant', content: "OK. I'll follow…" }, { role: 'user', content: 'You see…' }]
 */
export function headMessages(layout: ChatLayout, instruction: string, firstObservation: string): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (layout.instructionRole === 'system') {
    if (layout.system !== undefined && layout.system !== null) throw new InvalidArgumentError('layout.system', 'must be unset when the instruction is the system message');
    messages.push({ role: 'system', content: instruction });
    if (layout.acknowledgement !== undefined && layout.acknowledgement !== null) messages.push({ role: 'assistant', content: layout.acknowledgement });
    messages.push({ role: 'user', content: firstObservation });
    return messages;
  }
  if (layout.system !== undefined && layout.system !== null) messages.push({ role: 'system', content: layout.system });
  const ack = layout.acknowledgement === undefined ? AGENTGYM_ACKNOWLEDGEMENT : layout.acknowledgement;
  if (ack === null) {
    messages.push({ role: 'user', content: instruction + (layout.instructionSeparator ?? '\n\n') + firstObservation });
  } else {
    messages.push({ role: 'user', content: instruction }, { role: 'assistant', content: ack }, { role: 'user', content: firstObservation });
  }
  return messages;
}

/**
 * The whole conversation of an episode so far, as messages (for checks against the template and for
 * display; the context itself is built from ids).
 * @example episodeMessages({}, instruction, ['obs0', 'obs1'], ['reply0'])
 */
export function episodeMessages(layout: ChatLayout, instruction: string, observations: readonly string[], replies: readonly string[]): ChatMessage[] {
  const messages = headMessages(layout, instruction, observations[0] ?? '');
  for (let i = 0; i < replies.length; i++) {
    messages.push({ role: 'assistant', content: replies[i] });
    if (i + 1 < observations.length) messages.push({ role: 'user', content: observations[i + 1] });
  }
  return messages;
}
