/**
 * `AgentGymEnvironment`: one turnwise environment instance backed by one server-side instance of
 * an AgentGym server. The instance is leased lazily on the first `reset` (see `./leases.ts`),
 * reused across episodes, and given back on `close` — closed where the server has `/close`,
 * pooled for reuse where it has not. A transport or protocol failure gives the instance back as
 * unhealthy and throws (the env session then ends the episode as `error`); the next `reset`
 * leases a fresh one.
 */
import { EnvironmentError } from '../../core/errors.js';
import type { Observation, StepResult } from '../../core/types.js';
import { formatActionList } from '../babyai/text.js';
import type { Environment } from '../environment.js';
import type { AgentGymAdapter } from './adapters/types.js';
import type { Connection } from './connection.js';
import { AgentGymProtocolError, AgentGymServerError } from './errors.js';
import { isRecord } from './http-client.js';
import type { Lease } from './leases.js';
import type { AgentGymSettings } from './settings.js';

type InfoValue = string | number | boolean | null;

/** Extension fields a turnwise server adds when asked (`x-turnwise-ext`). */
interface Extension {
  readonly availableActions?: readonly string[];
  readonly success?: boolean;
  readonly info?: Readonly<Record<string, InfoValue>>;
}

function extensionOf(body: unknown): Extension {
  if (!isRecord(body) || !isRecord(body.turnwise)) return {};
  const ext = body.turnwise;
  const out: { availableActions?: string[]; success?: boolean; info?: Record<string, InfoValue> } = {};
  if (Array.isArray(ext.availableActions) && ext.availableActions.every((a) => typeof a === 'string')) out.availableActions = ext.availableActions as string[];
  if (typeof ext.success === 'boolean') out.success = ext.success;
  if (isRecord(ext.info)) {
    const info: Record<string, InfoValue> = {};
    for (const [k, v] of Object.entries(ext.info)) if (v === null || ['string', 'number', 'boolean'].includes(typeof v)) info[k] = v as InfoValue;
    out.info = info;
  }
  return out;
}

/**
 * An AgentGym server as an `Environment`.
 * @example
 * const env = agentgymSpec.create({ settings: { type: 'babyai', url: 'http://127.0.0.1:36002' } });
 * const first = await env.reset(1);
 * const result = await env.step('Thought: go\nAction: go to red ball 1');
 * await env.close();
 */
export class AgentGymEnvironment implements Environment {
  readonly name = 'agentgym';
  private lease: Lease | null = null;
  private started = false;
  private done = false;
  private closed = false;
  private lastText = '';
  private lastActions: readonly string[] | undefined;
  private readonly abort = new AbortController();

  constructor(
    readonly settings: AgentGymSettings,
    private readonly adapter: AgentGymAdapter,
    private readonly connection: Connection,
    private readonly instructionText: string,
  ) {}

  instruction(): string {
    return this.instructionText;
  }

  /** Server-side instance id leased now, or null. */
  get instanceId(): number | null {
    return this.lease?.id ?? null;
  }

  async reset(index: number): Promise<Observation> {
    this.assertOpen('reset');
    if (!Number.isInteger(index) || index < 0) throw new EnvironmentError(this.adapter.type, `reset: task index must be a non-negative integer, got ${index}`);
    return await this.resetOnce(index, true);
  }

  async step(actionText: string): Promise<StepResult> {
    this.assertOpen('step');
    const lease = this.lease;
    if (lease === null || !this.started) throw new EnvironmentError(this.adapter.type, 'step called before reset');
    if (this.done) {
      return { observation: { text: 'The episode is over. Reset the environment to start a new one.' }, reward: 0, done: true, success: false, info: { invalid: true, error: 'episode-over' } };
    }
    const prepared = this.adapter.prepareAction(typeof actionText === 'string' ? actionText : String(actionText));
    if (!prepared.send) {
      // Refused on this side, as AgentGym's client does: the server never sees it; the state is unchanged.
      const text = this.adapter.actionsInText && this.lastActions ? `${prepared.observation}\n${formatActionList(this.lastActions)}` : `${prepared.observation}\n\n${this.lastText}`;
      return { observation: this.observationOf(text, this.lastActions), reward: 0, done: false, success: false, info: { invalid: true, error: prepared.reason } };
    }
    const body = await this.fail(() =>
      this.connection.client.request({ method: 'POST', path: '/step', body: { [this.adapter.idKey]: lease.id, action: prepared.action }, retry: 'step', signal: this.abort.signal }),
    );
    const fields = this.read('/step', () => this.adapter.parseStep(body));
    const ext = extensionOf(body);
    const actions = ext.availableActions ?? fields.availableActions ?? this.adapter.actionsInText?.(fields.observation);
    this.done = fields.done;
    this.lastText = fields.observation;
    this.lastActions = actions;
    const invalid = typeof ext.info?.invalid === 'boolean' ? ext.info.invalid : (this.adapter.invalidObservation?.(fields.observation) ?? false);
    return {
      observation: this.observationOf(fields.observation, actions),
      reward: fields.reward,
      done: fields.done,
      success: ext.success ?? this.adapter.success(fields.reward, fields.done),
      info: { ...ext.info, invalid, action: prepared.action, agentgymType: this.adapter.type, instanceId: lease.id },
    };
  }

  /** Gives the server-side instance back and drops this environment's share of the connection. Idempotent; never throws. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.abort.abort();
    const lease = this.lease;
    this.lease = null;
    if (lease) await this.connection.leases.release(lease, { healthy: true });
    await this.connection.release();
  }

  private async resetOnce(index: number, mayRetry: boolean): Promise<Observation> {
    if (this.lease === null) this.lease = await this.connection.leases.acquire(this.abort.signal);
    const lease = this.lease;
    const reset = this.connection.client.request({
      method: 'POST',
      path: '/reset',
      body: { [this.adapter.idKey]: lease.id, ...this.adapter.resetBody(index, this.settings) },
      retry: 'idempotent',
      signal: this.abort.signal,
    });
    let body: unknown;
    try {
      body = await this.fail(() => reset);
    } catch (error) {
      // A pooled instance the server no longer knows (it restarted): forget it and lease another.
      if (lease.reused && mayRetry && error instanceof AgentGymServerError && this.lease === lease) {
        this.lease = null;
        await this.connection.leases.release(lease, { healthy: false, error });
        return await this.resetOnce(index, false);
      }
      throw error;
    }
    const fields = this.read('/reset', () => this.adapter.parseReset(body, lease.state));
    let text: string;
    let listed: readonly string[] | undefined;
    if ('fetchObservation' in fields) {
      const observed = await this.fail(() =>
        this.connection.client.request({ method: 'GET', path: '/observation', query: { [this.adapter.idKey]: lease.id }, retry: 'idempotent', signal: this.abort.signal }),
      );
      text = this.read('/observation', () => this.adapter.parseObservation(observed));
    } else {
      text = fields.observation;
      listed = fields.availableActions;
    }
    const actions = extensionOf(body).availableActions ?? listed ?? this.adapter.actionsInText?.(text);
    this.started = true;
    this.done = false;
    this.lastText = text;
    this.lastActions = actions;
    return this.observationOf(text, actions);
  }

  /**
   * Runs a request. A transport failure gives the instance back as unhealthy, so the next reset
   * starts on a fresh one; an application error (`{"error"}`) keeps it: the server is fine.
   */
  private async fail<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      this.started = false;
      if (error instanceof AgentGymServerError) throw error;
      const lease = this.lease;
      this.lease = null;
      if (lease) await this.connection.leases.release(lease, { healthy: false, error });
      throw error;
    }
  }

  private read<T>(path: string, parse: () => T): T {
    try {
      return parse();
    } catch (error) {
      const failure = new AgentGymProtocolError(this.adapter.type, { url: this.connection.url, path }, (error as Error).message);
      this.connection.monitor.failure(failure);
      this.started = false;
      const lease = this.lease;
      this.lease = null;
      if (lease) void this.connection.leases.release(lease, { healthy: false, error: failure });
      throw failure;
    }
  }

  private observationOf(text: string, actions: readonly string[] | undefined): Observation {
    return actions && actions.length > 0 ? { text, availableActions: actions } : { text };
  }

  private assertOpen(method: string): void {
    if (this.closed) throw new EnvironmentError(this.adapter.type, `${method} called after close`);
  }
}
