import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ToolSpec } from '../../src/core/tools.js';
import { OpenAIChatPolicy } from '../../src/policies/openai-chat.js';
import { AGENTGYM_ACKNOWLEDGEMENT, chatMessages, type TextActRequest } from '../../src/policies/text-policy.js';

// A chat-completions server answering each request with the next scripted assistant message.
let replies: Record<string, unknown>[] = [];
const bodies: Record<string, unknown>[] = [];
let server: Server;
let baseURL: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => {
      raw += c;
    });
    req.on('end', () => {
      bodies.push(JSON.parse(raw));
      const message = replies.shift() ?? { role: 'assistant', content: 'nothing scripted' };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'c', object: 'chat.completion', created: 0, model: 'm', choices: [{ index: 0, message, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  replies = [];
  bodies.length = 0;
});

const tools: ToolSpec[] = [{ name: 'guess', description: 'Guess a word.', parameters: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] } }];

const request: TextActRequest = {
  episodeId: 'e1',
  instruction: 'Guess the word.',
  turns: [
    { observationText: 'Start.', actionText: '{"name":"guess","arguments":{"word":"crane"}}' },
    { observationText: 'c r a n e: ⬜🟨⬜⬜🟩', actionText: 'I am not sure.' },
  ],
  observation: { text: 'Your reply calls no tool.' },
  seed: 3,
  tools,
};

const policy = () => new OpenAIChatPolicy({ name: 'local', baseURL, model: 'm', toolChoice: 'required' });

describe('OpenAIChatPolicy with tools', () => {
  it("sends the tools and replays a past call as tool_calls answered by a tool message, and returns the reply's calls", async () => {
    replies = [{ role: 'assistant', content: null, tool_calls: [{ id: 'x', type: 'function', function: { name: 'guess', arguments: '{"word": "slate"}' } }] }];
    const result = await policy().act(request);
    expect(result).toEqual({ text: '', usage: { promptTokens: 9, completionTokens: 3 }, toolCalls: [{ name: 'guess', arguments: { word: 'slate' } }] });
    expect(bodies[0]).toMatchObject({
      tools: [{ type: 'function', function: { name: 'guess', description: 'Guess a word.', parameters: tools[0]?.parameters } }],
      tool_choice: 'required',
      messages: [
        { role: 'user', content: 'Guess the word.' },
        { role: 'assistant', content: AGENTGYM_ACKNOWLEDGEMENT },
        { role: 'user', content: 'Start.' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call00000', type: 'function', function: { name: 'guess', arguments: '{"word":"crane"}' } }] },
        { role: 'tool', content: 'c r a n e: ⬜🟨⬜⬜🟩', tool_call_id: 'call00000' },
        { role: 'assistant', content: 'I am not sure.' },
        { role: 'user', content: 'Your reply calls no tool.' },
      ],
    });
  });

  it('reads a call a server without a tool parser left in the content, as JSON or a <tool_call> block', async () => {
    replies = [
      { role: 'assistant', content: '{"name": "guess", "arguments": {"word": "pious"}}' },
      { role: 'assistant', content: 'Hmm.\n<tool_call>\n{"name": "guess", "arguments": {"word": "adieu"}}\n</tool_call>' },
      { role: 'assistant', content: 'No call here.' },
    ];
    const p = policy();
    expect((await p.act(request)).toolCalls).toEqual([{ name: 'guess', arguments: { word: 'pious' } }]);
    expect((await p.act(request)).toolCalls).toEqual([{ name: 'guess', arguments: { word: 'adieu' } }]);
    expect(await p.act(request)).toMatchObject({ text: 'No call here.', toolCalls: [] });
  });

  it('names arguments that are not JSON', async () => {
    replies = [{ role: 'assistant', content: null, tool_calls: [{ id: 'x', type: 'function', function: { name: 'guess', arguments: '{"word": ' } }] }];
    expect(await policy().act(request)).toMatchObject({ toolCalls: [], toolCallError: 'The tool call "guess" has "arguments" that are not a JSON object.' });
  });

  it('sends no tools and reads no calls when the episode acts in text', async () => {
    const { tools: _, ...plain } = request;
    replies = [{ role: 'assistant', content: 'Action: guess crane' }];
    expect(await policy().act(plain)).toEqual({ text: 'Action: guess crane', usage: { promptTokens: 9, completionTokens: 3 } });
    expect(bodies[0]).not.toHaveProperty('tools');
    // Without tools, every past turn is plain text, canonical-looking or not.
    expect(chatMessages(plain)[3]).toEqual({ role: 'assistant', content: '{"name":"guess","arguments":{"word":"crane"}}' });
  });
});
