/**
 * The API key: sent as `X-API-Key` to the server's origin only, and never in an error, a log
 * event or a file, even when the server echoes it back.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../../src/core/clock.js';
import { InvalidConfigError } from '../../../src/core/errors.js';
import { TinkerClient, TinkerModel } from '../../../src/engines/tinker/client.js';
import { TinkerEngine } from '../../../src/engines/tinker/tinker-engine.js';
import { drive, fakeFetch, json, tick } from './helpers/fake-fetch.js';
import { skyrlArchive } from './helpers/tar.js';
import { FIXTURES } from './helpers/transcript.js';

const KEY = 'tml-TOP-SECRET-4242';
const env = { TINKER_API_KEY: KEY };
const forwardInput = { loss_fn: 'cross_entropy' as const, data: [{ model_input: { chunks: [{ type: 'encoded_text' as const, tokens: [1] }] }, loss_fn_inputs: { target_tokens: { data: [2], dtype: 'int64' as const, shape: [1] } } }] };

function everythingSaid(error: unknown, events: unknown[]): string {
  return [String(error), (error as Error).message, (error as Error).stack ?? '', inspect(error, { depth: 5 }), JSON.stringify(error), JSON.stringify(events), inspect(events, { depth: 5 })].join('\n');
}

describe('TinkerClient and the API key', () => {
  it('sends the key in X-API-Key to the server and keeps it out of errors and log events when the server echoes it', async () => {
    const events: unknown[] = [];
    const clock = new SimulatedClock();
    let submits = 0;
    const { fetch, seen } = fakeFetch((request) => {
      if (request.path.endsWith('/forward')) {
        submits++;
        // A transient failure echoing the key (logged as a retry event), then a final one.
        return submits === 1 ? json(503, { detail: `overloaded for key ${KEY}` }) : json(401, { detail: `invalid API key ${KEY}` });
      }
      return json(500, {});
    });
    const client = new TinkerClient({ url: 'https://tinker.example/services/prod', apiKeyEnv: 'TINKER_API_KEY', heartbeatIntervalMs: 1e9 }, { fetch, clock, env, random: () => 0, onEvent: (e) => events.push(e) });
    const error = await drive(clock, client.forward(new TinkerModel('m', 'b'), forwardInput)).catch((e) => e);
    expect(seen.map((r) => r.headers['x-api-key'])).toEqual([KEY, KEY]);
    expect(seen[0]?.url).toBe('https://tinker.example/services/prod/api/v1/forward');
    expect(events.length).toBeGreaterThan(0);
    const said = everythingSaid(error, events);
    expect(said).toContain('invalid API key <redacted>');
    expect(said).toContain('overloaded for key <redacted>');
    expect(said).not.toContain(KEY);
  });

  it('keeps the key out of connection errors and heartbeat failures', async () => {
    const events: unknown[] = [];
    const clock = new SimulatedClock();
    const { fetch } = fakeFetch((request) => (request.path.endsWith('/create_session') ? json(200, { session_id: 's' }) : 'drop'));
    const client = new TinkerClient({ url: 'https://tinker.example', apiKeyEnv: 'TINKER_API_KEY', heartbeatIntervalMs: 1000, retry: { maxRetries: 1 } }, { fetch, clock, env, random: () => 0, onEvent: (e) => events.push(e) });
    await drive(clock, client.createSession());
    const error = await drive(clock, client.forward(new TinkerModel('m', 'b'), forwardInput)).catch((e) => e);
    clock.advance(5000);
    for (let i = 0; i < 5; i++) await tick();
    await client.close();
    expect(events.some((e) => (e as { kind: string }).kind === 'heartbeat-failed')).toBe(true);
    expect(everythingSaid(error, events)).not.toContain(KEY);
  });

  it('sends no key to a download URL on another host, and writes no key into the adapter folder', async () => {
    const archive = skyrlArchive([
      { path: 'adapter_config.json', data: await readFile(join(FIXTURES, 'sampler-adapter/adapter_config.json')) },
      { path: 'adapter_model.safetensors', data: await readFile(join(FIXTURES, 'sampler-adapter/adapter_model.safetensors')) },
    ]);
    const clock = new SimulatedClock();
    const { fetch, seen } = fakeFetch((request) => {
      if (request.path.endsWith('/create_session')) return json(200, { session_id: 's' });
      if (request.path.endsWith('/get_server_capabilities')) return json(200, { supported_models: [{ model_name: 'Qwen/Qwen3-8B' }] });
      if (request.path.endsWith('/create_model')) return json(200, { model_id: 'run1', request_id: '1' });
      if (request.path.endsWith('/retrieve_future')) return json(200, { model_id: 'run1' });
      if (request.path.endsWith('/archive')) return new Response(null, { status: 302, headers: { location: 'https://storage.example/bucket/ckpt.tar.gz?sig=abc' } });
      if (request.origin === 'https://storage.example') return new Response(archive, { status: 200 });
      return json(404, { detail: 'no' });
    });
    const client = new TinkerClient({ url: 'https://tinker.example', apiKeyEnv: 'TINKER_API_KEY', heartbeatIntervalMs: 1e9 }, { fetch, clock, env });
    const engine = await drive(clock, TinkerEngine.open(client, { baseModel: 'Qwen/Qwen3-8B', lora: { rank: 8 } }));
    const parent = await mkdtemp(join(tmpdir(), 'tinker-key-'));
    try {
      await drive(clock, engine.downloadAdapter({ path: 'tinker://run1/sampler_weights/step-3' }, join(parent, 'adapter')));
      const archiveRequest = seen.find((r) => r.path.endsWith('/archive'));
      // Hosted Tinker's checkpoint id keeps its `sampler_weights/` segment.
      expect(archiveRequest?.path).toBe('/api/v1/training_runs/run1/checkpoints/sampler_weights/step-3/archive');
      expect(archiveRequest?.headers['x-api-key']).toBe(KEY);
      const download = seen.find((r) => r.origin === 'https://storage.example');
      expect(download?.headers['x-api-key']).toBeUndefined();
      for (const name of await readdir(join(parent, 'adapter'))) expect((await readFile(join(parent, 'adapter', name))).includes(KEY)).toBe(false);
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  });

  it('refuses a missing key variable or credentials in the URL, naming the setting and never a value', () => {
    expect(() => new TinkerClient({ url: 'https://tinker.example', apiKeyEnv: 'TINKER_API_KEY' }, { env: {} })).toThrow(new InvalidConfigError('model.tinker.apiKeyEnv', 'environment variable TINKER_API_KEY is not set'));
    const inUrl = (() => {
      try {
        new TinkerClient({ url: `https://user:${KEY}@tinker.example` }, { env: {} });
      } catch (e) {
        return e as Error;
      }
    })();
    expect(inUrl).toBeInstanceOf(InvalidConfigError);
    expect(inUrl?.message).toMatch(/model\.tinker\.url/);
    expect(inUrl?.message).not.toContain(KEY);
    expect(() => new TinkerClient({ url: 'https://tinker.example', apiKeyEnv: KEY }, { env: {} })).toThrow(/apiKeyEnv.*NAME of an environment variable/);
  });
});
