import { describe, expect, it } from 'vitest';
import { looksLikeToolCallText, parseToolCallText, toolCallText } from '../../src/envs/tools.js';

describe('tool call text', () => {
  it('writes compact JSON with name before arguments and reads it back', () => {
    const call = { name: 'guess', arguments: { word: 'crane', hard: true } };
    const text = toolCallText(call);
    expect(text).toBe('{"name":"guess","arguments":{"word":"crane","hard":true}}');
    expect(parseToolCallText(text)).toEqual({ ok: true, call });
  });

  it('accepts Llama-style "parameters" and a call without arguments', () => {
    expect(parseToolCallText(' {"name":"search","parameters":{"query":"x"}} ')).toEqual({ ok: true, call: { name: 'search', arguments: { query: 'x' } } });
    expect(parseToolCallText('{"name":"look"}')).toEqual({ ok: true, call: { name: 'look', arguments: {} } });
  });

  it('names what is wrong with a malformed call', () => {
    const notJson = parseToolCallText('{"name": "guess", ');
    expect(notJson.ok).toBe(false);
    expect(!notJson.ok && notJson.message).toMatch(/not valid JSON/);
    expect(parseToolCallText('[1,2]')).toEqual({ ok: false, message: expect.stringMatching(/JSON object/) });
    expect(parseToolCallText('{"arguments":{}}')).toEqual({ ok: false, message: expect.stringMatching(/no "name"/) });
    expect(parseToolCallText('{"name":"guess","arguments":"crane"}')).toEqual({ ok: false, message: expect.stringMatching(/"guess".*not a JSON object/) });
  });

  it('tells a call from free text', () => {
    expect(looksLikeToolCallText('{"name":"guess","arguments":{}}')).toBe(true);
    expect(looksLikeToolCallText('Action: guess crane')).toBe(false);
  });
});
