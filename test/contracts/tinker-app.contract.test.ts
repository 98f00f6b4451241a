/**
 * Contract: the Tinker app in-process (Hono's `app.request`, no socket), in the official SDK's
 * dialect: failures as 200 `{error, category}`, the long poll's 408, the SDK's protobuf bodies
 * (zstd-compressed as the SDK compresses them) and protobuf results, idempotent retries, heartbeats
 * that unload a silent session's models, and save_weights / load_weights resuming a run exactly.
 */
import { init as initZstd, compress as zstdCompress } from '@bokuweb/zstd-wasm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalLoraBase } from '../../src/engines/local/lora-base.js';
import { decodeForwardBackwardOutput, decodeSampleResponse, encodeForwardBackwardRequest } from '../../src/engines/tinker/proto/codec.js';
import { type Datum, type ForwardBackwardRequest, PROTOBUF_CONTENT_TYPE } from '../../src/engines/tinker/wire.js';
import { createTinkerApp, type TinkerApp } from '../../src/serve/tinker/app.js';

const folder = new URL('../fixtures/tinker-skyrl/model', import.meta.url).pathname;
const S1 = [1, 354, 201, 409, 331, 288, 316, 356, 317, 33, 2, 201, 1, 282, 385, 201, 276, 292, 453, 263, 288, 472, 353, 2, 201];
let base: LocalLoraBase;
let tinker: TinkerApp;
let clock = 1_000_000;

beforeAll(async () => {
  await initZstd();
  base = await LocalLoraBase.load(folder, { name: 'tiny-qwen3', maxLoraRank: 8 });
  tinker = createTinkerApp(base, { retrieveTimeoutMs: 300, sessionTimeoutMs: 60_000, now: () => clock });
}, 60_000);

afterAll(async () => {
  await tinker.close();
  base.close();
});

async function call(path: string, body?: unknown, headers: Record<string, string> = {}) {
  const init: RequestInit = body === undefined ? {} : { method: 'POST', body: body instanceof Uint8Array ? body : JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } };
  const res = await tinker.app.request(`/api/v1/${path}`, init);
  const type = res.headers.get('content-type') ?? '';
  return { status: res.status, type, body: (type.includes('json') ? await res.json() : new Uint8Array(await res.arrayBuffer())) as never };
}
async function result(requestId: string, headers: Record<string, string> = {}) {
  for (;;) {
    const r = await call('retrieve_future', { request_id: requestId }, headers);
    if (r.status !== 408) return r;
  }
}
async function newModel(rank = 4) {
  const { body: session } = await call('create_session', { tags: [], user_metadata: null, sdk_version: '0.25.0' });
  const { body: created } = await call('create_model', { session_id: (session as { session_id: string }).session_id, model_seq_id: 0, base_model: 'tiny-qwen3', lora_config: { rank, seed: 7 } });
  const r = await result((created as { request_id: string }).request_id);
  expect(r.status).toBe(200);
  return { sessionId: (session as { session_id: string }).session_id, modelId: (created as { model_id: string }).model_id };
}
const datum = (tokens: number[], extra: Record<string, number[]> = {}): Datum => ({
  model_input: { chunks: [{ type: 'encoded_text', tokens: tokens.slice(0, -1) }] },
  loss_fn_inputs: { target_tokens: { data: tokens.slice(1), dtype: 'int64' }, ...Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, { data: v, dtype: 'float32' as const }])) },
});

describe('the Tinker app in the SDK’s dialect', () => {
  it('answers a failed future with 200 {error, category} and an unknown one with 404', async () => {
    const { modelId } = await newModel();
    const { body } = await call('forward', { model_id: modelId, seq_id: 1, forward_input: { loss_fn: 'dro', data: [datum(S1)] } });
    const failed = await result((body as { request_id: string }).request_id);
    expect(failed.status).toBe(200);
    expect(failed.body).toEqual({ error: expect.stringMatching(/loss 'dro' is not supported/), category: 'user' });
    expect((await call('retrieve_future', { request_id: 'nope' })).status).toBe(404);
    // ids start at the start time in µs: one from before this run is gone (410: re-send), one never given is unknown
    const id = Number((body as { request_id: string }).request_id);
    expect(String(id)).toHaveLength(16);
    expect(await call('retrieve_future', { request_id: String(id - 1e9) })).toMatchObject({ status: 410, body: { detail: expect.stringMatching(/send the request again/) } });
    expect((await call('retrieve_future', { request_id: String(id + 1e6) })).status).toBe(404);
  });

  it('holds retrieve_future until its bound, answers 408 with the queue state, then the result', async () => {
    const { modelId } = await newModel();
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    tinker.state.futures.submit(modelId, async () => {
      await gate;
      return { kind: 'json', body: {} };
    });
    const { body } = await call('forward', { model_id: modelId, forward_input: { loss_fn: 'cross_entropy', data: [datum(S1)] } });
    const id = (body as { request_id: string }).request_id;
    const timedOut = await call('retrieve_future', { request_id: id });
    expect(timedOut).toMatchObject({ status: 408, body: { detail: 'Timeout waiting for result', queue_state: 'active' } });
    release();
    const done = await call('retrieve_future', { request_id: id });
    expect(done.status).toBe(200);
    expect((done.body as { loss_fn_outputs: unknown[] }).loss_fn_outputs).toHaveLength(1);
  });

  it('takes the SDK’s protobuf forward_backward (zstd or not) and answers protobuf when asked, equal to JSON', async () => {
    const { modelId } = await newModel();
    const lp = Array(S1.length - 1).fill(-5);
    const request: ForwardBackwardRequest = { model_id: modelId, seq_id: 1, forward_backward_input: { loss_fn: 'ppo', loss_fn_config: { clip_low_threshold: 0.9, clip_high_threshold: 1.1 }, data: [datum(S1, { logprobs: lp, advantages: lp.map((_, i) => (i % 3) - 1), weights: lp.map((_, i) => (i > 10 ? 1 : 0)) })] } };
    const headers = { 'content-type': PROTOBUF_CONTENT_TYPE };
    // forward_only: the SDK's forward
    const fwd = await call('forward_backward', zstdCompress(encodeForwardBackwardRequest(request, true), 3), { ...headers, 'content-encoding': 'zstd' });
    expect(fwd.status).toBe(200);
    const asProto = await result((fwd.body as { request_id: string }).request_id, { accept: PROTOBUF_CONTENT_TYPE });
    expect(asProto.type).toContain(PROTOBUF_CONTENT_TYPE);
    const decoded = decodeForwardBackwardOutput(asProto.body);
    const asJson = await result((fwd.body as { request_id: string }).request_id);
    // through JSON, -0 (a masked token's loss) reads back as 0
    expect(JSON.parse(JSON.stringify(decoded.loss_fn_outputs))).toEqual((asJson.body as { loss_fn_outputs: unknown }).loss_fn_outputs);
    // the same seq_id and body again: the original future; another body: 409
    const again = await call('forward_backward', encodeForwardBackwardRequest(request, true), headers);
    expect((again.body as { request_id: string }).request_id).toBe((fwd.body as { request_id: string }).request_id);
    expect((await call('forward_backward', encodeForwardBackwardRequest(request, false), headers)).status).toBe(409);
    // a real backward through protobuf moves the weights at the optimizer step
    const fb = await call('forward_backward', encodeForwardBackwardRequest({ ...request, seq_id: 2 }, false), headers);
    expect((await result((fb.body as { request_id: string }).request_id)).status).toBe(200);
    const step = await call('optim_step', { model_id: modelId, seq_id: 3, adam_params: { learning_rate: 0.01 } });
    const metrics = (await result((step.body as { request_id: string }).request_id)).body as { metrics: Record<string, number> };
    expect(metrics.metrics['turnwise/grad_norm']).toBeGreaterThan(0);
    const after = await call('forward', { model_id: modelId, seq_id: 4, forward_input: { loss_fn: 'cross_entropy', data: [datum(S1)] } });
    const moved = (await result((after.body as { request_id: string }).request_id)).body as { loss_fn_outputs: Array<{ logprobs: { data: number[] } }> };
    const before = decoded.loss_fn_outputs[0]!.logprobs!.data;
    expect(moved.loss_fn_outputs[0]!.logprobs.data.some((x, i) => Math.abs(x - (before[i] as number)) > 1e-4)).toBe(true);
  });

  it('answers sampling in protobuf with prompt logprobs one per token (NaN first), and in JSON with a leading null', async () => {
    const prompt = S1.slice(0, 16);
    const req = { prompt: { chunks: [{ type: 'encoded_text', tokens: prompt }] }, base_model: 'tiny-qwen3', num_samples: 2, prompt_logprobs: true, sampling_params: { max_tokens: 6, temperature: 1, seed: 11, stop: [2] } };
    const { body } = await call('asample', req);
    const id = (body as { request_id: string }).request_id;
    const proto = decodeSampleResponse((await result(id, { accept: PROTOBUF_CONTENT_TYPE })).body);
    const json = (await result(id)).body as { sequences: Array<{ tokens: number[] }>; prompt_logprobs: Array<number | null> };
    expect(proto.promptLogprobs).toHaveLength(16);
    expect(Number.isNaN(proto.promptLogprobs![0]!)).toBe(true);
    expect(json.prompt_logprobs[0]).toBeNull();
    expect(json.prompt_logprobs.slice(1)).toEqual(Array.from(proto.promptLogprobs!.slice(1)));
    expect(proto.sequences.map((s) => Array.from(s.tokens))).toEqual(json.sequences.map((s) => s.tokens));
  });

  it('unloads the models of a session whose heartbeats stopped, and keeps a live one’s', async () => {
    const silent = await newModel();
    const live = await newModel();
    clock += 40_000;
    await call('session_heartbeat', { session_id: live.sessionId });
    clock += 30_000;
    const unloaded = tinker.checkSessions();
    expect(unloaded).toContain(silent.modelId);
    expect(unloaded).not.toContain(live.modelId);
    const { body } = await call('forward', { model_id: silent.modelId, forward_input: { loss_fn: 'cross_entropy', data: [datum(S1)] } });
    expect((await result((body as { request_id: string }).request_id)).body).toEqual({ error: expect.stringMatching(/not loaded/), category: 'user' });
    const ok = await call('forward', { model_id: live.modelId, forward_input: { loss_fn: 'cross_entropy', data: [datum(S1)] } });
    expect((await result((ok.body as { request_id: string }).request_id)).status).toBe(200);
    expect(((await call('get_info', { model_id: silent.modelId })).body as { status: string }).status).toBe('unloaded');
  });

  it('resumes from save_weights with the optimizer onto a new model (the next step gives the same weights); lists, describes and deletes checkpoints', async () => {
    const { sessionId, modelId } = await newModel();
    const train = async (model: string, seq: number) => {
      const fb = await call('forward_backward', { model_id: model, seq_id: seq, forward_backward_input: { loss_fn: 'cross_entropy', data: [datum(S1)] } });
      await result((fb.body as { request_id: string }).request_id);
      const st = await call('optim_step', { model_id: model, seq_id: seq + 1, adam_params: { learning_rate: 0.02, weight_decay: 0.01, grad_clip_norm: 1 } });
      return ((await result((st.body as { request_id: string }).request_id)).body as { metrics: Record<string, number> }).metrics;
    };
    const logprobs = async (model: string) => {
      const f = await call('forward', { model_id: model, forward_input: { loss_fn: 'cross_entropy', data: [datum(S1)] } });
      return ((await result((f.body as { request_id: string }).request_id)).body as { loss_fn_outputs: Array<{ logprobs: { data: number[] } }> }).loss_fn_outputs[0]!.logprobs.data;
    };
    await train(modelId, 1);
    const saved = await call('save_weights', { model_id: modelId, path: 'after-1' });
    const path = ((await result((saved.body as { request_id: string }).request_id)).body as { path: string }).path;
    expect(path).toBe(`tinker://${modelId}/weights/after-1`);
    const second = await train(modelId, 3);
    const expected = await logprobs(modelId);
    const load = await call('load_weights', { session_id: sessionId, model_seq_id: 1, path, optimizer: true });
    const resumedId = (load.body as { model_id: string }).model_id;
    expect((await result((load.body as { request_id: string }).request_id)).body).toMatchObject({ model_id: resumedId, type: 'load_weights' });
    const resumed = await train(resumedId, 1);
    expect(resumed['turnwise/grad_norm']).toBeCloseTo(second['turnwise/grad_norm'] as number, 5);
    expect(await logprobs(resumedId)).toEqual(expected);
    const list = await tinker.app.request(`/api/v1/training_runs/${modelId}/checkpoints`);
    expect(((await list.json()) as { checkpoints: Array<{ checkpoint_id: string }> }).checkpoints.map((c) => c.checkpoint_id)).toEqual(['weights/after-1']);
    expect((await tinker.app.request(`/api/v1/training_runs/${modelId}/checkpoints/weights/after-1`, { method: 'DELETE' })).status).toBe(204);
    expect((await tinker.app.request(`/api/v1/training_runs/${modelId}/checkpoints/weights/after-1`, { method: 'DELETE' })).status).toBe(404);
    const info = await call('weights_info', { tinker_path: `tinker://${resumedId}/weights/none` });
    expect(info.status).toBe(404);
    await call('save_weights', { model_id: resumedId, path: 'again' }).then((r) => result((r.body as { request_id: string }).request_id));
    const again = `tinker://${resumedId}/weights/again`;
    const info2 = await call('weights_info', { tinker_path: again });
    expect(info2.body).toMatchObject({ base_model: 'tiny-qwen3', is_lora: true, lora_rank: 4, train_attn: true, train_mlp: true });
  });
});
