import { describe, expect, it } from 'vitest';
import { ChatContextBuilder, type ChatPastTurn, startsWith } from '../../../src/models/chat/context-builder.js';
import { ChatTemplateError } from '../../../src/models/chat/errors.js';
import { loadChatModelFiles } from '../../../src/models/chat/model-files.js';
import { ChatTemplate } from '../../../src/models/chat/template.js';
import { type Family, fixtureDir, type Reference, reference } from './fixtures.js';

type Chat = NonNullable<Reference['chats']>[number];

const kwargsOf = (family: Family): Record<string, unknown> => (family === 'llama3' ? { date_string: '26 Jul 2024' } : {});

/** The episode inside a reference conversation: instruction, observations and replies. */
function episode(chat: Chat, instruction: string) {
  const body = chat.messages.slice(chat.system === null ? 0 : 1);
  const head = chat.ack === null ? 1 : 3;
  const firstObservation = chat.ack === null ? body[0].content.slice(instruction.length + 2) : body[2].content;
  const rest = body.slice(head);
  return {
    observations: [firstObservation, ...rest.filter((m) => m.role === 'user').map((m) => m.content)],
    replies: rest.filter((m) => m.role === 'assistant').map((m) => m.content),
    headLength: (chat.system === null ? 0 : 1) + head,
  };
}

async function setup(family: Family, chat: Chat) {
  const files = await loadChatModelFiles(fixtureDir(family));
  if (files.template === undefined) throw new Error(`${family} has no template`);
  const builder = ChatContextBuilder.create(files.template, files.tokenizer, {
    layout: { system: chat.system, acknowledgement: chat.ack },
    stopTokenIds: files.stopTokenIds,
    templateKwargs: kwargsOf(family),
  });
  const ref = reference(family);
  const withAck = ref.chats?.find((c) => c.ack !== null) as Chat;
  const instruction = withAck.messages[withAck.system === null ? 0 : 1].content;
  return { files, builder, instruction, ...episode(chat, instruction) };
}

const APPEND_ONLY = ['qwen2.5', 'smollm2', 'llama3', 'llama2', 'mistral'] as const;

describe.each(APPEND_ONLY)('ChatContextBuilder on the append-only %s template', (family) => {
  const chats = reference(family).chats ?? [];

  it.each(chats.map((c) => [c.name, c] as const))('builds every turn of a 6-turn episode (%s) exactly as transformers tokenizes the rendered chat', async (_name, chat) => {
    const { builder, instruction, observations, replies, headLength } = await setup(family, chat);
    expect(builder.appendOnly).toEqual({ appendOnly: true, violations: [] });
    // (With an acknowledgement, the render that ends at the instruction is not a turn.)
    const renders = chat.renders.filter((r) => r.add_generation_prompt && r.messages >= headLength);
    expect(renders.length).toBe(6);
    let previous: Int32Array | undefined;
    for (const r of renders) {
      const turn = (r.messages - headLength) / 2; // replies before this context
      const pastTurns: ChatPastTurn[] = replies.slice(0, turn).map((reply, k) => ({ observationText: observations[k], actionTokens: builder.encodeReply(reply) }));
      const ids = builder.context({ instruction, pastTurns, observationText: observations[turn] });
      expect([...ids], `turn ${turn}`).toEqual(r.ids);
      if (previous !== undefined) {
        // Chaining: context(k) + reply(k-1) is a prefix of context(k+1).
        const chained = Int32Array.from([...previous, ...pastTurns[turn - 1].actionTokens]);
        expect(startsWith(ids, chained)).toBe(true);
      }
      previous = ids;
    }
  });

  it('gives each listed action its canonical reply ids ending with the end-of-turn id', async () => {
    const { builder } = await setup(family, chats[0]);
    const actions = ['turn left', 'go to red ball 1', 'Thought:\nclose.\n\nAction:\nmove forward'];
    const choices = builder.actionChoices(actions);
    choices.forEach((ids, i) => {
      expect(ids[ids.length - 1]).toBe(builder.endOfTurnId);
      // Llama 2's template writes ' ' + reply + ' ' + </s>: the canonical reply ends with a space.
      expect(builder.replyText(ids)).toBe(family === 'llama2' ? `${actions[i]} ` : actions[i]);
    });
    expect(builder.stopTokenIds).toContain(builder.endOfTurnId);
  });
});

describe('the turn separator (verl #6501: the newline after <|im_end|> dropped at every boundary)', () => {
  it.each(['qwen2.5', 'smollm2'] as const)('%s: appends the "\\n" the model never generates after <|im_end|>', async (family) => {
    const chat = (reference(family).chats ?? [])[0];
    const { builder, files, instruction, observations, replies } = await setup(family, chat);
    expect(builder.endOfTurnId).toBe(files.tokenizer.idOf('<|im_end|>'));
    expect([...builder.turnSeparator]).toEqual([...files.tokenizer.encode('\n')]);
    const pastTurns = replies.map((reply, k) => ({ observationText: observations[k], actionTokens: builder.encodeReply(reply) }));
    const ids = builder.context({ instruction, pastTurns, observationText: observations[replies.length] });
    const expected = chat.renders.filter((r) => r.add_generation_prompt).at(-1)?.ids;
    expect([...ids]).toEqual(expected);
    // The trap: joining the sampled ids straight to the next user message loses one id per boundary.
    const naive = [...builder.head(instruction, observations[0])];
    pastTurns.forEach((turn, k) => {
      naive.push(...turn.actionTokens, ...builder.observationDelta(observations[k + 1]));
    });
    expect(naive.length).toBe((expected?.length ?? 0) - replies.length);
    expect(naive).not.toEqual(expected);
    const imEnd = builder.endOfTurnId;
    const imStart = files.tokenizer.idOf('<|im_start|>');
    for (let i = 0; i + 1 < ids.length; i++) if (ids[i] === imEnd) expect([ids[i + 1], ids[i + 2]]).toEqual([builder.turnSeparator[0], imStart]);
  });

  it('is empty where the template writes nothing after the end-of-turn id (Llama 3, Mistral)', async () => {
    for (const family of ['llama3', 'mistral'] as const) {
      const { builder } = await setup(family, (reference(family).chats ?? [])[0]);
      expect(builder.turnSeparator.length).toBe(0);
    }
  });
});

describe('replies that did not end with the end-of-turn id', () => {
  it('closes a reply cut at the per-turn limit with <|im_end|> and the separator, counted as forced', async () => {
    const chat = (reference('qwen2.5').chats ?? [])[0];
    const { builder, instruction, observations, replies } = await setup('qwen2.5', chat);
    const full = builder.encodeReply(replies[0]);
    const cut = full.slice(0, 4);
    const closed = builder.closeReply(cut);
    expect([...closed.ids]).toEqual([...cut, builder.endOfTurnId, ...builder.turnSeparator]);
    expect(closed.forced).toBe(1 + builder.turnSeparator.length);
    expect(builder.closeReply(full).forced).toBe(builder.turnSeparator.length);
    const ids = builder.context({ instruction, pastTurns: [{ observationText: observations[0], actionTokens: cut }], observationText: observations[1] });
    const head = builder.head(instruction, observations[0]);
    expect([...ids]).toEqual([...head, ...closed.ids, ...builder.observationDelta(observations[1])]);
  });
});

describe('ChatContextBuilder on the Qwen3-style template (not append-only)', () => {
  const chats = reference('qwen3').chats ?? [];

  it('reports where the template rewrites earlier replies', async () => {
    const { builder } = await setup('qwen3', chats[0]);
    expect(builder.appendOnly.appendOnly).toBe(false);
    const { violations } = builder.appendOnly;
    // Each user message rewrites the reply before it (the acknowledgement's empty think block too).
    expect(violations.map((v) => [v.messageIndex, v.role])).toEqual([[2, 'user'], [4, 'user'], [6, 'user']]);
    expect(violations[1].before.startsWith('<think>\nprobe reasoning 1\n</think>\n\nprobe answer 1')).toBe(true);
    expect(violations[1].after.startsWith('probe answer 1<|im_end|>')).toBe(true);
  });

  it.each(chats.map((c) => [c.name, c] as const))('keeps the sampled reasoning; differs from the template only inside earlier replies (%s)', async (_name, chat) => {
    const { builder, files, instruction, observations, replies, headLength } = await setup('qwen3', chat);
    const tok = files.tokenizer;
    const header = [...tok.encode('<|im_start|>assistant\n')];
    for (const r of chat.renders.filter((x) => x.add_generation_prompt && x.messages >= headLength)) {
      const turn = (r.messages - headLength) / 2;
      const sampled = replies.slice(0, turn).map((reply) => builder.encodeReply(reply));
      const ids = builder.context({ instruction, pastTurns: sampled.map((actionTokens, k) => ({ observationText: observations[k], actionTokens })), observationText: observations[turn] });
      // Replace, in the template's own ids, each earlier reply (after its header, up to <|im_end|>)
      // by the sampled ids: what remains must be identical, boundary by boundary.
      const expected: number[] = [];
      let at = 0;
      let replaced = 0;
      const t = r.ids;
      while (at < t.length) {
        const isHeader = header.every((id, j) => t[at + j] === id);
        const afterAck = chat.ack !== null && replaced === 0 && tok.decode(t.slice(at + header.length, at + header.length + 3)).startsWith('OK');
        if (isHeader && at + header.length < t.length && !afterAck && replaced < turn) {
          expected.push(...header);
          let end = at + header.length;
          while (t[end] !== builder.endOfTurnId) end++;
          const rewritten = tok.decode(t.slice(at + header.length, end));
          // The template kept only the final answer of the earlier reply ...
          expect(rewritten).toBe(replies[replaced].split('</think>\n\n')[1]);
          expect(replies[replaced].startsWith('<think>')).toBe(true);
          expected.push(...sampled[replaced]); // ... turnwise keeps what was generated.
          replaced++;
          at = end + 1;
        } else {
          expected.push(t[at]);
          at++;
        }
      }
      expect(replaced).toBe(turn);
      expect([...ids], `turn ${turn}`).toEqual(expected);
      if (turn >= 1) expect([...ids]).not.toEqual(t);
    }
  });

  it('gives the reasoning reply back to the environment with its <think> text (a non-special token)', async () => {
    const { builder, replies } = await setup('qwen3', chats[0]);
    expect(builder.replyText(builder.encodeReply(replies[0]))).toBe(replies[0]);
  });
});

describe('templates that cannot be extended turn by turn', () => {
  it('refuses a template whose earlier tokens change with every message', async () => {
    const files = await loadChatModelFiles(fixtureDir('qwen2.5'));
    const counting = new ChatTemplate("{{ messages | length }}{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}");
    expect(() => ChatContextBuilder.create(counting, files.tokenizer, { stopTokenIds: files.stopTokenIds })).toThrow(ChatTemplateError);
    expect(() => ChatContextBuilder.create(counting, files.tokenizer, { stopTokenIds: files.stopTokenIds })).toThrow(/cannot build contexts turn by turn/);
  });

  it('refuses a template whose replies end with no stop token', async () => {
    const files = await loadChatModelFiles(fixtureDir('qwen2.5'));
    const noEnd = new ChatTemplate('{% for m in messages %}{{ m.role }}:\n{{ m.content }}\n{% endfor %}{% if add_generation_prompt %}assistant:\n{% endif %}');
    expect(() => ChatContextBuilder.create(noEnd, files.tokenizer, { stopTokenIds: files.stopTokenIds })).toThrow(/does not end with any stop token/);
  });
});
