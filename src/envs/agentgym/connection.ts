/**
 * One connection per server: the keep-alive client, its health monitor and its instance leases,
 * shared by every `AgentGymEnvironment` that talks to the same URL with the same settings (so a
 * rollout pool of 64 environments uses one socket pool, not 64). Reference-counted: the sockets
 * close when the last environment using them closes.
 */
import type { Clock } from '../../core/clock.js';
import { Rng } from '../../core/rng.js';
import type { AgentGymAdapter } from './adapters/types.js';
import { ServerMonitor } from './health.js';
import { AgentGymHttpClient } from './http-client.js';
import { InstanceLeases } from './leases.js';
import { type AgentGymSettings, serverUrl } from './settings.js';

/** Header that asks a turnwise server for its extension fields (other servers ignore it). */
export const EXTENSION_HEADER = 'x-turnwise-ext';

/** A shared connection. */
export interface Connection {
  readonly url: string;
  readonly client: AgentGymHttpClient;
  readonly monitor: ServerMonitor;
  readonly leases: InstanceLeases;
  /** Drops one reference; closes the sockets with the last. */
  release(): Promise<void>;
}

interface Entry {
  refs: number;
  connection: Connection;
}

const open = new Map<string, Entry>();
let connectionCount = 0;

/** Options that are not settings. */
export interface ConnectionDeps {
  readonly clock?: Clock;
  /** Seed of the back-off jitter stream (each connection forks its own). */
  readonly seed?: number;
}

/**
 * The shared connection for `settings` (created on first use).
 * @example const connection = acquireConnection(settings, agentGymAdapters.babyai);
 */
export function acquireConnection(settings: AgentGymSettings, adapter: AgentGymAdapter, deps: ConnectionDeps = {}): Connection {
  const url = serverUrl(settings);
  const key = JSON.stringify([url, adapter.type, settings.timeoutMs, settings.retries, settings.backoffMs, settings.maxBackoffMs, settings.connections, settings.pipelining, settings.extensions, deps.clock !== undefined]);
  const found = open.get(key);
  if (found && !deps.clock) {
    found.refs++;
    return found.connection;
  }
  const monitor = new ServerMonitor(url, adapter.type, settings.reportAfter);
  const client = new AgentGymHttpClient({
    url,
    envName: adapter.type,
    timeoutMs: settings.timeoutMs,
    retries: settings.retries,
    backoffBaseMs: settings.backoffMs,
    backoffMaxMs: settings.maxBackoffMs,
    connections: settings.connections,
    pipelining: settings.pipelining,
    rng: Rng.fromSeed(deps.seed ?? 0).fork('agentgym-backoff', connectionCount++),
    monitor,
    ...(deps.clock ? { clock: deps.clock } : {}),
    ...(settings.extensions ? { headers: { [EXTENSION_HEADER]: '1' } } : {}),
  });
  const leases = new InstanceLeases(adapter, client, monitor);
  const entry: Entry = {
    refs: 1,
    connection: {
      url,
      client,
      monitor,
      leases,
      release: async () => {
        entry.refs--;
        if (entry.refs > 0) return;
        if (open.get(key) === entry) open.delete(key);
        await leases.settle();
        await client.close();
      },
    },
  };
  // Connections with an injected clock are private (tests); the rest are shared.
  if (!deps.clock) open.set(key, entry);
  return entry.connection;
}
