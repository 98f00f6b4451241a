/**
 * `POST /v1/chat/completions` with `tools`: the tools and a conversation's past `tool_calls` /
 * `tool` messages rendered by the model's chat template as transformers renders them, replies read
 * in the family's tool-call format and answered as OpenAI's `tool_calls`. The policy is scripted
 * (it answers with fixed ids and records the prompts it was given), so each test knows the reply.
 */
import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.js';
import type { ToolSpec } from '../../src/core/tools.js';
import type { ActRequest, ActResult, Policy } from '../../src/core/policy.js';
import { loadChatModelFiles } from '../../src/models/chat/index.js';
import { templateTools } from '../../src/models/chat/template.js';
import { createServeApp } from '../../src/serve/app.js';
import { choiceBuilder, templatePrompts } from '../../src/serve/chat-prompts.js';
import type { ServedModel } from '../../src/serve/served-model.js';
import { fixtureDir } from '../models/chat/fixtures.js';

const TOOLS = [
  { type: 'function', function: { name: 'guess', description: 'Guess a word.', parameters: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] } } },
  { type: 'function', function: { name: 'hint', description: 'Get a hint.', parameters: { type: 'object', properties: {} } } },
];

async function served(family: 'qwen2.5' | 'qwen3' | 'mistral', replies: string[]) {
  const files = await loadChatModelFiles(fixtureDir(family));
  const template = files.template;
  if (template === undefined) throw new Error('no template');
  const tokenizer = files.tokenizer;
  const builder = choiceBuilder(template, tokenizer, files.stopTokenIds);
  if (typeof builder === 'string') throw new Error(builder);
  const prompts: Int32Array[] = [];
  const answer = (requests: readonly ActRequest[]): ActResult[] =>
    requests.map((r) => {
      prompts.push(r.contextTokens);
      const tokens = Int32Array.from([...tokenizer.encode(replies.shift() ?? 'nothing'), builder.endOfTurnId]);
      return { tokens, logprobs: new Float32Array(tokens.length), lossMask: new Uint8Array(tokens.length).fill(1), constraint: null, policyVersion: 0, finishReason: 'stop' };
    });
  const policy: Policy = { version: 0, sampleActions: async (r) => answer(r), greedyActions: async (r) => answer(r) };
  const model: ServedModel = {
    id: family,
    policy,
    maxContext: 100_000,
    vocabSize: tokenizer.vocabSize,
    stopTokenIds: builder.stopTokenIds,
    tokens: { decode: (ids, keep) => tokenizer.decode(ids, { skipSpecialTokens: !keep }), encode: (text) => tokenizer.encode(text) },
    chat: templatePrompts(template, tokenizer, { constrainToListedActions: false, builder }),
    scorer: { score: async () => ({ logprobs: new Float32Array(0), top: null }) },
    defaults: { temperature: 1, topP: 1, chatMaxTokens: 64 },
    tokenizerInfo: {},
  };
  const app = createServeApp(model, { rng: Rng.fromSeed(1), wallClockMs: () => 0 });
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field, as a client would
  const chat = async (body: Record<string, unknown>): Promise<{ status: number; body: any; text: string }> => {
    const res = await app.request('/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: family, ...body }) });
    const text = await res.text();
    return { status: res.status, body: res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : null, text };
  };
  return { chat, prompts, template, tokenizer };
}

const conversation = [
  { role: 'user', content: 'Guess my word.' },
  { role: 'assistant', content: null, tool_calls: [{ id: 'abc123XYZ', type: 'function', function: { name: 'guess', arguments: '{"word": "crane"}' } }] },
  { role: 'tool', tool_call_id: 'abc123XYZ', content: 'c r a n e: ⬜🟨⬜⬜🟩' },
];

describe('chat completions with tools (Qwen2.5 template, hermes format)', () => {
  it('renders the tools and the past call and result as the template does, and answers the reply as tool_calls', async () => {
    const { chat, prompts, template, tokenizer } = await served('qwen2.5', ['Trying again.\n<tool_call>\n{"name": "guess", "arguments": {"word": "slate"}}\n</tool_call>']);
    const res = await chat({ messages: conversation, tools: TOOLS });
    expect(res.status).toBe(200);
    const expected = template.render(
      [
        { role: 'user', content: 'Guess my word.' },
        { role: 'assistant', content: '', tool_calls: [{ id: 'abc123XYZ', type: 'function', function: { name: 'guess', arguments: { word: 'crane' } } }] },
        { role: 'tool', content: 'c r a n e: ⬜🟨⬜⬜🟩', tool_call_id: 'abc123XYZ' },
      ],
      { addGenerationPrompt: true, tools: templateTools(TOOLS.map((t) => t.function as unknown as ToolSpec)) },
    );
    expect([...(prompts[0] ?? [])]).toEqual([...tokenizer.encode(expected)]);
    expect(expected).toContain('<tool_call>\n{"name": "guess", "arguments": {"word": "crane"}}\n</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\nc r a n e');
    const choice = res.body.choices[0];
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message).toEqual({
      role: 'assistant',
      content: 'Trying again.',
      refusal: null,
      tool_calls: [{ id: expect.stringMatching(/^[A-Za-z0-9]{9}$/), type: 'function', function: { name: 'guess', arguments: '{"word":"slate"}' } }],
    });
  });

  it('passes the tools to the template as the client sent them (a tool without a description or parameters has none)', async () => {
    const { chat, prompts, tokenizer } = await served('qwen2.5', ['ok']);
    await chat({ messages: conversation, tools: [{ type: 'function', function: { name: 'look' } }] });
    expect(tokenizer.decode(prompts[0] ?? [], { skipSpecialTokens: false })).toContain('<tools>\n{"type": "function", "function": {"name": "look"}}\n</tools>');
  });

  it("reads no calls with tool_choice 'none', and returns a reply without a call as text", async () => {
    const call = '<tool_call>\n{"name": "hint", "arguments": {}}\n</tool_call>';
    const { chat } = await served('qwen2.5', [call, 'I give up.']);
    const none = await chat({ messages: conversation, tools: TOOLS, tool_choice: 'none' });
    expect(none.body.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: call } });
    expect(none.body.choices[0].message).not.toHaveProperty('tool_calls');
    const text = await chat({ messages: conversation, tools: TOOLS });
    expect(text.body.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: 'I give up.' } });
  });

  it('starts the reply with the call opening for a named function, and streams the calls whole', async () => {
    const { chat, prompts, tokenizer } = await served('qwen2.5', ['{"word": "pious"}}\n</tool_call>']);
    const res = await chat({ messages: conversation, tools: TOOLS, tool_choice: { type: 'function', function: { name: 'guess' } }, stream: true });
    expect(res.status).toBe(200);
    expect(tokenizer.decode(prompts[0] ?? [], { skipSpecialTokens: false }).endsWith('<|im_start|>assistant\n<tool_call>\n{"name": "guess", "arguments": ')).toBe(true);
    const events = res.text
      .split('\n')
      .filter((l) => l.startsWith('data: ') && l !== 'data: [DONE]')
      .map((l) => JSON.parse(l.slice(6)).choices[0]);
    expect(events.map((e) => e.finish_reason)).toEqual([null, null, 'tool_calls']);
    expect(events[1].delta.tool_calls).toEqual([{ index: 0, id: expect.stringMatching(/^[A-Za-z0-9]{9}$/), type: 'function', function: { name: 'guess', arguments: '{"word":"pious"}' } }]);
  });

  it("Qwen3 without thinking: the template's empty think block is not written twice, nor returned as content", async () => {
    const { chat, prompts, tokenizer } = await served('qwen3', ['guess", "arguments": {"word": "pious"}}\n</tool_call>']);
    const res = await chat({ messages: conversation, tools: TOOLS, tool_choice: 'required', chat_template_kwargs: { enable_thinking: false } });
    expect(res.status).toBe(200);
    const prompt = tokenizer.decode(prompts[0] ?? [], { skipSpecialTokens: false });
    expect(prompt.endsWith('<|im_start|>assistant\n<think>\n\n</think>\n\n<tool_call>\n{"name": "')).toBe(true);
    expect(res.body.choices[0]).toMatchObject({ finish_reason: 'tool_calls', message: { content: null, tool_calls: [{ function: { name: 'guess', arguments: '{"word":"pious"}' } }] } });
  });

  it('names the parameter at fault', async () => {
    const { chat } = await served('qwen2.5', []);
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ messages: conversation, tool_choice: 'required' }, 'tool_choice', /only allowed when 'tools' are specified/],
      [{ messages: conversation, tools: TOOLS, tool_choice: { type: 'function', function: { name: 'jump' } } }, 'tool_choice', /'jump' is not among the tools/],
      [{ messages: [...conversation.slice(0, 2), { role: 'tool', content: 'x' }], tools: TOOLS }, 'messages[2].tool_call_id', /required in a 'tool' message/],
      [{ messages: [conversation[0], { ...conversation[1], tool_calls: [{ id: 'a', type: 'function', function: { name: 'guess', arguments: '{"word": ' } }] }, conversation[2]], tools: TOOLS }, 'messages[1].tool_calls[0].function.arguments', /expected a JSON object in a string/],
      [{ messages: [{ role: 'user', content: null }], tools: TOOLS }, 'messages[0].content', /null only in an assistant message with tool_calls/],
      [{ messages: conversation, tools: [{ type: 'function', function: { name: 'bad name!' } }] }, 'tools[0].function.name', /letters, digits/],
    ];
    for (const [body, param, message] of cases) {
      const res = await chat(body);
      expect(res.status, param).toBe(400);
      expect(res.body.error.param).toBe(param);
      expect(res.body.error.message).toMatch(message);
    }
  });
});

describe('chat completions with tools (Mistral template)', () => {
  it("keeps the id the model wrote in its [TOOL_CALLS] list and renders results with their call's id", async () => {
    const { chat, prompts, tokenizer } = await served('mistral', ['[TOOL_CALLS] [{"name": "hint", "arguments": {}, "id": "Q1w2E3r4T"}]']);
    const res = await chat({ messages: conversation, tools: TOOLS });
    expect(res.body.choices[0].message.tool_calls).toEqual([{ id: 'Q1w2E3r4T', type: 'function', function: { name: 'hint', arguments: '{}' } }]);
    const prompt = tokenizer.decode(prompts[0] ?? [], { skipSpecialTokens: false });
    expect(prompt).toContain('[AVAILABLE_TOOLS] [{"type": "function", "function": {"name": "guess"');
    expect(prompt).toContain('[TOOL_CALLS] [{"name": "guess", "arguments": {"word": "crane"}, "id": "abc123XYZ"}]</s>[TOOL_RESULTS] {"content": c r a n e: ⬜🟨⬜⬜🟩, "call_id": "abc123XYZ"}[/TOOL_RESULTS]');
  });
});
