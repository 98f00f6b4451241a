/**
 * How the client reads every answer a future can give: SkyRL's (bare result, 408, 400 {detail},
 * 404) from the recorded transcript, and hosted Tinker's as its SDK reads them (try_again with
 * queue_state, complete_metadata, {error, category}, 408 with queue_state, 410).
 */
import { describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../../src/core/clock.js';
import { TinkerClient, TinkerModel } from '../../../src/engines/tinker/client.js';
import { TinkerFutureGoneError, TinkerRequestError } from '../../../src/engines/tinker/errors.js';
import type { TinkerEvent } from '../../../src/engines/tinker/requests.js';
import { drive, type FakeReply, fakeFetch, json } from './helpers/fake-fetch.js';
import { line, RECORDED_SERVER, replay } from './helpers/transcript.js';

const forwardInput = { loss_fn: 'cross_entropy' as const, data: [{ model_input: { chunks: [{ type: 'encoded_text' as const, tokens: [1, 2] }] }, loss_fn_inputs: { target_tokens: { data: [2, 3], dtype: 'int64' as const, shape: [2] } } }] };
const forwardResult = { loss_fn_output_type: 'scalar', loss_fn_outputs: [{ logprobs: { data: [-1, -2], dtype: 'float32', shape: [2] }, elementwise_loss: { data: [1, 2], dtype: 'float32', shape: [2] } }], metrics: {} };

/** A client whose server accepts a forward as request 7 and answers its polls from `polls` in turn. */
function hosted(polls: FakeReply[], events: TinkerEvent[] = []) {
  let poll = 0;
  const { fetch, seen } = fakeFetch((request) => {
    if (request.path.endsWith('/forward') || request.path.endsWith('/asample')) return json(200, { request_id: '7' });
    return polls[poll++] ?? json(500, { detail: 'no more scripted answers' });
  });
  const clock = new SimulatedClock();
  const client = new TinkerClient({ url: 'https://tinker.example', heartbeatIntervalMs: 1e9, tryAgainDelayMs: 100, retry: { maxRetries: 2, initialDelayMs: 100, maxDelayMs: 1000 } }, { fetch, clock, random: () => 0, env: {}, onEvent: (e) => events.push(e) });
  return { client, clock, seen, polled: () => poll };
}

describe('TinkerClient futures', () => {
  it('polls again after try_again (with queue_state), complete_metadata and a 408 carrying queue_state, then returns the result', async () => {
    const events: TinkerEvent[] = [];
    const { client, clock, seen } = hosted(
      [
        json(200, { type: 'try_again', request_id: '7', queue_state: 'paused_capacity', queue_state_reason: 'busy' }),
        json(200, { status: 'complete_metadata', response_payload_size: 123 }),
        json(408, { type: 'try_again', request_id: '7', queue_state: 'paused_rate_limit' }),
        json(200, forwardResult),
      ],
      events,
    );
    const out = await drive(clock, client.forward(new TinkerModel('m', 'b'), forwardInput));
    expect(out.loss_fn_outputs[0]?.logprobs?.data).toEqual([-1, -2]);
    const polls = seen.filter((r) => r.path.endsWith('/retrieve_future'));
    expect(polls.map((r) => r.body)).toEqual(Array(4).fill({ request_id: '7' }));
    expect(events.filter((e) => e.kind === 'pending').map((e) => (e.kind === 'pending' ? [e.reason, e.queueState] : []))).toEqual([
      ['try_again', 'paused_capacity'],
      ['complete_metadata', undefined],
      ['408', 'paused_rate_limit'],
    ]);
  });

  it('throws a user-category {error, category} failure at once, naming the call, server and message, and does not resubmit', async () => {
    const { client, clock, seen } = hosted([json(200, { error: 'loss_fn ppo needs advantages', category: 'user' })]);
    const error = await drive(clock, client.sample({ source: { base_model: 'b' }, promptTokens: [1], numSamples: 1, samplingParams: { max_tokens: 1, temperature: 0, top_k: -1, top_p: 1 }, promptLogprobs: false })).catch((e) => e);
    expect(error).toBeInstanceOf(TinkerRequestError);
    expect(error.category).toBe('user');
    expect(error.message).toBe("Tinker 'asample' at https://tinker.example (request 7) failed (HTTP 200, user error): loss_fn ppo needs advantages");
    expect(seen.filter((r) => r.path.endsWith('/asample'))).toHaveLength(1);
    expect(seen.filter((r) => r.path.endsWith('/retrieve_future'))).toHaveLength(1);
  });

  it('reports a server-category failure with its category', async () => {
    const { client, clock } = hosted([json(200, { error: 'CUDA out of memory', category: 'server' })]);
    const error = await drive(clock, client.forward(new TinkerModel('m', 'b'), forwardInput)).catch((e) => e);
    expect(error).toBeInstanceOf(TinkerRequestError);
    expect(error.category).toBe('server');
  });

  it('treats 410 as a future that is gone, with a clear error', async () => {
    const { client, clock } = hosted([json(410, { detail: 'promise expired' })]);
    const error = await drive(clock, client.forward(new TinkerModel('m', 'b'), forwardInput)).catch((e) => e);
    expect(error).toBeInstanceOf(TinkerFutureGoneError);
    expect(error.message).toMatch(/'forward' at https:\/\/tinker\.example \(request 7\).*HTTP 410: promise expired/);
  });

  it('retries a bare 400 (a proxy glitch) but not a 400 with a detail', async () => {
    const { client, clock, polled } = hosted([new Response('', { status: 400 }), json(200, forwardResult)]);
    await drive(clock, client.forward(new TinkerModel('m', 'b'), forwardInput));
    expect(polled()).toBe(2);
  });

  it("reads SkyRL's answers: 404 for an unknown future, 400 {detail} for a failed one, 422 details naming the field", async () => {
    // Lines 60-61: create_model with a rank above the server's maximum fails in its future.
    const rank = replay([60, 61]);
    const a = fakeFetch(rank.handler);
    const clock = new SimulatedClock();
    const c1 = new TinkerClient({ url: RECORDED_SERVER, heartbeatIntervalMs: 1e9 }, { fetch: a.fetch, clock, env: {} });
    (c1 as unknown as { sessionId: string }).sessionId = 'session_058f2bf4';
    const failed = await drive(clock, c1.createModel('BASE_MODEL_DIR', { rank: 16, seed: 42 })).catch((e) => e);
    expect(failed).toBeInstanceOf(TinkerRequestError);
    expect(failed.message).toBe(`Tinker 'create_model' at ${RECORDED_SERVER} (request 21) failed (HTTP 400, user error): LoRA rank 16 must be between 1 and 8`);
    // Line 63: an unknown loss is a 422 at submission; the message names the field.
    const loss = replay([63]);
    const b = fakeFetch(loss.handler);
    const c2 = new TinkerClient({ url: RECORDED_SERVER, heartbeatIntervalMs: 1e9 }, { fetch: b.fetch, clock, env: {} });
    const model = new TinkerModel('model_0cd152a9', 'BASE_MODEL_DIR');
    model.nextSeqId = 13;
    const body = line(63).request_body as { forward_backward_input: typeof forwardInput };
    const invalid = await drive(clock, c2.forwardBackward(model, body.forward_backward_input)).catch((e) => e);
    expect(invalid).toBeInstanceOf(TinkerRequestError);
    expect(invalid.status).toBe(422);
    expect(invalid.detail).toMatch(/^forward_backward_input\.loss_fn: Input should be 'cross_entropy'/);
    // Line 55: an unknown request id.
    const gone = fakeFetch(() => json(line(55).status, line(55).response_body));
    const c3 = new TinkerClient({ url: RECORDED_SERVER, heartbeatIntervalMs: 1e9 }, { fetch: gone.fetch, clock, env: {} });
    const lost = (await drive(clock, (c3 as unknown as { requests: { awaitFuture(c: string, id: string): Promise<unknown> } }).requests.awaitFuture('forward', '999999')).catch((e: unknown) => e)) as Error;
    expect(lost).toBeInstanceOf(TinkerFutureGoneError);
    expect(lost.message).toMatch(/Future not found/);
  });

  it('gives up on a future after futureTimeoutMs of pending answers, saying how long it waited', async () => {
    const polls = Array.from({ length: 50 }, () => json(200, { type: 'try_again', request_id: '7', queue_state: 'active' }));
    const { fetch } = fakeFetch((r) => (r.path.endsWith('/forward') ? json(200, { request_id: '7' }) : (polls.shift() ?? json(500, {}))));
    const clock = new SimulatedClock();
    const client = new TinkerClient({ url: 'https://tinker.example', heartbeatIntervalMs: 1e9, tryAgainDelayMs: 100, futureTimeoutMs: 1000 }, { fetch, clock, env: {} });
    const error = await drive(clock, client.forward(new TinkerModel('m', 'b'), forwardInput)).catch((e) => e);
    expect(error.name).toBe('TinkerUnavailableError');
    expect(error.message).toMatch(/no result within futureTimeoutMs = 1000 ms \(last answer: try_again\)/);
    expect(clock.now()).toBeGreaterThanOrEqual(1000);
    expect(clock.now()).toBeLessThan(1200);
  });
});
