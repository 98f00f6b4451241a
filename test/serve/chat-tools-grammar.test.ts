/**
 * `turnwise serve` keeps a forced tool call to its grammar, end to end: a tiny random model with
 * Qwen2.5's tokenizer and template (which takes tools) answers `tool_choice: "required"` or a named
 * function with calls whose arguments an independent validator (Ajv) accepts, sampled and greedy,
 * streamed and generated in chunks (stop strings),
 * one call when `parallel_tool_calls` is false; the same model left to `auto` writes no call (its
 * weights are random), which is what the grammar changes. A tool whose parameters are not a schema
 * is refused naming the field.
 */
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { tinyQwenApp } from './tiny-qwen-app.js';

const app = tinyQwenApp(21);

const TOOLS = [
  { type: 'function', function: { name: 'guess', description: 'Guess the word.', parameters: { type: 'object', properties: { word: { type: 'string', minLength: 1, maxLength: 4 }, row: { type: 'integer' } }, required: ['word'] } } },
  { type: 'function', function: { name: 'hint', description: 'Ask for a hint.', parameters: { type: 'object', properties: { level: { enum: ['low', 'high'] } }, required: ['level'] } } },
];
const ajv = new Ajv({ strict: false });
const validate = new Map(TOOLS.map((t) => [t.function.name, ajv.compile(t.function.parameters)]));
const messages = [{ role: 'user', content: 'Guess my four-letter word.' }];

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field, as a client would
type Json = any;
const chat = async (body: Record<string, unknown>): Promise<{ status: number; body: Json }> => {
  const res = await app().request('/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'qwen-tiny', messages, tools: TOOLS, max_tokens: 160, ...body }) });
  return { status: res.status, body: await res.json() };
};

/** Every call of every choice: its name and parsed arguments. */
function callsOf(body: Json): { name: string; args: unknown }[][] {
  return body.choices.map((c: Json) => (c.message.tool_calls ?? []).map((t: Json) => ({ name: t.function.name, args: JSON.parse(t.function.arguments) })));
}

describe('serve: forced tool calls kept to their grammar (tiny random model, Qwen2.5 template)', () => {
  it("tool_choice 'required': every choice is calls of the tools with arguments their schemas accept", async () => {
    const { status, body } = await chat({ tool_choice: 'required', n: 6, temperature: 1, seed: 3 });
    expect(status).toBe(200);
    expect(body.choices.map((c: Json) => c.finish_reason)).toEqual(Array(6).fill('tool_calls'));
    for (const calls of callsOf(body)) {
      expect(calls.length).toBeGreaterThan(0);
      for (const call of calls) expect(validate.get(call.name)?.(call.args), JSON.stringify(call)).toBe(true);
    }
  });

  it('the same model left to auto writes no call: the calls above are the grammar at work', async () => {
    const { status, body } = await chat({ tool_choice: 'auto', n: 6, temperature: 1, seed: 3, max_tokens: 40 });
    expect(status).toBe(200);
    expect(body.choices.filter((c: Json) => c.finish_reason === 'tool_calls')).toHaveLength(0);
  });

  it('a named function, greedy and sampled: one call of it, its arguments accepted', async () => {
    for (const temperature of [0, 1]) {
      const { body } = await chat({ tool_choice: { type: 'function', function: { name: 'hint' } }, n: temperature === 0 ? 1 : 4, temperature, seed: 5 });
      for (const calls of callsOf(body)) {
        expect(calls.map((c) => c.name)).toEqual(['hint']);
        expect(validate.get('hint')?.(calls[0]?.args)).toBe(true);
      }
    }
  });

  it('parallel_tool_calls false: exactly one call a choice', async () => {
    const { body } = await chat({ tool_choice: 'required', parallel_tool_calls: false, n: 6, temperature: 1, seed: 8 });
    expect(callsOf(body).map((calls) => calls.length)).toEqual(Array(6).fill(1));
  });

  it('streamed, and with stop strings (generated in chunks): the calls come whole, with finish_reason tool_calls', async () => {
    const res = await app().request('/v1/chat/completions', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'qwen-tiny', messages, tools: TOOLS, max_tokens: 160, tool_choice: 'required', stream: true, stop: ['never written'], temperature: 1, seed: 4 }),
    });
    const events = (await res.text())
      .split('\n')
      .filter((l) => l.startsWith('data: ') && l !== 'data: [DONE]')
      .map((l) => JSON.parse(l.slice(6)));
    const calls = events.flatMap((e: Json) => e.choices.flatMap((c: Json) => c.delta.tool_calls ?? []));
    expect(calls.length).toBeGreaterThan(0);
    for (const call of calls) expect(validate.get(call.function.name)?.(JSON.parse(call.function.arguments)), JSON.stringify(call)).toBe(true);
    expect(events.at(-1).choices[0].finish_reason).toBe('tool_calls');
  });

  it('a tool whose parameters are not a schema is refused, naming the field', async () => {
    const bad = [TOOLS[0], { type: 'function', function: { name: 'x', parameters: { type: 'object', properties: { n: { type: 'integr' } } } } }];
    const { status, body } = await chat({ tools: bad, tool_choice: 'required' });
    expect(status).toBe(400);
    expect(body.error.param).toBe('tools[1].function.parameters.properties.n.type');
  });
});
