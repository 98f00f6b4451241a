/**
 * The service, sampling and future routes: health, capabilities, client config, sessions and
 * heartbeats, sampling sessions, `asample`, and `retrieve_future` — which holds the request until
 * the result is ready (408 `{detail, queue_state}` after the server's bound, as a long poll), then
 * answers the result itself (protobuf when the SDK asks for it and the result has that form), a
 * failure in the dialect's shape, or 404 for an unknown id.
 */
import type { Context, Hono } from 'hono';
import { InvalidArgumentError } from '../../core/errors.js';
import { Rng } from '../../core/rng.js';
import type { EngineSampleResult } from '../../engines/engine.js';
import { sampleFromModel } from '../../engines/local/sampling.js';
import { encodeForwardBackwardOutput, encodeSampleResponse } from '../../engines/tinker/proto/codec.js';
import {
  createSamplingSessionRequest,
  createSessionRequest,
  forwardOutputToWire,
  PROTOBUF_CONTENT_TYPE,
  parseTinkerPath,
  retrieveFutureRequest,
  type SampleRequest,
  sampleRequest,
  sampleRequestFromWire,
  sampleResultToWire,
  sessionHeartbeatRequest,
  TINKER_API_PREFIX,
} from '../../engines/tinker/wire.js';
import type { TransformerModel } from '../../models/transformer/model.js';
import { readBody, TinkerHttpError, validated, wantsProtobuf } from './http.js';
import { pending } from './routes-training.js';
import type { TinkerState } from './state.js';

/**
 * Registers the service, sampling and future routes on `app`; `seed` seeds requests that send none.
 * @example addServiceRoutes(app, state, 0)
 */
export function addServiceRoutes(app: Hono, state: TinkerState, seed: number): void {
  const api = (path: string) => `${TINKER_API_PREFIX}/${path}`;
  const json = async (c: Context) => {
    const body = await readBody(c, state.settings.maxBodyBytes);
    if (body.kind !== 'json') throw new TinkerHttpError(415, 'this route takes JSON');
    return body.value;
  };
  const sampleSeeds = Rng.fromSeed(seed).fork('tinker-sample');

  app.get(api('healthz'), (c) => c.json({ status: 'ok' }));
  app.get(api('get_server_capabilities'), (c) => c.json({ supported_models: [{ model_name: state.base.name, max_context_length: state.base.model.config.maxContext }] }));
  // use_pyqwest_transport false: the SDK's server-side switch back to httpx's own transport, which
  // a loopback server gains nothing from skipping (and an SDK installed without pyqwest then works)
  app.post(api('client/config'), (c) =>
    c.json({ pjwt_auth_enabled: false, credential_default_source: 'api_key', proto_compress_fwdbwd: state.settings.compressForwardBackward, parallel_fwdbwd_chunks: true, create_model_via_load_weights: false, use_pyqwest_transport: false }),
  );
  app.post(api('telemetry'), (c) => c.json({ status: 'accepted' }));

  app.post(api('create_session'), async (c) => {
    const req = validated(createSessionRequest, await json(c));
    const id = state.newId('session');
    state.sessions.set(id, { id, tags: req.tags, userMetadata: req.user_metadata ?? null, sdkVersion: req.sdk_version, lastHeartbeat: state.now() });
    return c.json({ type: 'create_session', info_message: null, warning_message: null, error_message: null, session_id: id });
  });

  app.post(api('session_heartbeat'), async (c) => {
    const session = state.session(validated(sessionHeartbeatRequest, await json(c)).session_id);
    session.lastHeartbeat = state.now();
    return c.json({ type: 'session_heartbeat' });
  });

  app.post(api('create_sampling_session'), async (c) => {
    const req = validated(createSamplingSessionRequest, await json(c));
    state.session(req.session_id);
    if (req.model_path !== null && req.model_path !== undefined && parseTinkerPath(req.model_path) === null) throw new TinkerHttpError(400, `model_path is not a tinker:// path: ${JSON.stringify(req.model_path)}`);
    if ((req.model_path === null || req.model_path === undefined) && req.base_model !== null && req.base_model !== undefined && !state.base.isNamed(req.base_model)) {
      throw new TinkerHttpError(400, `Engine is configured for '${state.base.name}' but request specified '${req.base_model}'`);
    }
    const id = state.newId('sampling');
    state.samplingSessions.set(id, { id, modelPath: req.model_path ?? null });
    return c.json({ type: 'create_sampling_session', sampling_session_id: id });
  });

  app.get(api('samplers/:id'), (c) => {
    const s = state.samplingSessions.get(c.req.param('id') ?? '');
    if (s === undefined) throw new TinkerHttpError(404, 'Sampler not found');
    return c.json({ sampler_id: s.id, base_model: state.base.name, model_path: s.modelPath });
  });

  for (const path of ['asample', 'sample']) {
    app.post(api(path), async (c) => {
      const req = validated(sampleRequest, await json(c));
      if (req.sampling_params.max_tokens === null || req.sampling_params.max_tokens === undefined) throw new TinkerHttpError(400, 'max_tokens is currently required');
      const sources = [req.base_model, req.model_path, req.sampling_session_id].filter((s) => s !== null && s !== undefined).length;
      if (sources !== 1) throw new TinkerHttpError(400, 'give exactly one of base_model, model_path, or sampling_session_id (with seq_id)');
      if (req.sampling_session_id !== null && req.sampling_session_id !== undefined && !state.samplingSessions.has(req.sampling_session_id)) throw new TinkerHttpError(404, 'Sampling session not found');
      const fallback = sampleSeeds.int(2 ** 31);
      const requestId = state.futures.submit('sampling', async () => {
        const engineRequest = sampleRequestFromWire(req, 'body');
        const model = await samplingModel(state, req);
        const result: EngineSampleResult = sampleFromModel(model, engineRequest, fallback);
        return { kind: 'sample', result };
      });
      return c.json(pending(requestId));
    });
  }

  app.post(api('retrieve_future'), async (c) => {
    const { request_id: id } = validated(retrieveFutureRequest, await json(c));
    const entry = await state.futures.wait(id, state.settings.retrieveTimeoutMs, c.req.raw.signal);
    if (entry === undefined && state.futures.isGone(id)) throw new TinkerHttpError(410, 'Future expired (the server restarted or forgot its result since); send the request again');
    if (entry === undefined) throw new TinkerHttpError(404, 'Future not found');
    if (entry.state === 'pending') return c.json({ detail: 'Timeout waiting for result', queue_state: 'active' }, 408);
    if (entry.state === 'failed') {
      const error = entry.error as { message: string; category: string };
      return state.settings.dialect === 'skyrl' ? c.json({ detail: error.message }, 400) : c.json({ error: error.message, category: error.category });
    }
    const result = entry.result;
    if (result === undefined || result.kind === 'json') return c.json((result?.body ?? {}) as object);
    if (wantsProtobuf(c)) {
      const bytes = result.kind === 'forward' ? encodeForwardBackwardOutput(forwardOutputToWire(result.output)) : encodeSampleResponse(result.result);
      // a copy: protobufjs may hand back a view into Node's shared Buffer pool
      return c.body(Uint8Array.from(bytes).buffer, 200, { 'content-type': PROTOBUF_CONTENT_TYPE });
    }
    return c.json(result.kind === 'forward' ? forwardOutputToWire(result.output) : sampleResultToWire(result.result, state.promptLayout));
  });
}

/** The model a sampling request reads: the base, or the sampler weights it names. */
async function samplingModel(state: TinkerState, req: SampleRequest): Promise<TransformerModel> {
  let path: string | null = req.model_path ?? null;
  if (req.sampling_session_id !== null && req.sampling_session_id !== undefined) path = state.samplingSessions.get(req.sampling_session_id)?.modelPath ?? null;
  else if (req.base_model !== null && req.base_model !== undefined && !state.base.isNamed(req.base_model)) {
    throw InvalidArgumentError.format('base_model', `Engine is configured for '${state.base.name}' but request specified '${req.base_model}'`);
  }
  if (path === null) return state.base.model;
  const p = parseTinkerPath(path);
  if (p === null || p.kind !== 'sampler') throw InvalidArgumentError.format('model_path', `expected tinker://<model>/sampler_weights/<name> or tinker://<model>/<name>, got ${JSON.stringify(path)}`);
  return state.base.samplerModel(p.modelId, p.name);
}
