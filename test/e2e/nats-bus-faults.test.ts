/**
 * Bad input on a real nats-server: malformed, oversized and wrongly-typed messages are refused with
 * a logged error naming the subject and never stop a subscriber; wrong credentials are refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidMessageError } from '../../src/core/errors.js';
import { RemoteError } from '../../src/bus/memory-bus.js';
import { NatsConnectError } from '../../src/bus/nats-connect.js';
import { NatsBus } from '../../src/bus/nats-bus.js';
import { runWorker } from '../../src/runtime/nats/worker.js';
import { subjects } from '../../src/runtime/wiring/message-flow.js';
import { serveSampler } from '../../src/runtime/wiring/sampler.js';
import { type NatsServerHandle, startNatsServer } from '../helpers/nats-server.js';

let server: NatsServerHandle;
const TOKEN = 's3cret-token';
beforeAll(async () => {
  server = await startNatsServer({ token: TOKEN, maxPayload: 4096 });
});
afterAll(async () => {
  await server?.stop();
});

function recorder() {
  const lines: string[] = [];
  return { lines, log: (line: string, error?: unknown) => lines.push(`${line}${error instanceof Error ? ` ${error.message}` : ''}`) };
}

describe('NatsBus with bad input', () => {
  it('logs an undecodable message with its subject and keeps delivering', async () => {
    const rec = recorder();
    const bus = await NatsBus.connect({ servers: server.url, token: TOKEN }, { log: rec.log });
    const seen: unknown[] = [];
    bus.subscribe('faults.weights', (payload) => {
      seen.push(payload);
    });
    await bus.connection.flush();
    bus.connection.publish('faults.weights', new Uint8Array([0xc1, 0xc1, 0xc1])); // 0xc1 is never valid msgpack
    bus.publish('faults.weights', { version: 2 });
    await bus.drain();
    expect(seen).toEqual([{ version: 2 }]);
    expect(rec.lines.join('\n')).toMatch(/'faults\.weights'.*cannot decode 3 bytes/);
    await bus.close();
  });

  it('refuses an incoming message over its limit, naming the subject, and keeps delivering', async () => {
    const rec = recorder();
    const bus = await NatsBus.connect({ servers: server.url, token: TOKEN }, { log: rec.log, maxMessageBytes: 256 });
    const seen: unknown[] = [];
    bus.subscribe('faults.big', (payload) => {
      seen.push(payload);
    });
    bus.publish('faults.big', { blob: new Uint8Array(1000) });
    bus.publish('faults.big', 'small');
    await bus.drain();
    expect(seen).toEqual(['small']);
    expect(rec.lines.join('\n')).toMatch(/'faults\.big'.*exceeds this bus's limit of 256 bytes/);
    await bus.close();
  });

  it("refuses to send a message over the server's max_payload with an error naming the subject", async () => {
    const bus = await NatsBus.connect({ servers: server.url, token: TOKEN });
    expect(bus.maxPayload).toBe(4096);
    expect(() => bus.publish('faults.huge', new Float32Array(2048))).toThrow(InvalidMessageError);
    expect(() => bus.publish('faults.huge', new Float32Array(2048))).toThrow(/'faults\.huge'.*exceeds the server's max_payload of 4096/);
    await expect(bus.request('faults.huge', new Float32Array(2048), { timeoutMs: 1000 })).rejects.toThrow(/max_payload/);
    await bus.close();
  });

  it('answers a wrongly-typed act request with a RemoteError naming the subject; the sampler adapter keeps serving', async () => {
    const rec = recorder();
    const bus = await NatsBus.connect({ servers: server.url, token: TOKEN }, { log: rec.log });
    const sent: string[] = [];
    // A stub sampler actor: records what reaches it (nothing should, for bad requests).
    const served = serveSampler(bus, 'faults', { send: (e) => sent.push(e.type), on: () => ({ unsubscribe() {} }) });
    const subject = subjects.act('faults');
    const error = await bus.request(subject, { contextTokens: [1, 2, 3] }, { timeoutMs: 5000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RemoteError);
    expect((error as RemoteError).remoteName).toBe('InvalidMessageError');
    expect((error as RemoteError).remoteMessage).toContain(`'${subject}'`);
    expect(rec.lines.join('\n')).toContain(`rejected request on '${subject}'`);
    // A wrongly-typed weights message is logged, never delivered to the actor; a good release is.
    bus.publish(subjects.weights('faults'), { version: 'three' });
    bus.publish(subjects.samplerRelease('faults'), { episodeIds: ['e1'] });
    await bus.drain();
    expect(sent).toEqual(['RELEASE']);
    expect(rec.lines.join('\n')).toContain(`handler for '${subjects.weights('faults')}' failed`);
    served.close();
    await bus.close();
  });
});

describe('NATS credentials', () => {
  it('refuses a connection with a wrong token, and a worker with it', async () => {
    await expect(NatsBus.connect({ servers: server.url, token: 'wrong', maxReconnectAttempts: 0 })).rejects.toThrow(NatsConnectError);
    await expect(NatsBus.connect({ servers: server.url, token: 'wrong' })).rejects.toThrow(/Authorization Violation/i);
    await expect(runWorker({ nats: { servers: server.url, token: 'wrong' }, runId: 'r1', roles: ['episodes'], log: () => {} })).rejects.toThrow(NatsConnectError);
    const ok = await NatsBus.connect({ servers: server.url, token: TOKEN });
    await ok.close();
  });
});
