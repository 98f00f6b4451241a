/**
 * The bad-input suite of `turnwise serve`, over a real socket: each bad request gets its status and
 * an error naming the field at fault, the process's memory grows by a bounded amount, and the
 * server still answers afterwards. Errors answered before the body was read close the connection,
 * so a kept-alive client's next request does not fail with ECONNRESET.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selectBackend } from '../../src/backend/select.js';
import { type RunningServer, serveModel } from '../../src/serve/server.js';
import { writeTinyChatModel } from '../serve/tiny-chat-model.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-serve-bad-'));
let server: RunningServer;
let agent: http.Agent;

beforeAll(async () => {
  await selectBackend('wasm');
  const folder = await writeTinyChatModel(join(dir, 'smol'), 3);
  server = await serveModel(folder, { port: 0, backend: 'wasm' });
  agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
}, 60_000);
afterAll(async () => {
  agent?.destroy();
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Reply {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: { error?: { message: string; type: string; param: string | null; code: string | null } } & Record<string, unknown>;
}

/** One request on the shared keep-alive agent (one socket, reused while the server allows). */
function send(method: string, path: string, body?: string | Buffer): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { agent, host: '127.0.0.1', port: server.port, method, path, headers: body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text === '' ? {} : JSON.parse(text) });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const post = (path: string, body: unknown) => send('POST', path, typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body));
const messages = [{ role: 'user', content: 'hi' }];

/** Memory the process holds, in bytes. */
const resident = () => process.memoryUsage().rss;
const MAX_GROWTH = 64 * 2 ** 20;

async function expectStillAnswers(): Promise<void> {
  const models = await send('GET', '/v1/models');
  expect(models.status).toBe(200);
  const reply = await post('/v1/chat/completions', { model: 'smol', messages, max_tokens: 2 });
  expect(reply.status).toBe(200);
}

interface Case {
  readonly name: string;
  readonly path: string;
  readonly body: unknown;
  readonly status: number;
  readonly param: string | null;
  readonly code: string | null;
  readonly message: RegExp;
}

const chat = (extra: Record<string, unknown>) => ({ model: 'smol', messages, ...extra });
const CASES: Case[] = [
  { name: 'a decimal max_tokens', path: '/v1/chat/completions', body: chat({ max_tokens: 1.5 }), status: 400, param: 'max_tokens', code: 'invalid_type', message: /Invalid type for 'max_tokens': expected an integer, but got a decimal number instead/ },
  { name: 'a string max_tokens', path: '/v1/chat/completions', body: chat({ max_tokens: '10' }), status: 400, param: 'max_tokens', code: 'invalid_type', message: /expected an integer, but got a string/ },
  { name: 'temperature out of range', path: '/v1/chat/completions', body: chat({ temperature: 3 }), status: 400, param: 'temperature', code: 'invalid_value', message: /expected a value <= 2, but got 3/ },
  { name: 'no messages', path: '/v1/chat/completions', body: { model: 'smol' }, status: 400, param: 'messages', code: 'missing_required_parameter', message: /Missing required parameter: 'messages'/ },
  { name: 'messages not a list', path: '/v1/chat/completions', body: chat({ messages: 'hi' }), status: 400, param: 'messages', code: 'invalid_type', message: /expected an array, but got a string/ },
  { name: 'a number as content', path: '/v1/chat/completions', body: chat({ messages: [{ role: 'user', content: 5 }] }), status: 400, param: 'messages[0].content', code: 'invalid_type', message: /expected a string or an array of text parts, but got an integer/ },
  { name: 'an unknown role', path: '/v1/chat/completions', body: chat({ messages: [{ role: 'function', content: 'x' }] }), status: 400, param: 'messages[0].role', code: 'invalid_value', message: /expected one of "system", "developer", "user", "assistant", "tool"/ },
  { name: 'n = 0', path: '/v1/chat/completions', body: chat({ n: 0 }), status: 400, param: 'n', code: 'invalid_value', message: /expected a value >= 1/ },
  { name: 'n over the cap', path: '/v1/chat/completions', body: chat({ n: 129 }), status: 400, param: 'n', code: 'invalid_value', message: /expected a value <= 128/ },
  { name: 'stop of the wrong type', path: '/v1/chat/completions', body: chat({ stop: 5 }), status: 400, param: 'stop', code: 'invalid_type', message: /expected a string or an array of strings, but got an integer/ },
  { name: 'an empty stop string', path: '/v1/chat/completions', body: chat({ stop: [''] }), status: 400, param: 'stop[0]', code: 'invalid_value', message: /expected at least 1 character/ },
  { name: 'top_logprobs over 20', path: '/v1/chat/completions', body: chat({ logprobs: true, top_logprobs: 21 }), status: 400, param: 'top_logprobs', code: 'invalid_value', message: /expected a value <= 20/ },
  { name: 'a penalty turnwise does not apply', path: '/v1/chat/completions', body: chat({ frequency_penalty: 1 }), status: 400, param: 'frequency_penalty', code: 'invalid_value', message: /applies no penalties/ },
  { name: 'an unknown parameter', path: '/v1/chat/completions', body: chat({ functions: [] }), status: 400, param: 'functions', code: null, message: /Unrecognized request argument supplied: functions/ },
  { name: 'a 100k-entry guided_choice', path: '/v1/chat/completions', body: chat({ guided_choice: Array.from({ length: 100_000 }, () => 'a') }), status: 400, param: 'guided_choice', code: 'invalid_value', message: /expected at most 1024 items, but got 100000/ },
  { name: 'guided_choice over its byte cap', path: '/v1/chat/completions', body: chat({ guided_choice: Array.from({ length: 500 }, (_, i) => `${i}`.padEnd(200, 'x')) }), status: 400, param: 'guided_choice', code: 'invalid_value', message: /its strings hold 100000 bytes \(at most 65536\)/ },
  { name: 'too many messages', path: '/v1/chat/completions', body: chat({ messages: Array.from({ length: 1025 }, () => ({ role: 'user', content: 'x' })) }), status: 400, param: 'messages', code: 'request_too_large', message: /at most 1024 messages/ },
  { name: 'a prompt of the wrong type', path: '/v1/completions', body: { model: 'smol', prompt: 5 }, status: 400, param: 'prompt', code: 'invalid_type', message: /expected a string, an array of strings, an array of token ids or an array of token-id arrays, but got an integer/ },
  { name: 'a boolean legacy logprobs', path: '/v1/completions', body: { model: 'smol', prompt: 'x', logprobs: true }, status: 400, param: 'logprobs', code: 'invalid_type', message: /expected an integer, but got a boolean/ },
  { name: 'a token id outside the vocabulary', path: '/v1/completions', body: { model: 'smol', prompt: [1, 2, 123456] }, status: 400, param: 'prompt[2]', code: 'invalid_value', message: /outside the vocabulary/ },
  { name: 'too many prompts', path: '/v1/completions', body: { model: 'smol', prompt: Array.from({ length: 65 }, () => 'x') }, status: 400, param: 'prompt', code: 'invalid_value', message: /at most 64 prompts/ },
  { name: 'a prompt over the context', path: '/v1/completions', body: { model: 'smol', prompt: 'word '.repeat(400) }, status: 400, param: 'prompt', code: 'context_length_exceeded', message: /maximum context length is 192 tokens/ },
  { name: 'an unknown model', path: '/v1/completions', body: { model: 'gpt-4o', prompt: 'x' }, status: 404, param: 'model', code: 'model_not_found', message: /'gpt-4o' does not exist/ },
  { name: 'detokenize with a bad id', path: '/detokenize', body: { tokens: [1, 99999] }, status: 400, param: 'tokens[1]', code: 'invalid_value', message: /outside the vocabulary/ },
  { name: 'a body that is not JSON', path: '/v1/chat/completions', body: '{"model": ', status: 400, param: null, code: null, message: /could not parse the JSON body/ },
  { name: 'a JSON array body', path: '/v1/completions', body: '[1, 2]', status: 400, param: null, code: null, message: /must be a JSON object, but got an array/ },
];

describe('turnwise serve: bad input', () => {
  for (const c of CASES) {
    it(`refuses ${c.name}, naming the field, with bounded memory, and still answers`, async () => {
      const before = resident();
      const reply = await post(c.path, c.body);
      expect(reply.status).toBe(c.status);
      expect(reply.body.error).toMatchObject({ param: c.param, code: c.code });
      expect(reply.body.error?.message).toMatch(c.message);
      expect(resident() - before).toBeLessThan(MAX_GROWTH);
      await expectStillAnswers();
    });
  }

  it('refuses a body over the limit with 413 without reading it, closes the connection, and the next kept-alive request succeeds', async () => {
    const before = resident();
    const big = Buffer.alloc(8 * 2 ** 20, 0x61); // 8 MiB against the 1 MiB limit
    const reply = await post('/v1/chat/completions', big);
    expect(reply.status).toBe(413);
    expect(reply.body.error).toMatchObject({ code: 'request_too_large' });
    expect(reply.headers.connection).toBe('close');
    expect(resident() - before).toBeLessThan(MAX_GROWTH);
    // The same agent, one socket: without `Connection: close` it would reuse the poisoned one.
    await expectStillAnswers();
  });

  it('closes the connection after a 404 for a POST whose body was never read', async () => {
    const reply = await post('/v1/embeddings', { input: 'x'.repeat(100_000) });
    expect(reply.status).toBe(404);
    expect(reply.headers.connection).toBe('close');
    await expectStillAnswers();
  });

  it('keeps the connection alive after an error once the body was read', async () => {
    const reply = await post('/v1/chat/completions', chat({ max_tokens: 1.5 }));
    expect(reply.status).toBe(400);
    expect(reply.headers.connection).not.toBe('close');
  });
});
