import { describe, expect, it } from 'vitest';
import { type ToolSpec, checkToolCall, looksLikeToolCallText, parseToolCallText, toolCallText } from '../../src/envs/tools.js';

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

describe('checkToolCall', () => {
  const tools: ToolSpec[] = [
    { name: 'guess', description: 'Guess a word.', parameters: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] } },
    { name: 'move', description: 'Move.', parameters: { type: 'object', properties: { dir: { type: 'string', enum: ['up', 'down'] }, steps: { type: 'integer' } }, required: ['dir'] } },
  ];

  it('accepts a call that matches its declaration (undeclared arguments allowed)', () => {
    expect(checkToolCall({ name: 'guess', arguments: { word: 'crane', why: 'x' } }, tools)).toBeNull();
    expect(checkToolCall({ name: 'move', arguments: { dir: 'up', steps: 2 } }, tools)).toBeNull();
  });

  it('names the unknown tool, the missing argument, the wrong type and the value outside the enum', () => {
    expect(checkToolCall({ name: 'jump', arguments: {} }, tools)).toBe('There is no tool "jump"; the tools are "guess", "move".');
    expect(checkToolCall({ name: 'guess', arguments: {} }, tools)).toBe('The tool "guess" needs the argument "word".');
    expect(checkToolCall({ name: 'guess', arguments: { word: 5 } }, tools)).toBe('The argument "word" of "guess" must be of type string, got number.');
    expect(checkToolCall({ name: 'move', arguments: { dir: 'up', steps: 1.5 } }, tools)).toMatch(/"steps" of "move" must be of type integer/);
    expect(checkToolCall({ name: 'move', arguments: { dir: 'left' } }, tools)).toBe('The argument "dir" of "move" must be one of "up", "down".');
  });
});
