/**
 * What calls cost on the wire, measured with the client's own traffic count on SkyRL's recorded
 * answers (docs/train-on-gpus.md quotes these numbers): requests per call and JSON bytes.
 */
import { describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../../src/core/clock.js';
import type { EngineDatum } from '../../../src/engines/engine.js';
import { TinkerClient } from '../../../src/engines/tinker/client.js';
import { TinkerEngine } from '../../../src/engines/tinker/tinker-engine.js';
import { drive, fakeFetch } from './helpers/fake-fetch.js';
import { line, RECORDED_SERVER, replay } from './helpers/transcript.js';

type Wire = { data: number[] };

describe('Tinker call costs', () => {
  it('counts one submission and one long poll per queued call, and the JSON bytes of a step on the recorded data', async () => {
    // These calls are a subset of the recorded run, so their seq_ids differ from the recorded ones.
    const seq = ['body.seq_id'];
    const { handler } = replay([4, 3, 6, 7, 20, 21, 22, 23, 26, 27, 30, 31, 35, 36], { ignore: { 4: ['body.tags', 'body.sdk_version'], 20: seq, 22: seq, 26: seq, 30: seq } });
    const { fetch } = fakeFetch(handler);
    const clock = new SimulatedClock();
    const client = new TinkerClient({ url: RECORDED_SERVER, heartbeatIntervalMs: 1e9 }, { fetch, clock, env: {} });
    const engine = await drive(clock, TinkerEngine.open(client, { baseModel: 'BASE_MODEL_DIR', lora: { rank: 8, seed: 42 }, server: 'skyrl' }));
    const input = (n: number) =>
      ((line(n).request_body as { forward_input?: unknown; forward_backward_input?: unknown }).forward_input ?? (line(n).request_body as { forward_backward_input: unknown }).forward_backward_input) as {
        data: { model_input: { chunks: { tokens: number[] }[] }; loss_fn_inputs: Record<string, Wire> }[];
      };
    const data = (n: number): EngineDatum[] =>
      input(n).data.map((d) => ({
        inputTokens: Int32Array.from(d.model_input.chunks[0]?.tokens ?? []),
        targetTokens: Int32Array.from(d.loss_fn_inputs.target_tokens?.data ?? []),
        weights: Float32Array.from(d.loss_fn_inputs.weights?.data ?? []),
        ...(d.loss_fn_inputs.logprobs ? { samplingLogprobs: Float32Array.from(d.loss_fn_inputs.logprobs.data) } : {}),
        ...(d.loss_fn_inputs.advantages ? { advantages: Float32Array.from(d.loss_fn_inputs.advantages.data) } : {}),
      }));
    const before = client.traffic();
    await drive(clock, engine.forward(data(20), 'cross_entropy'));
    await drive(clock, engine.forwardBackward(data(22), 'importance_sampling'));
    await drive(clock, engine.optimStep({ learningRate: 0.01, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0, gradClipNorm: 0 }));
    const weights = await drive(clock, engine.saveWeightsForSampler('final'));
    const prompt = Int32Array.from(((line(35).request_body as { prompt: { chunks: { tokens: number[] }[] } }).prompt.chunks[0]?.tokens ?? []));
    await drive(clock, engine.sample(weights, [{ promptTokens: prompt, numSamples: 1, maxTokens: 8, temperature: 0, topP: 1, topK: -1, stopTokenIds: [], seed: 0, promptLogprobs: true }]));
    const after = client.traffic();
    const spent = (route: string) => ({
      requests: (after[route]?.requests ?? 0) - (before[route]?.requests ?? 0),
      bytesSent: (after[route]?.bytesSent ?? 0) - (before[route]?.bytesSent ?? 0),
      bytesReceived: (after[route]?.bytesReceived ?? 0) - (before[route]?.bytesReceived ?? 0),
    });
    // 3 sequences, 47 tokens in all; 5 queued calls = 5 submissions + 5 polls.
    expect(spent('retrieve_future').requests).toBe(5);
    for (const route of ['forward', 'forward_backward', 'optim_step', 'save_weights_for_sampler', 'asample']) expect(spent(route).requests).toBe(1);
    const table = Object.fromEntries(['forward', 'forward_backward', 'optim_step', 'save_weights_for_sampler', 'asample', 'retrieve_future'].map((r) => [r, spent(r)]));
    expect(table).toMatchInlineSnapshot(`
      {
        "asample": {
          "bytesReceived": 55,
          "bytesSent": 280,
          "requests": 1,
        },
        "forward": {
          "bytesReceived": 53,
          "bytesSent": 1108,
          "requests": 1,
        },
        "forward_backward": {
          "bytesReceived": 53,
          "bytesSent": 2479,
          "requests": 1,
        },
        "optim_step": {
          "bytesReceived": 53,
          "bytesSent": 130,
          "requests": 1,
        },
        "retrieve_future": {
          "bytesReceived": 4947,
          "bytesSent": 92,
          "requests": 5,
        },
        "save_weights_for_sampler": {
          "bytesReceived": 55,
          "bytesSent": 55,
          "requests": 1,
        },
      }
    `);
  });
});
