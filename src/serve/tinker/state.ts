/**
 * What the Tinker server knows: sessions and their heartbeats, models (each a LoRA engine on the
 * shared base), sampling sessions, the futures, and the `(model_id, seq_id)` record that makes
 * re-sent training calls idempotent. Ids of sessions, models and sampling sessions are
 * `<kind>_<8 hex>` as SkyRL tx spells them.
 */
import { randomBytes } from 'node:crypto';
import { InvalidArgumentError } from '../../core/errors.js';
import type { LocalLoraBase } from '../../engines/local/lora-base.js';
import type { LocalLoraEngine } from '../../engines/local/lora-engine.js';
import type { PromptLogprobsLayout } from '../../engines/tinker/wire.js';
import { FutureStore } from './futures.js';
import { TinkerHttpError } from './http.js';

/** How failed futures and prompt log-probs are answered: the official SDK's way, or SkyRL tx's. */
export type TinkerDialect = 'tinker' | 'skyrl';

/** Settings of a server. */
export interface TinkerServerSettings {
  /** `tinker` (default): a failed future is 200 `{error, category}`, prompt log-probs start with null. `skyrl`: 400 `{detail}`, no leading entry. */
  readonly dialect: TinkerDialect;
  /** How long `retrieve_future` holds a request before answering 408 (the SDK gives up after 45 s). */
  readonly retrieveTimeoutMs: number;
  /** A session without a heartbeat for this long has its models unloaded. */
  readonly sessionTimeoutMs: number;
  /** Largest request body, after decompression. */
  readonly maxBodyBytes: number;
  /** Tell the SDK (client/config) to zstd-compress its protobuf forward_backward bodies. */
  readonly compressForwardBackward: boolean;
}

/** Default settings. */
export const DEFAULT_TINKER_SETTINGS: TinkerServerSettings = {
  dialect: 'tinker',
  retrieveTimeoutMs: 30_000,
  sessionTimeoutMs: 300_000,
  maxBodyBytes: 256 << 20,
  compressForwardBackward: true,
};

export interface SessionRecord {
  readonly id: string;
  readonly tags: readonly string[];
  readonly userMetadata: Record<string, unknown> | null;
  readonly sdkVersion: string;
  lastHeartbeat: number;
}

export interface ModelRecord {
  readonly id: string;
  readonly sessionId: string;
  /** The `lora_config` of the request, as sent. */
  readonly requestedLora: Record<string, unknown> | null;
  rank: number;
  readonly seed: number | null;
  readonly trainAttn: boolean;
  readonly trainMlp: boolean;
  readonly userMetadata: Record<string, unknown> | null;
  readonly createdAt: Date;
  status: 'created' | 'failed' | 'unloaded';
  engine: LocalLoraEngine | null;
  lastRequestTime: Date;
}

export interface SamplingSessionRecord {
  readonly id: string;
  /** `tinker://…` sampler weights, or null for the base model. */
  readonly modelPath: string | null;
}

/** Server state (module comment). */
export class TinkerState {
  readonly futures: FutureStore;
  readonly sessions = new Map<string, SessionRecord>();
  readonly models = new Map<string, ModelRecord>();
  readonly samplingSessions = new Map<string, SamplingSessionRecord>();
  /** `model_id:seq_id` → the body it was first sent with and its request id. */
  private readonly sequenced = new Map<string, { readonly body: string; readonly requestId: string }>();

  constructor(
    readonly base: LocalLoraBase,
    readonly settings: TinkerServerSettings,
    readonly now: () => number = Date.now,
    firstRequestId?: number,
  ) {
    this.futures = new FutureStore(firstRequestId ?? Date.now() * 1000); // wall time, not the (injectable) session clock
  }

  /** A fresh id such as `model_1a2b3c4d`. */
  newId(kind: 'session' | 'model' | 'sampling'): string {
    for (;;) {
      const id = `${kind}_${randomBytes(4).toString('hex')}`;
      if (!this.sessions.has(id) && !this.models.has(id) && !this.samplingSessions.has(id)) return id;
    }
  }

  /** The session, or a 404. */
  session(id: string): SessionRecord {
    const s = this.sessions.get(id);
    if (s === undefined) throw new TinkerHttpError(404, 'Session not found');
    return s;
  }

  /** The model, or a 404 (checked when a request is submitted). */
  model(id: string): ModelRecord {
    const m = this.models.get(id);
    if (m === undefined) throw new TinkerHttpError(404, 'Model not found');
    m.lastRequestTime = new Date(this.now());
    return m;
  }

  /** The model's engine, or a user error naming why there is none (checked when the work runs). */
  engineOf(m: ModelRecord): LocalLoraEngine {
    if (m.status !== 'created' || m.engine === null) throw InvalidArgumentError.format('model_id', `Model ${m.id} not loaded${m.status === 'failed' ? ' (its creation failed)' : ''}`);
    return m.engine;
  }

  /**
   * Submits a training call once per `(model_id, seq_id)`: the same body again gets the original
   * request id (and so its result); another body under a used seq_id is a 409. Without a seq_id
   * every call is new.
   */
  submitSequenced(modelId: string, seqId: number | null | undefined, body: string, work: () => string): string {
    if (seqId === null || seqId === undefined) return work();
    const key = `${modelId}:${seqId}`;
    const seen = this.sequenced.get(key);
    if (seen !== undefined) {
      if (seen.body !== body) throw new TinkerHttpError(409, 'Training request sequence number was reused');
      return seen.requestId;
    }
    const requestId = work();
    this.sequenced.set(key, { body, requestId });
    return requestId;
  }

  /** The layout of prompt log-probs on JSON. */
  get promptLayout(): PromptLogprobsLayout {
    return this.settings.dialect === 'skyrl' ? 'drop-first' : 'leading-null';
  }

  /** Unloads the models of sessions whose last heartbeat is older than the timeout; returns their ids. */
  unloadStale(): string[] {
    const cutoff = this.now() - this.settings.sessionTimeoutMs;
    const unloaded: string[] = [];
    for (const m of this.models.values()) {
      const s = this.sessions.get(m.sessionId);
      if (m.status !== 'created' || s === undefined || s.lastHeartbeat >= cutoff) continue;
      unloaded.push(m.id);
      this.futures.submit(m.id, async () => {
        await this.unload(m);
        return { kind: 'json', body: { model_id: m.id, status: 'unloaded', type: 'unload_model' } };
      });
    }
    return unloaded;
  }

  /** Frees a model's engine; its record stays, answering "not loaded". */
  async unload(m: ModelRecord): Promise<void> {
    const engine = m.engine;
    m.engine = null;
    if (m.status === 'created') m.status = 'unloaded';
    await engine?.close();
  }
}
