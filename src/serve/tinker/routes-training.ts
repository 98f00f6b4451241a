/**
 * The training routes: models (`create_model`, `get_info`, `unload_model`), passes (`forward`,
 * `forward_backward` in JSON or the SDK's protobuf), `optim_step`, and weights (`save_weights`,
 * `load_weights`, `save_weights_for_sampler`, `weights_info`). Each queued call answers
 * `{future_id, status: 'pending', request_id}` at once and runs on its model's queue; a body that
 * does not validate is a 422, an unknown model a 404, and what only the engine can judge (ranks,
 * lengths, losses it lacks) fails the future naming the field.
 */
import type { Hono } from 'hono';
import { InvalidArgumentError } from '../../core/errors.js';
import type { EngineLossName } from '../../engines/engine.js';
import { checkpointExists, checkpointFolder, readPeftAdapter } from '../../engines/local/checkpoint-files.js';
import { LocalLoraEngine } from '../../engines/local/lora-engine.js';
import { decodeForwardBackwardRequest } from '../../engines/tinker/proto/codec.js';
import {
  adamParamsFromWire,
  createModelRequest,
  datumFromWire,
  type ForwardBackwardInput,
  forwardBackwardRequest,
  forwardRequest,
  getInfoRequest,
  loadWeightsRequest,
  optimStepRequest,
  parseTinkerPath,
  saveWeightsForSamplerRequest,
  saveWeightsRequest,
  TINKER_API_PREFIX,
  unloadModelRequest,
  weightsInfoRequest,
} from '../../engines/tinker/wire.js';
import type { LoraTarget } from '../../models/lora/lora.js';
import type { FutureResult } from './futures.js';
import { readBody, TinkerHttpError, validated } from './http.js';
import type { ModelRecord, TinkerState } from './state.js';

const ATTENTION: readonly LoraTarget[] = ['q_proj', 'k_proj', 'v_proj', 'o_proj'];
const MLP: readonly LoraTarget[] = ['gate_proj', 'up_proj', 'down_proj'];

/** The answer of a queued call. */
export function pending(requestId: string, modelId?: string): Record<string, string> {
  return { future_id: requestId, status: 'pending', request_id: requestId, ...(modelId === undefined ? {} : { model_id: modelId }) };
}

/**
 * Registers the training routes on `app`.
 * @example addTrainingRoutes(app, state)
 */
export function addTrainingRoutes(app: Hono, state: TinkerState): void {
  const post = (path: string, handler: (body: unknown, raw: Awaited<ReturnType<typeof readBody>>) => Promise<unknown> | unknown) => {
    app.post(`${TINKER_API_PREFIX}/${path}`, async (c) => {
      const raw = await readBody(c, state.settings.maxBodyBytes);
      if (raw.kind === 'protobuf' && path !== 'forward_backward') throw new TinkerHttpError(415, `${path} takes JSON; only forward_backward accepts protobuf`);
      return c.json((await handler(raw.kind === 'json' ? raw.value : null, raw)) as object);
    });
  };

  post('create_model', (body) => {
    const req = validated(createModelRequest, body);
    state.session(req.session_id);
    const lora = req.lora_config ?? { rank: 32 };
    const id = state.newId('model');
    const record: ModelRecord = {
      id,
      sessionId: req.session_id,
      requestedLora: (req.lora_config as Record<string, unknown> | null | undefined) ?? null,
      rank: lora.rank,
      seed: lora.seed ?? null,
      trainAttn: lora.train_attn ?? true,
      trainMlp: lora.train_mlp ?? true,
      userMetadata: req.user_metadata ?? null,
      createdAt: new Date(state.now()),
      status: 'created',
      engine: null,
      lastRequestTime: new Date(state.now()),
    };
    state.models.set(id, record);
    const requestId = state.futures.submit(id, async () => {
      try {
        if (!state.base.isNamed(req.base_model)) throw InvalidArgumentError.format('base_model', `Engine is configured for '${state.base.name}' but request specified '${req.base_model}'`);
        const targets = [...(record.trainAttn ? ATTENTION : []), ...(record.trainMlp ? MLP : [])];
        if (targets.length === 0) throw InvalidArgumentError.format('lora_config', 'train_attn and train_mlp are both false: nothing to adapt');
        record.engine = await LocalLoraEngine.create(state.base, { modelId: id, rank: record.rank, seed: record.seed ?? 0, targets });
      } catch (err) {
        record.status = 'failed';
        throw err;
      }
      const loraConfig = { rank: record.rank, alpha: 32, seed: record.seed, train_attn: record.trainAttn, train_mlp: record.trainMlp, train_unembed: false };
      return { kind: 'json', body: { model_id: id, base_model: state.base.name, lora_config: loraConfig, type: 'create_model' } };
    });
    return { model_id: id, base_model: req.base_model, lora_config: req.lora_config ?? null, status: 'created', request_id: requestId };
  });

  post('get_info', (body) => {
    const m = state.model(validated(getInfoRequest, body).model_id);
    const arch = state.base.model.config.architecture;
    return {
      model_id: m.id,
      status: m.status,
      model_data: { base_model: state.base.name, lora_config: { rank: m.rank, seed: null }, model_name: state.base.name, arch, tokenizer_id: state.base.name },
      is_lora: true,
      lora_rank: m.rank,
      model_name: state.base.name,
      type: 'get_info',
    };
  });

  post('unload_model', (body) => {
    const m = state.model(validated(unloadModelRequest, body).model_id);
    const requestId = state.futures.submit(m.id, async () => {
      await state.unload(m);
      return { kind: 'json', body: { model_id: m.id, status: 'unloaded', type: 'unload_model' } };
    });
    return { request_id: requestId, model_id: m.id };
  });

  const pass = (route: 'forward' | 'forward_backward', modelId: string, seqId: number | null | undefined, input: ForwardBackwardInput, backward: boolean) => {
    const m = state.model(modelId);
    const key = JSON.stringify({ route, backward, input });
    const requestId = state.submitSequenced(m.id, seqId, key, () =>
      state.futures.submit(m.id, async (): Promise<FutureResult> => {
        const engine = state.engineOf(m);
        const data = input.data.map((d, i) => datumFromWire(d, `${route === 'forward' ? 'forward_input' : 'forward_backward_input'}.data[${i}]`));
        const loss = input.loss_fn as EngineLossName;
        const config = input.loss_fn_config ?? undefined;
        const output = backward ? await engine.forwardBackward(data, loss, config) : await engine.forward(data, loss, config);
        return { kind: 'forward', output };
      }, isSequenced(seqId)),
    );
    return pending(requestId);
  };

  post('forward', (body) => {
    const req = validated(forwardRequest, body);
    return pass('forward', req.model_id, req.seq_id, req.forward_input, false);
  });

  post('forward_backward', (body, raw) => {
    if (raw.kind === 'protobuf') {
      const decoded = decodeForwardBackwardRequest(raw.bytes);
      const req = validated(forwardBackwardRequest, decoded.request);
      // The SDK sends a forward as forward_backward with forward_only set
      return pass('forward_backward', req.model_id, req.seq_id, req.forward_backward_input, !decoded.forwardOnly);
    }
    const req = validated(forwardBackwardRequest, body);
    return pass('forward_backward', req.model_id, req.seq_id, req.forward_backward_input, true);
  });

  post('optim_step', (body) => {
    const req = validated(optimStepRequest, body);
    const m = state.model(req.model_id);
    const adam = adamParamsFromWire(req.adam_params);
    const requestId = state.submitSequenced(m.id, req.seq_id, JSON.stringify({ route: 'optim_step', adam: req.adam_params }), () =>
      state.futures.submit(m.id, async () => ({ kind: 'json', body: { metrics: (await state.engineOf(m).optimStep(adam)).metrics } }), isSequenced(req.seq_id)),
    );
    return pending(requestId);
  });

  post('save_weights_for_sampler', (body) => {
    const req = validated(saveWeightsForSamplerRequest, body);
    const m = state.model(req.model_id);
    const requestId = state.futures.submit(m.id, async () => {
      const engine = state.engineOf(m);
      if (req.path !== null && req.path !== undefined) {
        const { path } = await engine.saveWeightsForSampler(req.path);
        return { kind: 'json', body: { path, type: 'save_weights_for_sampler', sampling_session_id: null } };
      }
      const name = `ss${req.sampling_session_seq_id ?? 0}_seq${req.seq_id ?? requestId}`;
      const { path } = await engine.saveWeightsForSampler(name);
      const sessionId = state.newId('sampling');
      state.samplingSessions.set(sessionId, { id: sessionId, modelPath: path });
      return { kind: 'json', body: { path: null, type: 'save_weights_for_sampler', sampling_session_id: sessionId } };
    });
    return pending(requestId);
  });

  post('save_weights', (body) => {
    const req = validated(saveWeightsRequest, body);
    const m = state.model(req.model_id);
    const requestId = state.futures.submit(m.id, async () => {
      const engine = state.engineOf(m);
      const name = req.path ?? `weights_${requestId}`;
      if (req.overwrite !== true && (await checkpointExists(state.base.checkpointsDir, m.id, 'training', name))) throw InvalidArgumentError.format('path', `training checkpoint '${name}' already exists for model ${m.id} (send overwrite: true to replace it)`);
      return { kind: 'json', body: { path: await engine.saveState(name), type: 'save_weights' } };
    });
    return pending(requestId);
  });

  post('load_weights', (body) => {
    const req = validated(loadWeightsRequest, body);
    const source = parseTinkerPath(req.path);
    if (source === null || source.kind !== 'training') throw new TinkerHttpError(400, `path must name training weights (tinker://<model>/weights/<name>), got ${JSON.stringify(req.path)}`);
    let m: ModelRecord;
    if (req.model_id !== null && req.model_id !== undefined) m = state.model(req.model_id);
    else {
      if (req.session_id === null || req.session_id === undefined) throw new TinkerHttpError(400, 'load_weights needs model_id, or session_id to create the model from the checkpoint');
      state.session(req.session_id);
      m = createFromCheckpoint(state, req.session_id, req.user_metadata ?? null);
    }
    const model = m;
    const requestId = state.futures.submit(model.id, async () => {
      if (model.engine === null && model.status === 'created') {
        const adapter = await readPeftAdapter(checkpointFolder(state.base.checkpointsDir, source.modelId, 'training', source.name));
        model.engine = await LocalLoraEngine.create(state.base, { modelId: model.id, rank: adapter.spec.rank, targets: adapter.spec.targets });
        model.rank = adapter.spec.rank;
      }
      await state.engineOf(model).loadState(req.path, { optimizer: req.optimizer });
      return { kind: 'json', body: { path: req.path, model_id: model.id, type: 'load_weights' } };
    });
    return pending(requestId, model.id);
  });

  post('weights_info', async (body) => {
    const { tinker_path } = validated(weightsInfoRequest, body);
    const p = parseTinkerPath(tinker_path);
    if (p === null) throw new TinkerHttpError(400, `not a tinker:// path: ${JSON.stringify(tinker_path)}`);
    const adapter = await readPeftAdapter(checkpointFolder(state.base.checkpointsDir, p.modelId, p.kind, p.name)).catch(() => {
      throw new TinkerHttpError(404, `Checkpoint not found: ${tinker_path}`);
    });
    const targets = adapter.spec.targets;
    return { base_model: state.base.name, is_lora: true, lora_rank: adapter.spec.rank, train_unembed: false, train_mlp: MLP.some((t) => targets.includes(t)), train_attn: ATTENTION.some((t) => targets.includes(t)) };
  });
}

/** A call with a seq_id: its future is kept for good, so a retry of it always finds its result. */
function isSequenced(seqId: number | null | undefined): boolean {
  return seqId !== null && seqId !== undefined;
}

/** A model record for load_weights' create-from-checkpoint form (its engine is built when the load runs). */
function createFromCheckpoint(state: TinkerState, sessionId: string, userMetadata: Record<string, unknown> | null): ModelRecord {
  const id = state.newId('model');
  const record: ModelRecord = {
    id,
    sessionId,
    requestedLora: null,
    rank: 0,
    seed: null,
    trainAttn: true,
    trainMlp: true,
    userMetadata,
    createdAt: new Date(state.now()),
    status: 'created',
    engine: null,
    lastRequestTime: new Date(state.now()),
  };
  state.models.set(id, record);
  return record;
}
