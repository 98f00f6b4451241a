/**
 * Is a chat template append-only? Rendering a conversation and then the same conversation with one
 * more message must only add text at the end; many templates do not (Qwen3 drops the reasoning of
 * replies once a user message follows; Mistral v0.3 moves the system message to the last user turn).
 * Probed at load with a synthetic conversation whose replies carry `<think>` reasoning.
 */
import { ChatTemplateError } from './errors.js';
import type { ChatLayout } from './layout.js';
import { headMessages } from './layout.js';
import type { ChatMessage, ChatTemplate, TemplateTool } from './template.js';

/** Where appending a message rewrote text rendered before it. */
export interface AppendOnlyViolation {
  /** Index of the appended message in the probe conversation. */
  readonly messageIndex: number;
  readonly role: string;
  /** Character offset of the first difference in the earlier render. */
  readonly offset: number;
  /** The earlier render from `offset` (up to 60 characters). */
  readonly before: string;
  /** The longer render from `offset` (up to 60 characters). */
  readonly after: string;
}

/** Result of {@link probeAppendOnly}. */
export interface AppendOnlyReport {
  readonly appendOnly: boolean;
  readonly violations: readonly AppendOnlyViolation[];
}

const probeReply = (k: number): string => `<think>\nprobe reasoning ${k}\n</think>\n\nprobe answer ${k}`;

/**
 * Renders a probe conversation message by message and reports every place where a longer render
 * does not start with the shorter one (a user-ended render is taken with its generation prompt).
 * @example probeAppendOnly(template, {}).appendOnly // false for Qwen3-style templates
 */
export function probeAppendOnly(
  template: ChatTemplate,
  layout: ChatLayout,
  kwargs: Readonly<Record<string, unknown>> = {},
  tools: readonly TemplateTool[] | null = null,
): AppendOnlyReport {
  const messages: ChatMessage[] = [
    ...headMessages(layout, 'probe instruction', 'probe observation 0'),
    { role: 'assistant', content: probeReply(1) },
    { role: 'user', content: 'probe observation 1' },
    { role: 'assistant', content: probeReply(2) },
    { role: 'user', content: 'probe observation 2' },
  ];
  return appendOnlyReport(template, messages, kwargs, tools);
}

/**
 * The {@link probeAppendOnly} check on any conversation, from message `from` on: each longer render
 * must start with the shorter one (renders that end with a user or tool message are taken with
 * the generation prompt when an assistant message follows them).
 * @example appendOnlyReport(template, toolConversation, {}, tools, 3)
 */
export function appendOnlyReport(
  template: ChatTemplate,
  messages: readonly ChatMessage[],
  kwargs: Readonly<Record<string, unknown>>,
  tools: readonly TemplateTool[] | null,
  from = 1,
): AppendOnlyReport {
  const render = (count: number, addGenerationPrompt: boolean) => template.render(messages.slice(0, count), { addGenerationPrompt, kwargs, tools });
  const violations: AppendOnlyViolation[] = [];
  for (let count = Math.max(2, from + 1); count <= messages.length; count++) {
    // The generation prompt is only valid before an assistant message; compare without it otherwise.
    // A prefix the template refuses (Llama 3.1 with tools and no user message yet) is no context.
    let earlier: string;
    try {
      earlier = render(count - 1, messages[count - 1].role === 'assistant');
    } catch (error) {
      if (error instanceof ChatTemplateError) continue;
      throw error;
    }
    const longer = render(count, false);
    if (!longer.startsWith(earlier)) {
      let offset = 0;
      while (offset < earlier.length && earlier[offset] === longer[offset]) offset++;
      violations.push({ messageIndex: count - 1, role: messages[count - 1].role, offset, before: earlier.slice(offset, offset + 60), after: longer.slice(offset, offset + 60) });
    }
  }
  return { appendOnly: violations.length === 0, violations };
}
