/**
 * TinkerEngine against SkyRL tx's recorded transcript: the engine must send what the recorder
 * sent (same routes, bodies and seq_ids, built here from typed arrays) and read what SkyRL
 * answered into the interface's typed arrays.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../../src/core/clock.js';
import type { EngineDatum, EngineLossName } from '../../../src/engines/engine.js';
import { TinkerClient } from '../../../src/engines/tinker/client.js';
import { TinkerEngine } from '../../../src/engines/tinker/tinker-engine.js';
import { drive, fakeFetch, json } from './helpers/fake-fetch.js';
import { skyrlArchive } from './helpers/tar.js';
import { FIXTURES, line, RECORDED_SERVER, replay } from './helpers/transcript.js';

type Body = Record<string, unknown>;
type WireTensorJson = { data: number[] };

/** The data of a recorded forward / forward_backward request as engine datums. */
function recordedData(n: number): { data: EngineDatum[]; loss: EngineLossName; config?: Record<string, number> } {
  const body = line(n).request_body as Body;
  const input = (body.forward_input ?? body.forward_backward_input) as { loss_fn: EngineLossName; loss_fn_config?: Record<string, number>; data: { model_input: { chunks: { tokens: number[] }[] }; loss_fn_inputs: Record<string, WireTensorJson> }[] };
  const data = input.data.map((d) => {
    const inputs = d.loss_fn_inputs;
    return {
      inputTokens: Int32Array.from(d.model_input.chunks.flatMap((c) => c.tokens)),
      targetTokens: Int32Array.from(inputs.target_tokens?.data ?? []),
      weights: Float32Array.from(inputs.weights?.data ?? []),
      ...(inputs.logprobs ? { samplingLogprobs: Float32Array.from(inputs.logprobs.data) } : {}),
      ...(inputs.advantages ? { advantages: Float32Array.from(inputs.advantages.data) } : {}),
    };
  });
  return { data, loss: input.loss_fn, ...(input.loss_fn_config ? { config: input.loss_fn_config } : {}) };
}

/** The recorded per-datum logprobs of a forward result. */
function recordedLogprobs(n: number): Float32Array[] {
  const outputs = (line(n).response_body as { loss_fn_outputs: { logprobs: WireTensorJson }[] }).loss_fn_outputs;
  return outputs.map((o) => Float32Array.from(o.logprobs.data));
}

const PROMPT = Int32Array.from(((line(35).request_body as Body).prompt as { chunks: { tokens: number[] }[] }).chunks[0]?.tokens ?? []);
const folders: string[] = [];
afterEach(async () => {
  for (const f of folders.splice(0)) await rm(f, { recursive: true, force: true });
});

describe('TinkerEngine replaying SkyRL tx', () => {
  it('sends the recorded requests and reads the recorded answers, from create_model to unload_model', async () => {
    const adapterConfig = await readFile(join(FIXTURES, 'sampler-adapter/adapter_config.json'));
    const adapterWeights = await readFile(join(FIXTURES, 'sampler-adapter/adapter_model.safetensors'));
    const archive = skyrlArchive([
      { path: 'adapter_config.json', data: adapterConfig },
      { path: 'adapter_model.safetensors', data: adapterWeights },
    ]);
    const lines = [4, 3, 6, 7, 10, 11, 13, 14, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 35, 36, 37, 38, 43, 44, 45, 46, 76, 77, 78];
    const { handler, played } = replay(lines, {
      // turnwise names itself in the session, where the recorder named the SDK.
      ignore: { 4: ['body.tags', 'body.sdk_version'] },
      overrides: { 33: () => new Response(archive, { status: 200, headers: { 'content-type': 'application/octet-stream' } }) },
    });
    const { fetch, seen } = fakeFetch(handler);
    const clock = new SimulatedClock();
    const client = new TinkerClient({ url: RECORDED_SERVER, heartbeatIntervalMs: 1e9 }, { fetch, clock, random: () => 0.5, env: {} });
    const engine = await drive(clock, TinkerEngine.open(client, { baseModel: 'BASE_MODEL_DIR', lora: { rank: 8, seed: 42 }, server: 'skyrl' }));
    expect(engine.modelId).toBe('model_0cd152a9');
    expect(engine.capabilities.reduction).toBe('sequence-mean');

    const init = await drive(clock, engine.saveWeightsForSampler('init'));
    expect(init.path).toBe('tinker://model_0cd152a9/init');

    for (const [request, answer] of [
      [13, 14],
      [16, 17],
    ] as const) {
      const { data, loss } = recordedData(request);
      const out = await drive(clock, request === 13 ? engine.forward(data, loss) : engine.forwardBackward(data, loss));
      expect(out.logprobs).toEqual(recordedLogprobs(answer));
      expect(out.metrics).toEqual({});
    }
    const adam = { learningRate: 0.01, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0, gradClipNorm: 0 };
    expect((await drive(clock, engine.optimStep(adam))).metrics['skyrl.ai/grad_norm']).toBeCloseTo(5.440444469451904, 12);
    expect((await drive(clock, engine.forward(recordedData(20).data, 'cross_entropy'))).logprobs).toEqual(recordedLogprobs(21));
    for (const [request, answer] of [
      [22, 23],
      [24, 25],
    ] as const) {
      const { data, loss, config } = recordedData(request);
      const out = await drive(clock, engine.forwardBackward(data, loss, config));
      // `+ 0` turns SkyRL's -0.0 of masked tokens into 0: the fake server re-encodes with JSON.stringify, which drops the sign.
      const recordedLoss = (line(answer).response_body as { loss_fn_outputs: { elementwise_loss: WireTensorJson }[] }).loss_fn_outputs.map((o) => Float32Array.from(o.elementwise_loss.data, (v) => v + 0));
      expect(out.elementwiseLoss).toEqual(recordedLoss);
    }
    expect((await drive(clock, engine.optimStep(adam))).metrics['skyrl.ai/grad_norm']).toBeCloseTo(4.657454013824463, 12);
    expect((await drive(clock, engine.forward(recordedData(28).data, 'cross_entropy'))).logprobs).toEqual(recordedLogprobs(29));
    const final = await drive(clock, engine.saveWeightsForSampler('final'));
    expect(final.path).toBe('tinker://model_0cd152a9/final');

    const parent = await mkdtemp(join(tmpdir(), 'tinker-replay-'));
    folders.push(parent);
    await drive(clock, engine.downloadAdapter(final, join(parent, 'adapter')));
    expect(new Uint8Array(await readFile(join(parent, 'adapter/adapter_model.safetensors')))).toEqual(new Uint8Array(adapterWeights));
    const config = JSON.parse(await readFile(join(parent, 'adapter/adapter_config.json'), 'utf8'));
    expect(config.target_modules).toEqual(['down_proj', 'gate_proj', 'k_proj', 'o_proj', 'q_proj', 'up_proj', 'v_proj']);
    expect(config.r).toBe(8);

    const greedy = { promptTokens: PROMPT, numSamples: 1, maxTokens: 8, temperature: 0, topP: 1, topK: -1, stopTokenIds: [], seed: 0, promptLogprobs: true };
    const [fromFinal] = await drive(clock, engine.sample(final, [greedy]));
    const recorded36 = line(36).response_body as { sequences: { tokens: number[]; logprobs: number[] }[]; prompt_logprobs: number[] };
    expect(Array.from(fromFinal?.sequences[0]?.tokens ?? [])).toEqual(recorded36.sequences[0]?.tokens);
    expect(fromFinal?.sequences[0]?.logprobs).toEqual(Float32Array.from(recorded36.sequences[0]?.logprobs ?? []));
    // SkyRL sends 15 prompt log-probs for 16 prompt tokens: turnwise puts NaN first.
    expect(fromFinal?.promptLogprobs?.length).toBe(16);
    expect(fromFinal?.promptLogprobs?.[0]).toBeNaN();
    expect(fromFinal?.promptLogprobs?.slice(1)).toEqual(Float32Array.from(recorded36.prompt_logprobs));

    const [two] = await drive(clock, engine.sample(final, [{ ...greedy, numSamples: 2, temperature: 1, seed: 1234 }]));
    expect(two?.sequences.map((s) => s.tokens.length)).toEqual([8, 8]);
    const [base] = await drive(clock, engine.sample('base', [greedy]));
    expect(Array.from(base?.sequences[0]?.tokens ?? [])).toEqual([33, 488, 488, 197, 403, 235, 293, 293]);
    const [stopped] = await drive(clock, engine.sample('base', [{ ...greedy, stopTokenIds: [2, 197] }]));
    expect(stopped?.sequences[0]?.stopReason).toBe('stop');
    expect(Array.from(stopped?.sequences[0]?.tokens ?? [])).toEqual([33, 488, 488, 197]);

    // close() unloads: SkyRL's long poll ended in 408 once (the engine was paused), then answered.
    await drive(clock, engine.close());
    expect(played()).toBe(lines.length);
    const seqIds = seen.map((r) => (r.body as Body | undefined)?.seq_id).filter((s) => s !== undefined);
    expect(seqIds).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it("reads base log-probs from the base model's prompt log-probs, in SkyRL's layout and the SDK's", async () => {
    const { data } = recordedData(13);
    const datum = data[0] as EngineDatum;
    const n = datum.inputTokens.length;
    // The base model's log-probs of datum 0's targets, as recorded by a forward with the untrained adapter.
    const expected = recordedLogprobs(14)[0] as Float32Array;
    for (const layout of ['skyrl', 'sdk'] as const) {
      const asked: Body[] = [];
      const { fetch } = fakeFetch((request) => {
        if (request.path.endsWith('/create_session')) return json(200, { session_id: 's1' });
        if (request.path.endsWith('/get_server_capabilities')) return json(200, { supported_models: [{ model_name: 'BASE_MODEL_DIR' }] });
        if (request.path.endsWith('/create_model')) return json(200, { model_id: 'm1', request_id: '1' });
        if (request.path.endsWith('/asample')) {
          asked.push(request.body as Body);
          return json(200, { request_id: '2' });
        }
        const id = (request.body as { request_id: string }).request_id;
        if (id === '1') return json(200, { model_id: 'm1' });
        const values = Array.from(expected);
        return json(200, { sequences: [{ tokens: [7], logprobs: [-1], stop_reason: 'length' }], prompt_logprobs: layout === 'skyrl' ? values : [null, ...values] });
      });
      const clock = new SimulatedClock();
      const client = new TinkerClient({ url: 'http://skyrl.test:8000', heartbeatIntervalMs: 1e9 }, { fetch, clock, env: {} });
      const engine = await drive(clock, TinkerEngine.open(client, { baseModel: 'BASE_MODEL_DIR', lora: { rank: 8 }, server: 'skyrl' }));
      const [logprobs] = await drive(clock, engine.baseLogprobs([datum]));
      expect(logprobs).toEqual(expected);
      const sent = asked[0] as { base_model: string; prompt: { chunks: { tokens: number[] }[] }; sampling_params: { max_tokens: number }; prompt_logprobs: boolean };
      expect(sent.base_model).toBe('BASE_MODEL_DIR');
      expect(sent.prompt_logprobs).toBe(true);
      expect(sent.sampling_params.max_tokens).toBe(1);
      // The whole sequence: the inputs and the last target.
      expect(sent.prompt.chunks[0]?.tokens).toEqual([...Array.from(datum.inputTokens), datum.targetTokens[n - 1]]);
    }
  });

  it('refuses base log-probs for targets that are not the inputs shifted by one, naming the datum', async () => {
    const { fetch } = fakeFetch((request) => {
      if (request.path.endsWith('/create_session')) return json(200, { session_id: 's1' });
      if (request.path.endsWith('/get_server_capabilities')) return json(200, { supported_models: [] });
      if (request.path.endsWith('/create_model')) return json(200, { model_id: 'm1', request_id: '1' });
      return json(200, { model_id: 'm1' });
    });
    const clock = new SimulatedClock();
    const engine = await drive(clock, TinkerEngine.open(new TinkerClient({ url: 'http://x.test', heartbeatIntervalMs: 1e9 }, { fetch, clock, env: {} }), { baseModel: 'b', lora: { rank: 1 } }));
    const datum = { inputTokens: Int32Array.of(1, 2, 3), targetTokens: Int32Array.of(2, 9, 4), weights: Float32Array.of(1, 1, 1) };
    await expect(engine.baseLogprobs([datum, datum])).rejects.toThrow(/data\[0\]\.targetTokens.*differs at 1/);
  });
});
