/**
 * Retries, back-off, ordering, the concurrency bound and heartbeats of the Tinker client, on a
 * simulated clock (nothing sleeps for real).
 */
import { describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../../src/core/clock.js';
import { backoffDelay } from '../../../src/policies/retry.js';
import { TinkerClient, TinkerModel } from '../../../src/engines/tinker/client.js';
import { TinkerRequestError, TinkerUnavailableError } from '../../../src/engines/tinker/errors.js';
import { drive, type FakeHandler, fakeFetch, json, tick } from './helpers/fake-fetch.js';

const forwardInput = { loss_fn: 'cross_entropy' as const, data: [{ model_input: { chunks: [{ type: 'encoded_text' as const, tokens: [1, 2] }] }, loss_fn_inputs: { target_tokens: { data: [2, 3], dtype: 'int64' as const, shape: [2] } } }] };
const forwardResult = { loss_fn_output_type: 'scalar', loss_fn_outputs: [{ logprobs: { data: [-1, -2], dtype: 'float32', shape: [2] } }], metrics: {} };
const RETRY = { maxRetries: 4, initialDelayMs: 1000, maxDelayMs: 30_000 };

describe('TinkerClient retries', () => {
  it('resends a training call with the same body and seq_id after a dropped connection, a 503 and a timeout, backing off on the clock', async () => {
    const clock = new SimulatedClock();
    const submittedAt: number[] = [];
    let submissions = 0;
    const { fetch, seen } = fakeFetch((request) => {
      if (request.path.endsWith('/forward_backward')) {
        submittedAt.push(clock.now());
        submissions++;
        if (submissions === 1) return 'drop';
        if (submissions === 2) return json(503, { detail: 'upstream restarting' });
        if (submissions === 3) return 'hang';
        return json(200, { request_id: '42' });
      }
      return json(200, forwardResult);
    });
    const client = new TinkerClient({ url: 'http://skyrl.test:8000', heartbeatIntervalMs: 1e9, requestTimeoutMs: 5000, retry: RETRY }, { fetch, clock, random: () => 0.5, env: {} });
    const model = new TinkerModel('m1', 'b');
    model.nextSeqId = 7;
    await drive(clock, client.forwardBackward(model, forwardInput), 5);
    const bodies = seen.filter((r) => r.path.endsWith('/forward_backward')).map((r) => r.rawBody);
    expect(bodies).toHaveLength(4);
    expect(new Set(bodies).size).toBe(1);
    expect(JSON.parse(bodies[0] as string).seq_id).toBe(7);
    // Delays: 1000·2^k·(0.5 + 0.5/2); the third attempt also waited out its 5 s timeout.
    const delays = [0, 1, 2].map((k) => backoffDelay(RETRY, k, () => 0.5));
    expect(delays).toEqual([750, 1500, 3000]);
    const gaps = submittedAt.slice(1).map((t, i) => t - (submittedAt[i] as number));
    expect(gaps[0]).toBeGreaterThanOrEqual(750);
    expect(gaps[0]).toBeLessThan(750 + 20);
    expect(gaps[1]).toBeGreaterThanOrEqual(1500);
    expect(gaps[1]).toBeLessThan(1500 + 20);
    expect(gaps[2]).toBeGreaterThanOrEqual(5000 + 3000);
    expect(gaps[2]).toBeLessThan(5000 + 3000 + 20);
    expect(model.nextSeqId).toBe(8);
  });

  it('honours a 429 retry-after longer than its own back-off', async () => {
    const clock = new SimulatedClock();
    const at: number[] = [];
    const { fetch } = fakeFetch((request) => {
      if (request.path.endsWith('/asample')) {
        at.push(clock.now());
        return at.length === 1 ? json(429, { detail: 'slow down' }, { 'retry-after': '7' }) : json(200, { request_id: '1' });
      }
      return json(200, { sequences: [], prompt_logprobs: null });
    });
    const client = new TinkerClient({ url: 'http://x.test', heartbeatIntervalMs: 1e9, retry: RETRY }, { fetch, clock, random: () => 0, env: {} });
    await drive(clock, client.sample({ source: { base_model: 'b' }, promptTokens: [1], numSamples: 1, samplingParams: { max_tokens: 1, temperature: 0, top_k: -1, top_p: 1 }, promptLogprobs: false }), 50);
    expect((at[1] as number) - (at[0] as number)).toBeGreaterThanOrEqual(7000);
    expect((at[1] as number) - (at[0] as number)).toBeLessThan(7100);
  });

  it('re-polls a future after connection loss and 5xx without resubmitting it, and gives up after the retry budget', async () => {
    const clock = new SimulatedClock();
    let polls = 0;
    const ok: FakeHandler = (request) => {
      if (request.path.endsWith('/forward')) return json(200, { request_id: '9' });
      polls++;
      return polls <= 2 ? (polls === 1 ? 'drop' : json(502, { detail: 'bad gateway' })) : json(200, forwardResult);
    };
    const a = fakeFetch(ok);
    const client = new TinkerClient({ url: 'http://x.test', heartbeatIntervalMs: 1e9, retry: RETRY }, { fetch: a.fetch, clock, random: () => 0, env: {} });
    await drive(clock, client.forward(new TinkerModel('m', 'b'), forwardInput), 50);
    expect(a.seen.filter((r) => r.path.endsWith('/forward'))).toHaveLength(1);
    expect(polls).toBe(3);

    const down = fakeFetch(() => 'drop');
    const dead = new TinkerClient({ url: 'http://x.test', heartbeatIntervalMs: 1e9, retry: { ...RETRY, maxRetries: 3 } }, { fetch: down.fetch, clock, random: () => 0, env: {} });
    const error = await drive(clock, dead.forward(new TinkerModel('m', 'b'), forwardInput), 100).catch((e) => e);
    expect(error).toBeInstanceOf(TinkerUnavailableError);
    expect(error.attempts).toBe(4);
    expect(error.message).toMatch(/^Tinker 'forward' at http:\/\/x\.test got no usable answer after 4 attempt\(s\): connection: fetch failed \(UND_ERR_SOCKET: other side closed\)$/);
  });

  it('never retries a final 4xx', async () => {
    const clock = new SimulatedClock();
    const { fetch, seen } = fakeFetch(() => json(409, { detail: 'Training request sequence number was reused' }));
    const client = new TinkerClient({ url: 'http://x.test', heartbeatIntervalMs: 1e9, retry: RETRY }, { fetch, clock, env: {} });
    const error = await drive(clock, client.forward(new TinkerModel('m', 'b'), forwardInput)).catch((e) => e);
    expect(error).toBeInstanceOf(TinkerRequestError);
    expect(error.status).toBe(409);
    expect(seen).toHaveLength(1);
  });

  it('submits training calls in seq_id order even when the first submission has to be retried', async () => {
    const clock = new SimulatedClock();
    let first = true;
    const { fetch, seen } = fakeFetch((request) => {
      if (request.path.endsWith('/retrieve_future')) return json(200, forwardResult);
      if (first) {
        first = false;
        return 'drop';
      }
      return json(200, { request_id: String((request.body as { seq_id: number }).seq_id) });
    });
    const client = new TinkerClient({ url: 'http://x.test', heartbeatIntervalMs: 1e9, retry: RETRY }, { fetch, clock, random: () => 0, env: {} });
    const model = new TinkerModel('m', 'b');
    await drive(
      clock,
      Promise.all([client.forwardBackward(model, forwardInput), client.forwardBackward(model, forwardInput), client.optimStep(model, { learning_rate: 1e-4 })]),
      20,
    );
    const submitted = seen.filter((r) => !r.path.endsWith('/retrieve_future')).map((r) => (r.body as { seq_id: number }).seq_id);
    expect(submitted).toEqual([1, 1, 2, 3]);
  });

  it('keeps at most `concurrency` calls in flight while heartbeats still go out', async () => {
    const clock = new SimulatedClock();
    const release: (() => void)[] = [];
    let outstanding = 0;
    let maxOutstanding = 0;
    let heartbeats = 0;
    const { fetch } = fakeFetch(async (request) => {
      if (request.path.endsWith('/create_session')) return json(200, { session_id: 's' });
      if (request.path.endsWith('/session_heartbeat')) {
        heartbeats++;
        return json(200, { type: 'session_heartbeat' });
      }
      if (request.path.endsWith('/asample')) {
        outstanding++;
        maxOutstanding = Math.max(maxOutstanding, outstanding);
        return json(200, { request_id: '1' });
      }
      await new Promise<void>((resolve) => release.push(resolve));
      outstanding--;
      return json(200, { sequences: [{ tokens: [1], logprobs: [-1], stop_reason: 'length' }], prompt_logprobs: null });
    });
    const client = new TinkerClient({ url: 'http://x.test', concurrency: 3, heartbeatIntervalMs: 10_000 }, { fetch, clock, env: {} });
    await drive(clock, client.createSession());
    const request = { source: { base_model: 'b' }, promptTokens: [1], numSamples: 1, samplingParams: { max_tokens: 1, temperature: 0, top_k: -1, top_p: 1 }, promptLogprobs: false };
    const all = Promise.all(Array.from({ length: 10 }, () => client.sample(request)));
    for (let i = 0; i < 20; i++) await tick();
    expect(client.inFlight).toBe(3);
    expect(outstanding).toBe(3);
    // The slots are all held by long polls; the heartbeat does not need one.
    clock.advance(10_000);
    for (let i = 0; i < 5; i++) await tick();
    expect(heartbeats).toBe(1);
    while (release.length > 0 || client.inFlight > 0) {
      release.shift()?.();
      await tick();
    }
    expect((await all).length).toBe(10);
    expect(maxOutstanding).toBe(3);
    await client.close();
    clock.advance(60_000);
    await tick();
    expect(heartbeats).toBe(1);
  });

  it('reports failed heartbeats with the time since the last good one, and keeps sending them', async () => {
    const clock = new SimulatedClock();
    const failures: number[] = [];
    let beat = 0;
    const { fetch } = fakeFetch((request) => {
      if (request.path.endsWith('/create_session')) return json(200, { session_id: 's', warning_message: 'quota nearly used' });
      beat++;
      return beat === 1 ? json(200, { type: 'session_heartbeat' }) : 'drop';
    });
    const messages: string[] = [];
    const client = new TinkerClient({ url: 'http://x.test', heartbeatIntervalMs: 10_000 }, {
      fetch,
      clock,
      env: {},
      onEvent: (e) => {
        if (e.kind === 'heartbeat-failed') failures.push(e.sinceLastOkMs);
        if (e.kind === 'server-message') messages.push(`${e.level}: ${e.message}`);
      },
    });
    await drive(clock, client.createSession());
    for (let i = 0; i < 3; i++) {
      clock.advance(10_000);
      for (let k = 0; k < 5; k++) await tick();
    }
    expect(beat).toBe(3);
    expect(failures).toEqual([10_000, 20_000]);
    expect(messages).toEqual(['warning: quota nearly used']);
    await client.close();
  });
});
