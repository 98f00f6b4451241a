import { describe, expect, it } from 'vitest';
import { startsWith } from '../../../src/models/chat/context-builder.js';
import { loadChatModelFiles } from '../../../src/models/chat/model-files.js';
import { type IdentifiedToolCall, ToolChatBuilder } from '../../../src/models/chat/tool-chat.js';
import type { ToolSpec } from '../../../src/core/tools.js';
import { fixtureDir, TOOL_FAMILIES, type ToolChat, type ToolFamily, toolChats } from './fixtures.js';

const kwargsOf = (family: string): Record<string, unknown> => (family === 'llama3' ? { date_string: '26 Jul 2024' } : {});

interface RecordedCall {
  id: string;
  function: { name: string; arguments: Record<string, unknown> };
}

/** The episode inside a recorded tool conversation: instruction, observations (user or tool), replies. */
function episode(chat: ToolChat) {
  const body = chat.messages.slice(chat.system === null ? 0 : 1);
  const headSize = chat.ack === null ? 1 : 3;
  const instruction = chat.ack === null ? (body[0].content.split('\n\n').slice(0, -1).join('\n\n') as string) : body[0].content;
  const firstObservation = chat.ack === null ? body[0].content.slice(instruction.length + 2) : body[2].content;
  const rest = body.slice(headSize);
  return {
    instruction,
    observations: [firstObservation, ...rest.filter((m) => m.role !== 'assistant').map((m) => m.content)],
    replies: rest.filter((m) => m.role === 'assistant'),
    headLength: (chat.system === null ? 0 : 1) + headSize,
  };
}

async function setup(family: ToolFamily, chat: ToolChat) {
  const files = await loadChatModelFiles(fixtureDir(family));
  if (files.template === undefined) throw new Error(`${family} has no template`);
  const tools: ToolSpec[] = chat.tools.map((t) => t.function as unknown as ToolSpec);
  const builder = ToolChatBuilder.create(files.template, files.tokenizer, {
    layout: { system: chat.system, acknowledgement: chat.ack },
    stopTokenIds: files.stopTokenIds,
    templateKwargs: kwargsOf(family),
    tools,
  });
  return { files, builder, ...episode(chat) };
}

/** The canonical ids of a recorded reply (a call or plain text). */
function replyIds(builder: ToolChatBuilder, reply: ToolChat['messages'][number]): Int32Array {
  const calls = reply.tool_calls as RecordedCall[] | undefined;
  if (calls === undefined) return builder.chat.encodeReply(reply.content);
  return builder.encodeToolReply(
    calls.map((c): IdentifiedToolCall => ({ name: c.function.name, arguments: c.function.arguments, id: c.id })),
    reply.content,
  );
}

/** Templates that rewrite earlier text when a user message (an unreadable call's error) follows tool turns. */
const REWRITES_AT_USER_MESSAGE: readonly string[] = ['qwen3', 'mistral'];

const EXPECTED_FORMAT = { 'qwen2.5': 'hermes', qwen3: 'hermes', llama3: 'llama3_json', mistral: 'mistral' } as const;

describe.each(TOOL_FAMILIES)('ToolChatBuilder on the %s template', (family) => {
  const chats = toolChats(family);

  it('reads the tool-call format from how the template writes a call', async () => {
    const { builder } = await setup(family, chats[0]);
    expect(builder.format).toBe(EXPECTED_FORMAT[family]);
  });

  it.each(chats.map((c) => [c.name, c] as const))('builds every turn of a tool conversation (%s) exactly as transformers tokenizes it', async (name, chat) => {
    const { builder, instruction, observations, replies, headLength } = await setup(family, chat);
    // Where the template rewrites earlier text (Qwen3 drops reasoning once a real user message
    // follows; Mistral moves the tool list to the last user message), contexts keep what the model
    // saw and stop matching the template's render from that message on.
    const rewrites = REWRITES_AT_USER_MESSAGE.includes(family) && name.includes('malformed');
    const rewriteAt = rewrites ? chat.messages.findIndex((m, i) => i >= headLength && m.role === 'user') + 1 : Number.POSITIVE_INFINITY;
    const renders = chat.renders.filter((r) => r.add_generation_prompt && r.messages >= headLength);
    expect(renders.length).toBe(replies.length + 1);
    let previous: Int32Array | undefined;
    for (const r of renders) {
      const turn = (r.messages - headLength) / 2;
      const pastTurns = replies.slice(0, turn).map((reply, k) => ({ observationText: observations[k], actionTokens: replyIds(builder, reply) }));
      const ids = builder.context({ instruction, pastTurns, observationText: observations[turn] });
      if (r.messages < rewriteAt) expect([...ids], `turn ${turn}`).toEqual(r.ids);
      else expect([...ids], `turn ${turn}`).not.toEqual(r.ids);
      if (previous !== undefined) expect(startsWith(ids, Int32Array.from([...previous, ...pastTurns[turn - 1].actionTokens]))).toBe(true);
      previous = ids;
    }
  });

  it('reports whether tool turns followed by a user message are append-only', async () => {
    const { builder } = await setup(family, chats[0]);
    const { violations } = builder.appendOnly;
    if (!REWRITES_AT_USER_MESSAGE.includes(family)) expect(violations).toEqual([]);
    else expect(violations.map((v) => v.role)).toEqual(['user']);
  });

  it('reads back every recorded call from its canonical ids, with the id that Mistral writes', async () => {
    const { builder, replies } = await setup(family, chats[0]);
    for (const reply of replies) {
      const recorded = (reply.tool_calls as RecordedCall[])[0];
      const read = builder.reply(replyIds(builder, reply));
      expect(read.kind).toBe('calls');
      if (read.kind !== 'calls') continue;
      expect(read.calls).toEqual([{ name: recorded.function.name, arguments: recorded.function.arguments, ...(family === 'mistral' ? { id: recorded.id } : {}) }]);
    }
  });
});
