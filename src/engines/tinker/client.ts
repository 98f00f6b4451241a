/**
 * A client of the Tinker training API over JSON/HTTP: the routes turnwise's learner and samplers
 * use, against hosted Tinker, SkyRL tx or `turnwise tinker serve` unchanged.
 *
 * - A session is opened once and kept alive by `session_heartbeat` on a timer (the SDK's 10 s;
 *   SkyRL unloads a session's models after 300 s without one). Heartbeats bypass the concurrency
 *   bound so a busy client never lets its session lapse.
 * - Every queued call is submitted, then its future is polled ({@link TinkerRequests}).
 * - Training calls of one model carry `seq_id`s 1, 2, 3, … in the order they were made, and are
 *   submitted one after the other (each waits until the server acknowledged the previous one),
 *   so the server runs them in that order whatever retries happen; their results are awaited
 *   concurrently.
 * - At most `concurrency` calls are in flight (a FIFO semaphore).
 *
 * Why JSON and not the SDK's protobuf `forward_backward`: every server (SkyRL, hosted Tinker,
 * `turnwise tinker serve`) reads JSON, and a token-level batch compresses well enough in JSON at
 * the sizes a step sends (see docs/train-on-gpus.md for the bytes).
 */
import type { Clock } from '../../core/clock.js';
import { systemClock } from '../../core/clock.js';
import { InvalidConfigError } from '../../core/errors.js';
import { Semaphore } from '../../policies/semaphore.js';
import type { z } from 'zod';
import {
  type adamParams,
  type CheckpointsListResponse,
  checkpointArchiveUrlResponse,
  checkpointsListResponse,
  createModelResult,
  createSessionResponse,
  type forwardBackwardInput,
  type ForwardBackwardOutput,
  forwardBackwardOutput,
  type GetInfoResponse,
  getInfoResponse,
  optimStepResult,
  type SampleResponse,
  type SamplingParams,
  type ServerCapabilities,
  sampleResponse,
  saveWeightsForSamplerResult,
  saveWeightsResult,
  serverCapabilities,
  TINKER_API_PREFIX,
  untypedFuture,
} from './wire.js';
import { TinkerProtocolError, TinkerRequestError } from './errors.js';
import { type RouteTraffic, TinkerHttp } from './http.js';
import { type TinkerEvent, TinkerRequests } from './requests.js';
import { type ResolvedTinkerSettings, resolveTinkerSettings, type TinkerClientSettings } from './settings.js';

/** Injected I/O: `fetch`, time, jitter, the environment (for the key), a log sink. */
export interface TinkerClientDeps {
  readonly fetch?: typeof fetch;
  readonly clock?: Clock;
  readonly random?: () => number;
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly epochMs?: () => number;
  readonly onEvent?: (event: TinkerEvent) => void;
}

/** A model on the server and the client's bookkeeping for it. */
export class TinkerModel {
  /** The next training call's `seq_id`. */
  nextSeqId = 1;
  /** Settles when the last sequenced call's submission settled (the next one waits for it). */
  submitted: Promise<void> = Promise.resolve();
  constructor(
    readonly id: string,
    readonly baseModel: string,
  ) {}
}

/** LoRA settings of `create_model`. */
export interface LoraSettings {
  readonly rank: number;
  /** Seed of the adapter's initialisation; absent = the server picks. */
  readonly seed?: number;
}

/** Adam settings as the wire names them (`grad_clip_norm` left out for a server that has no such field). */
export type WireAdamInput = z.input<typeof adamParams>;

/** A forward / forward-backward input as sent (the loss config left out when empty). */
export type WireForwardInput = z.input<typeof forwardBackwardInput>;

/** Where `asample` takes its weights from: exactly one. */
export type WireSampleSource = { readonly model_path: string } | { readonly base_model: string };

/** One `asample` request. */
export interface WireSampleRequest {
  readonly source: WireSampleSource;
  readonly promptTokens: readonly number[];
  readonly numSamples: number;
  readonly samplingParams: SamplingParams;
  readonly promptLogprobs: boolean;
}

/**
 * @example
 * const client = new TinkerClient({ url: 'http://localhost:8000', apiKeyEnv: 'TINKER_API_KEY' });
 * await client.createSession();
 * const model = await client.createModel('Qwen/Qwen3-8B', { rank: 32, seed: 0 });
 * const out = await client.forwardBackward(model, { loss_fn: 'cross_entropy', data });
 * await client.close();
 */
export class TinkerClient {
  readonly settings: ResolvedTinkerSettings;
  private readonly http: TinkerHttp;
  private readonly requests: TinkerRequests;
  private readonly gate: Semaphore;
  private readonly clock: Clock;
  private sessionId: string | undefined;
  private modelSeqId = 0;
  private heartbeatTimer: unknown;
  private lastHeartbeatOk = 0;
  private closed = false;

  constructor(settings: TinkerClientSettings, deps: TinkerClientDeps = {}) {
    this.settings = resolveTinkerSettings(settings);
    const env = deps.env ?? process.env;
    let apiKey: string | undefined;
    if (this.settings.apiKeyEnv !== undefined) {
      apiKey = env[this.settings.apiKeyEnv];
      if (apiKey === undefined || apiKey === '') throw new InvalidConfigError('model.tinker.apiKeyEnv', `environment variable ${this.settings.apiKeyEnv} is not set`);
    }
    this.clock = deps.clock ?? systemClock;
    this.http = new TinkerHttp(this.settings.url, apiKey, { fetch: deps.fetch ?? globalThis.fetch, clock: this.clock });
    this.requests = new TinkerRequests({
      http: this.http,
      settings: this.settings,
      clock: this.clock,
      random: deps.random ?? Math.random,
      epochMs: deps.epochMs ?? Date.now,
      onEvent: deps.onEvent,
    });
    this.gate = new Semaphore(this.settings.concurrency);
  }

  /** The server's origin (no credentials), for logs and the run header. */
  get server(): string {
    return this.requests.server;
  }

  /** Requests and bytes per route so far. */
  traffic(): Record<string, RouteTraffic> {
    return this.http.traffic();
  }

  /** Calls in flight right now (for tests and progress). */
  get inFlight(): number {
    return this.gate.inUse;
  }

  /** `GET healthz`: resolves when the server answers 2xx. */
  async healthz(signal?: AbortSignal): Promise<void> {
    await this.get('healthz', `${TINKER_API_PREFIX}/healthz`, signal);
  }

  /** `GET get_server_capabilities`: the models the server offers. */
  async getServerCapabilities(signal?: AbortSignal): Promise<ServerCapabilities> {
    return this.requests.parse('get_server_capabilities', serverCapabilities, await this.get('get_server_capabilities', `${TINKER_API_PREFIX}/get_server_capabilities`, signal));
  }

  /** Opens the session (once) and starts its heartbeat. */
  async createSession(tags: readonly string[] = ['turnwise'], signal?: AbortSignal): Promise<string> {
    if (this.sessionId !== undefined) return this.sessionId;
    const answer = await this.requests.send({
      route: 'create_session',
      method: 'POST',
      path: `${TINKER_API_PREFIX}/create_session`,
      body: { tags, user_metadata: {}, sdk_version: 'turnwise' },
      timeoutMs: this.settings.requestTimeoutMs,
      signal,
    });
    const session = this.requests.parse('create_session', createSessionResponse, answer.json);
    for (const level of ['info', 'warning', 'error'] as const) {
      const message = session[`${level}_message`];
      if (message) this.requests.emit({ kind: 'server-message', call: 'create_session', level, message: this.http.redact(message) });
    }
    this.sessionId = session.session_id;
    this.lastHeartbeatOk = this.clock.now();
    this.scheduleHeartbeat();
    return session.session_id;
  }

  /** `create_model` with a LoRA adapter; waits until the server has made it. */
  async createModel(baseModel: string, lora: LoraSettings, signal?: AbortSignal): Promise<TinkerModel> {
    const sessionId = this.sessionId ?? (await this.createSession(undefined, signal));
    const body = {
      session_id: sessionId,
      model_seq_id: this.modelSeqId++,
      base_model: baseModel,
      // SkyRL adapts attention and MLP only; asking the same of hosted Tinker keeps the adapter a plain PEFT one.
      lora_config: { rank: lora.rank, ...(lora.seed !== undefined ? { seed: lora.seed } : {}), train_attn: true, train_mlp: true, train_unembed: false },
    };
    const result = await this.submitAndWait('create_model', body, signal);
    const { model_id } = this.requests.parse('create_model', createModelResult, result);
    return new TinkerModel(model_id, baseModel);
  }

  /** `get_info` about a model. */
  async getInfo(model: TinkerModel, signal?: AbortSignal): Promise<GetInfoResponse> {
    const answer = await this.requests.send({ route: 'get_info', method: 'POST', path: `${TINKER_API_PREFIX}/get_info`, body: { model_id: model.id }, timeoutMs: this.settings.requestTimeoutMs, signal });
    return this.requests.parse('get_info', getInfoResponse, answer.json);
  }

  /** `forward`: log-probs and per-token losses, no gradient. */
  async forward(model: TinkerModel, input: WireForwardInput, signal?: AbortSignal): Promise<ForwardBackwardOutput> {
    const result = await this.sequenced(model, 'forward', (seq_id) => ({ model_id: model.id, seq_id, forward_input: input }), signal);
    return this.requests.parse('forward', forwardBackwardOutput, result);
  }

  /** `forward_backward`: as {@link forward}, and accumulates the gradient. */
  async forwardBackward(model: TinkerModel, input: WireForwardInput, signal?: AbortSignal): Promise<ForwardBackwardOutput> {
    const result = await this.sequenced(model, 'forward_backward', (seq_id) => ({ model_id: model.id, seq_id, forward_backward_input: input }), signal);
    return this.requests.parse('forward_backward', forwardBackwardOutput, result);
  }

  /** `optim_step`: applies the accumulated gradient; returns the server's metrics. */
  async optimStep(model: TinkerModel, adam: WireAdamInput, signal?: AbortSignal): Promise<Record<string, number>> {
    const result = await this.sequenced(model, 'optim_step', (seq_id) => ({ model_id: model.id, seq_id, adam_params: adam }), signal);
    return this.requests.parse('optim_step', optimStepResult, result).metrics ?? {};
  }

  /** `save_weights`: the training state (weights and optimizer) under `name`; returns its `tinker://` path. */
  async saveWeights(model: TinkerModel, name: string, signal?: AbortSignal): Promise<string> {
    return this.save(model, 'save_weights', name, 'training', signal);
  }

  /** `save_weights_for_sampler`: the weights for sampling under `name`; returns its `tinker://` path. */
  async saveWeightsForSampler(model: TinkerModel, name: string, signal?: AbortSignal): Promise<string> {
    return this.save(model, 'save_weights_for_sampler', name, 'sampler', signal);
  }

  /** `load_weights` of a state saved by {@link saveWeights} (SkyRL and hosted Tinker allow it only as a new model's first call). */
  async loadWeights(model: TinkerModel, path: string, optimizer: boolean, signal?: AbortSignal): Promise<void> {
    await this.sequenced(model, 'load_weights', (seq_id) => ({ model_id: model.id, seq_id, path, optimizer }), signal);
  }

  /** `asample`: continuations of one prompt, with log-probs (and the prompt's, when asked). */
  async sample(request: WireSampleRequest, signal?: AbortSignal): Promise<SampleResponse> {
    const body = {
      ...request.source,
      prompt: { chunks: [{ type: 'encoded_text', tokens: request.promptTokens }] },
      num_samples: request.numSamples,
      sampling_params: request.samplingParams,
      prompt_logprobs: request.promptLogprobs,
    };
    const result = await this.submitAndWait('asample', body, signal);
    return this.requests.parse('asample', sampleResponse, result);
  }

  /** `unload_model`: frees the adapter's slot on the server. */
  async unloadModel(model: TinkerModel, signal?: AbortSignal): Promise<void> {
    await this.submitAndWait('unload_model', { model_id: model.id }, signal);
  }

  /** `GET training_runs/{id}/checkpoints`. */
  async listCheckpoints(modelId: string, signal?: AbortSignal): Promise<CheckpointsListResponse> {
    const body = await this.get('list_checkpoints', `${TINKER_API_PREFIX}/training_runs/${encodeURIComponent(modelId)}/checkpoints`, signal);
    return this.requests.parse('list_checkpoints', checkpointsListResponse, body);
  }

  /**
   * Downloads a sampler checkpoint's archive (a tar.gz of PEFT files): asks the archive route,
   * follows its 302 (SkyRL, hosted today) or reads its `{url}` (the SDK's future contract), and
   * fetches that URL; the API key is sent only when the URL is on the server's own origin.
   */
  async downloadCheckpointArchive(modelId: string, checkpointId: string, signal?: AbortSignal): Promise<Uint8Array> {
    // A hosted checkpoint id may hold a slash (`sampler_weights/<name>`): each segment is encoded alone.
    const id = checkpointId.split('/').map(encodeURIComponent).join('/');
    const path = `${TINKER_API_PREFIX}/training_runs/${encodeURIComponent(modelId)}/checkpoints/${id}/archive`;
    const answer = await this.requests.send({ route: 'checkpoint_archive', method: 'GET', path, timeoutMs: this.settings.requestTimeoutMs, manualRedirect: true, signal });
    let target: string;
    if (answer.status >= 300) {
      const location = answer.headers.get('location');
      if (!location) throw new TinkerProtocolError(this.requests.site('checkpoint_archive'), 'Location', `HTTP ${answer.status} without a Location header`);
      target = new URL(location, `${this.settings.url}/`).toString();
    } else target = this.requests.parse('checkpoint_archive', checkpointArchiveUrlResponse, answer.json).url;
    const download = await this.requests.send({ route: 'checkpoint_download', method: 'GET', path: target, timeoutMs: this.settings.requestTimeoutMs, bytes: true, signal });
    if (!download.bytes) throw new TinkerProtocolError(this.requests.site('checkpoint_download'), '(body)', 'no archive bytes');
    return download.bytes;
  }

  /** Stops the heartbeat. Models are left on the server (see {@link unloadModel}). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.heartbeatTimer !== undefined) this.clock.clearTimeout(this.heartbeatTimer);
    this.heartbeatTimer = undefined;
  }

  private async get(route: string, path: string, signal?: AbortSignal): Promise<unknown> {
    return (await this.requests.send({ route, method: 'GET', path, timeoutMs: this.settings.requestTimeoutMs, signal })).json;
  }

  /** Submits a queued call (retrying transient trouble with the same body) and returns its request id. */
  private async submit(route: string, body: unknown, signal?: AbortSignal): Promise<string> {
    const answer = await this.requests.send({ route, method: 'POST', path: `${TINKER_API_PREFIX}/${route}`, body, timeoutMs: this.settings.requestTimeoutMs, signal });
    return this.requests.parse(route, untypedFuture, answer.json).request_id;
  }

  /** Submits a call that needs no ordering and waits for its result, within the concurrency bound. */
  private submitAndWait(route: string, body: unknown, signal?: AbortSignal): Promise<unknown> {
    return this.gate.run(async () => this.requests.awaitFuture(route, await this.submit(route, body, signal), signal));
  }

  /**
   * A training call of `model`: takes the next `seq_id` now, is submitted once the previous
   * training call's submission settled, and waits for its result within the concurrency bound.
   * The previous submission is awaited outside the semaphore, so a waiting call never holds a slot
   * the call it waits for needs.
   */
  private async sequenced(model: TinkerModel, route: string, build: (seqId: number) => unknown, signal?: AbortSignal): Promise<unknown> {
    const body = build(model.nextSeqId++);
    const previous = model.submitted;
    let markSubmitted = () => {};
    model.submitted = new Promise<void>((resolve) => {
      markSubmitted = resolve;
    });
    await previous;
    return this.gate.run(async () => {
      let requestId: string;
      try {
        requestId = await this.submit(route, body, signal);
      } finally {
        markSubmitted();
      }
      return this.requests.awaitFuture(route, requestId, signal);
    });
  }

  /**
   * A save under `name`. SkyRL does not de-duplicate saves: when a retried submission finds the
   * name taken (409) because the first attempt did reach the server, the checkpoint list tells
   * whether it exists, and its path is returned instead of an error.
   */
  private async save(model: TinkerModel, route: 'save_weights' | 'save_weights_for_sampler', name: string, type: 'training' | 'sampler', signal?: AbortSignal): Promise<string> {
    let result: unknown;
    try {
      result = await this.sequenced(model, route, (seq_id) => ({ model_id: model.id, path: name, seq_id }), signal);
    } catch (error) {
      // A 409 on the first attempt is a real clash of names: only a retried submission is recovered.
      if (!(error instanceof TinkerRequestError && error.status === 409 && error.attempts > 1)) throw error;
      const listed = (await this.listCheckpoints(model.id, signal)).checkpoints.find((c) => c.checkpoint_id === name && c.checkpoint_type === type);
      if (!listed) throw error;
      return listed.tinker_path;
    }
    const { path } = route === 'save_weights' ? this.requests.parse(route, saveWeightsResult, result) : this.requests.parse(route, saveWeightsForSamplerResult, result);
    if (!path) throw new TinkerProtocolError(this.requests.site(route), 'path', 'the server saved without returning a path');
    return path;
  }

  private scheduleHeartbeat(): void {
    if (this.closed || this.sessionId === undefined) return;
    const handle = this.clock.setTimeout(() => void this.heartbeat(), this.settings.heartbeatIntervalMs);
    // A pending heartbeat alone must not keep the process alive.
    (handle as { unref?: () => void }).unref?.();
    this.heartbeatTimer = handle;
  }

  private async heartbeat(): Promise<void> {
    try {
      // Straight to the transport: no retries and no semaphore slot (a queue of calls must not starve it).
      const answer = await this.http.send({
        route: 'session_heartbeat',
        method: 'POST',
        path: `${TINKER_API_PREFIX}/session_heartbeat`,
        body: { session_id: this.sessionId },
        timeoutMs: Math.min(10_000, this.settings.requestTimeoutMs),
      });
      if (answer.status >= 300) throw new Error(`HTTP ${answer.status}: ${answer.text.slice(0, 200)}`);
      this.lastHeartbeatOk = this.clock.now();
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this.requests.emit({ kind: 'heartbeat-failed', call: 'session_heartbeat', reason: this.http.redact(reason), sinceLastOkMs: this.clock.now() - this.lastHeartbeatOk });
    } finally {
      this.scheduleHeartbeat();
    }
  }
}
