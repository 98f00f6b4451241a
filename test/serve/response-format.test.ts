/**
 * Structured outputs in `turnwise serve`: `response_format` (`json_object`, `json_schema`) and
 * vLLM's `guided_json` keep a reply to the grammar of its schema, end to end on a tiny random model
 * (Qwen2.5's tokenizer): every reply parses and an independent validator (Ajv) accepts it; without
 * a format the same model writes no JSON. Schemas that are not schemas, and formats that cannot go
 * with a request's other parameters, are refused naming the parameter.
 */
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { tinyQwenApp } from './tiny-qwen-app.js';

const app = tinyQwenApp(22);

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field, as a client would
type Json = any;
const messages = [{ role: 'user', content: 'Rate the answer from 1 to 5.' }];
const chat = async (body: Record<string, unknown>): Promise<{ status: number; body: Json }> => {
  const res = await app().request('/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'qwen-tiny', messages, max_tokens: 120, temperature: 1, ...body }) });
  return { status: res.status, body: await res.json() };
};

const SCORE = { type: 'object', properties: { score: { type: 'integer' }, reason: { type: 'string', maxLength: 6 } }, required: ['score', 'reason'] };
const validateScore = new Ajv({ strict: false }).compile(SCORE);
const parses = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

describe('serve: structured outputs kept to their schema', () => {
  it('response_format json_schema: every reply is JSON the schema accepts', async () => {
    const { status, body } = await chat({ n: 6, seed: 3, response_format: { type: 'json_schema', json_schema: { name: 'score', schema: SCORE, strict: true } } });
    expect(status).toBe(200);
    for (const c of body.choices) {
      expect(c.finish_reason).toBe('stop');
      expect(validateScore(JSON.parse(c.message.content)), c.message.content).toBe(true);
    }
  });

  it("vLLM's guided_json (schema as JSON text), and json_object: replies parse, objects for json_object", async () => {
    const guided = await chat({ n: 4, seed: 4, guided_json: JSON.stringify(SCORE) });
    for (const c of guided.body.choices) expect(validateScore(JSON.parse(c.message.content)), c.message.content).toBe(true);
    const object = await chat({ n: 4, seed: 5, max_tokens: 200, response_format: { type: 'json_object' } });
    const finished = object.body.choices.filter((c: Json) => c.finish_reason === 'stop');
    expect(finished.length).toBeGreaterThan(0);
    for (const c of finished) {
      const value = JSON.parse(c.message.content);
      expect(typeof value === 'object' && value !== null && !Array.isArray(value), c.message.content).toBe(true);
    }
  });

  it('without a format the same model writes no JSON', async () => {
    const { body } = await chat({ n: 6, seed: 3, max_tokens: 40 });
    expect(body.choices.filter((c: Json) => parses(c.message.content))).toHaveLength(0);
  });

  it('refuses what it cannot honour, naming the parameter', async () => {
    const tools = [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } }];
    const cases: [Record<string, unknown>, string][] = [
      [{ response_format: { type: 'json_schema', json_schema: { name: 's', schema: { type: 'object', properties: { score: { type: 'int' } } } } } }, 'response_format.json_schema.schema.properties.score.type'],
      [{ response_format: { type: 'json_object' }, tools }, 'response_format'],
      [{ response_format: { type: 'json_object' }, guided_json: { type: 'object' } }, 'guided_json'],
      [{ guided_json: '{not json' }, 'guided_json'],
      [{ guided_json: { type: 'object' }, guided_choice: ['a', 'b'] }, 'guided_json'],
      [{ response_format: { type: 'yaml' } }, 'response_format.type'],
    ];
    for (const [body, param] of cases) {
      const res = await chat(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.param, JSON.stringify(body)).toBe(param);
    }
    // A format of text is free generation, as without one.
    expect((await chat({ response_format: { type: 'text' }, max_tokens: 4 })).status).toBe(200);
  });
});
