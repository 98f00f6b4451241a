import { describe, expect, it } from 'vitest';
import { parseToolReply } from '../../../src/models/chat/tool-formats.js';

describe('parseToolReply: hermes (Qwen2.5, Qwen3)', () => {
  it('reads the calls after the reply text', () => {
    const text = 'I will guess.\n<tool_call>\n{"name": "guess", "arguments": {"word": "crane"}}\n</tool_call>\n<tool_call>\n{"name": "look", "arguments": {}}\n</tool_call>';
    expect(parseToolReply('hermes', text)).toEqual({
      kind: 'calls',
      content: 'I will guess.',
      calls: [
        { name: 'guess', arguments: { word: 'crane' } },
        { name: 'look', arguments: {} },
      ],
    });
  });

  it('reads a call whose closing tag was never written (stopped at end of turn) and reasoning before it', () => {
    expect(parseToolReply('hermes', '<think>\nhm\n</think>\n\n<tool_call>\n{"name": "guess", "arguments": {"word": "slate"}}')).toEqual({
      kind: 'calls',
      content: '<think>\nhm\n</think>',
      calls: [{ name: 'guess', arguments: { word: 'slate' } }],
    });
  });

  it('takes a reply without a call as text, and names what is wrong with a broken call', () => {
    expect(parseToolReply('hermes', ' Thought: hm\nAction: guess crane ')).toEqual({ kind: 'text', content: 'Thought: hm\nAction: guess crane' });
    const broken = parseToolReply('hermes', '<tool_call>\n{"name": "guess", "arguments": {"word": crane}}\n</tool_call>');
    expect(broken.kind).toBe('malformed');
    expect(broken.kind === 'malformed' && broken.error).toMatch(/^The tool call is not valid JSON/);
    const second = parseToolReply('hermes', '<tool_call>{"name": "a"}</tool_call><tool_call>{"arguments": {}}</tool_call>');
    expect(second).toEqual({ kind: 'malformed', content: '', error: 'Tool call 2: The tool call has no "name" string.' });
  });
});

describe('parseToolReply: llama3_json (Llama 3.1+)', () => {
  it('reads a whole-reply JSON call with "parameters", after an optional <|python_tag|>', () => {
    expect(parseToolReply('llama3_json', '{"name": "guess", "parameters": {"word": "crane"}}')).toEqual({ kind: 'calls', content: '', calls: [{ name: 'guess', arguments: { word: 'crane' } }] });
    expect(parseToolReply('llama3_json', '<|python_tag|>{"name": "look", "parameters": {}}')).toEqual({ kind: 'calls', content: '', calls: [{ name: 'look', arguments: {} }] });
  });

  it('reads several calls separated by semicolons', () => {
    expect(parseToolReply('llama3_json', '{"name": "a", "parameters": {"x": 1}}; {"name": "b", "parameters": {}}')).toEqual({
      kind: 'calls',
      content: '',
      calls: [
        { name: 'a', arguments: { x: 1 } },
        { name: 'b', arguments: {} },
      ],
    });
  });

  it('takes prose as text and a broken object as malformed', () => {
    expect(parseToolReply('llama3_json', 'I think the word is crane.')).toEqual({ kind: 'text', content: 'I think the word is crane.' });
    expect(parseToolReply('llama3_json', '{"name": "guess", "parameters": {"word": "cr')).toMatchObject({ kind: 'malformed', error: expect.stringMatching(/not valid JSON/) });
    expect(parseToolReply('llama3_json', '{"answer": 3}')).toEqual({ kind: 'malformed', content: '', error: 'The tool call has no "name" string.' });
  });
});

describe('parseToolReply: mistral', () => {
  it('reads the JSON list after [TOOL_CALLS] with its ids (v0.3)', () => {
    expect(parseToolReply('mistral', '[TOOL_CALLS] [{"name": "guess", "arguments": {"word": "crane"}, "id": "a1b2c3d4e"}]')).toEqual({
      kind: 'calls',
      content: '',
      calls: [{ name: 'guess', arguments: { word: 'crane' }, id: 'a1b2c3d4e' }],
    });
  });

  it('reads name[ARGS]{…} calls (newer tokenizers), with [CALL_ID] when present', () => {
    expect(parseToolReply('mistral', 'Let me see.[TOOL_CALLS]guess[ARGS]{"word": "crane"}[TOOL_CALLS]look[CALL_ID]x1y2z3w4v[ARGS]{}')).toEqual({
      kind: 'calls',
      content: 'Let me see.',
      calls: [
        { name: 'guess', arguments: { word: 'crane' } },
        { name: 'look', arguments: {}, id: 'x1y2z3w4v' },
      ],
    });
  });

  it('names an empty list, broken JSON and broken arguments', () => {
    expect(parseToolReply('mistral', '[TOOL_CALLS] []')).toEqual({ kind: 'malformed', content: '', error: 'The list after [TOOL_CALLS] holds no call.' });
    expect(parseToolReply('mistral', '[TOOL_CALLS] [{"name": "guess"')).toMatchObject({ kind: 'malformed', error: expect.stringMatching(/after \[TOOL_CALLS\] are not valid JSON/) });
    expect(parseToolReply('mistral', '[TOOL_CALLS]guess[ARGS]{"word": }')).toMatchObject({ kind: 'malformed', error: expect.stringMatching(/arguments of "guess" are not valid JSON/) });
    expect(parseToolReply('mistral', 'just words')).toEqual({ kind: 'text', content: 'just words' });
  });
});
