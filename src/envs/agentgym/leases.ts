/**
 * Leases of server-side instances, so that none leaks when an episode dies.
 *
 * - A server with `/close`: an instance is closed when its lease ends; if that close fails (the
 *   server is down), the id is kept as an orphan and closed after the next request that succeeds.
 * - A server without `/close` (WebShop, SQLGym, ALFWorld, Maze, Wordle, tool envs): the server
 *   never frees instances (AgentGym issue #62), so an instance whose lease ended cleanly goes to an
 *   idle pool and is leased again instead of creating another; one that failed is dropped.
 * - Health check: while the server's last requests failed, `acquire` first probes `GET /` and
 *   fails fast instead of sending a `/create` whose instance nobody might ever own.
 */
import type { AgentGymAdapter, AdapterState } from './adapters/types.js';
import { AgentGymProtocolError } from './errors.js';
import type { ServerMonitor } from './health.js';
import type { AgentGymHttpClient } from './http-client.js';

/** A leased instance. */
export interface Lease {
  readonly id: number;
  /** Adapter state fetched at creation (Wordle's vocabulary). */
  readonly state: AdapterState;
  /** True when taken from the idle pool rather than created. */
  readonly reused: boolean;
}

const MAX_ORPHAN_ATTEMPTS = 3;

/**
 * Instances of one server.
 * @example
 * const lease = await leases.acquire();
 * // ... reset/step with lease.id ...
 * await leases.release(lease, { healthy: true });
 */
export class InstanceLeases {
  private readonly idle: Lease[] = [];
  private readonly leased = new Set<number>();
  private readonly orphans = new Map<number, number>();
  private reaping: Promise<void> | null = null;

  constructor(
    private readonly adapter: AgentGymAdapter,
    private readonly client: AgentGymHttpClient,
    private readonly monitor: ServerMonitor,
  ) {}

  /** Instance ids leased now. */
  get leasedIds(): number[] {
    return [...this.leased];
  }

  /** Ids whose close failed and is still to be retried. */
  get orphanIds(): number[] {
    return [...this.orphans.keys()];
  }

  /** Pooled ids of a server without `/close`. */
  get idleIds(): number[] {
    return this.idle.map((l) => l.id);
  }

  /** Leases an idle instance (servers without `/close`) or creates one. */
  async acquire(signal?: AbortSignal): Promise<Lease> {
    const pooled = this.idle.pop();
    if (pooled) {
      this.leased.add(pooled.id);
      return { ...pooled, reused: true };
    }
    if (this.monitor.consecutiveFailures > 0) await this.healthCheck(signal);
    const body = this.adapter.createBody();
    const answer = await this.client.request({ method: 'POST', path: '/create', ...(body !== undefined ? { body } : {}), retry: 'create', ...(signal ? { signal } : {}) });
    const id = this.parse('/create', () => this.adapter.parseCreate(answer));
    this.leased.add(id);
    this.monitor.sessionCreated(id);
    const state: AdapterState = {};
    try {
      if (this.adapter.afterCreate) {
        await this.adapter.afterCreate(
          (path) => this.client.request({ method: 'GET', path, query: { [this.adapter.idKey]: id }, retry: 'idempotent', ...(signal ? { signal } : {}) }),
          state,
        );
      }
    } catch (error) {
      await this.release({ id, state, reused: false }, { healthy: false });
      throw error instanceof Error && 'site' in error ? error : new AgentGymProtocolError(this.adapter.type, { url: this.client.url, path: '/create' }, (error as Error).message);
    }
    if (this.orphans.size > 0) this.reapOrphans();
    return { id, state, reused: false };
  }

  /**
   * Ends a lease: closes the instance, pools it (no `/close`, healthy) or drops it. Never throws.
   * An unhealthy release with the `error` that ended it is reported as a failed session.
   */
  async release(lease: Lease, options: { healthy: boolean; error?: unknown }): Promise<void> {
    if (!this.leased.delete(lease.id)) return;
    if (!options.healthy && options.error !== undefined) this.monitor.sessionFailed(lease.id, options.error);
    if (!this.adapter.hasClose) {
      if (options.healthy) this.idle.push({ ...lease, reused: true });
      return;
    }
    if (!(await this.closeInstance(lease.id))) this.orphans.set(lease.id, 1);
  }

  /** Waits for a reaping pass in flight (used before the connection closes). */
  async settle(): Promise<void> {
    await this.reaping;
  }

  /** `GET /` on the server's origin (every AgentGym server answers it); throws when it fails. */
  async healthCheck(signal?: AbortSignal): Promise<void> {
    await this.client.request({ method: 'GET', path: '/', root: true, retry: 'idempotent', ...(signal ? { signal } : {}) });
  }

  private reapOrphans(): void {
    if (this.reaping) return;
    this.reaping = (async () => {
      for (const [id, attempts] of [...this.orphans]) {
        if (await this.closeInstance(id)) this.orphans.delete(id);
        else if (attempts + 1 >= MAX_ORPHAN_ATTEMPTS) this.orphans.delete(id);
        else this.orphans.set(id, attempts + 1);
      }
    })().finally(() => {
      this.reaping = null;
    });
  }

  private async closeInstance(id: number): Promise<boolean> {
    try {
      await this.client.request({ method: 'POST', path: '/close', body: { [this.adapter.idKey]: id }, retry: 'idempotent', errorBody: 'return' });
      return true;
    } catch {
      return false;
    }
  }

  private parse<T>(path: string, read: () => T): T {
    try {
      return read();
    } catch (error) {
      const failure = new AgentGymProtocolError(this.adapter.type, { url: this.client.url, path }, (error as Error).message);
      this.monitor.failure(failure);
      throw failure;
    }
  }
}
