/**
 * Starts `createAgentGymApp` on a port: a `node:http` server whose listener answers the protocol
 * routes on the lean path (`./fast-listener.ts`) and hands everything else to the Hono app through
 * `@hono/node-server`'s `getRequestListener`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { type Clock, systemClock } from '../../../core/clock.js';
import type { EnvironmentSpec } from '../../environment.js';
import { type AgentGymApp, createAgentGymApp } from './app.js';
import { createFastListener } from './fast-listener.js';
import type { ProfileName } from './profiles.js';

/** Options of {@link startAgentGymServer}. */
export interface ServeOptions {
  readonly spec: EnvironmentSpec;
  readonly settings?: Readonly<Record<string, unknown>>;
  readonly profile?: ProfileName;
  /** 0 picks a free port. */
  readonly port: number;
  readonly host?: string;
  readonly maxSessions?: number;
  readonly idleMs?: number;
  readonly maxBodyBytes?: number;
  readonly cors?: boolean;
  readonly clock?: Clock;
  /** Answer the protocol routes on the lean `node:http` path (default true); false: everything through Hono. */
  readonly fastPath?: boolean;
}

/** A running server. */
export interface RunningServer extends AgentGymApp {
  /** Base URL, e.g. `http://127.0.0.1:36002`. */
  readonly url: string;
  readonly port: number;
  /** Stops accepting connections, then closes every session. */
  stop(): Promise<void>;
}

/** Defaults of `turnwise env serve`. */
export const SERVE_DEFAULTS = { host: '127.0.0.1', maxSessions: 4096, idleMs: 600_000, maxBodyBytes: 1 << 20 } as const;

/**
 * Serves a native environment over AgentGym's protocol.
 * @example const server = await startAgentGymServer({ spec: getEnvironmentSpec('babyai'), port: 0 }); // server.url
 */
export async function startAgentGymServer(options: ServeOptions): Promise<RunningServer> {
  const host = options.host ?? SERVE_DEFAULTS.host;
  const built = createAgentGymApp({
    spec: options.spec,
    ...(options.settings ? { settings: options.settings } : {}),
    ...(options.profile ? { profile: options.profile } : {}),
    maxSessions: options.maxSessions ?? SERVE_DEFAULTS.maxSessions,
    idleMs: options.idleMs ?? SERVE_DEFAULTS.idleMs,
    maxBodyBytes: options.maxBodyBytes ?? SERVE_DEFAULTS.maxBodyBytes,
    cors: options.cors ?? false,
    clock: options.clock ?? systemClock,
  });
  const viaHono = getRequestListener(built.app.fetch, { hostname: host });
  const listener =
    options.fastPath === false ? viaHono : createFastListener({ protocol: built.protocol, maxBodyBytes: options.maxBodyBytes ?? SERVE_DEFAULTS.maxBodyBytes, cors: options.cors ?? false, fallback: viaHono });
  const server = createServer(listener);
  // Longer than clients' keep-alive (undici: 4 s after the server's hint), so a reused socket is never closed under a request.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    ...built,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    stop: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await built.close();
    },
  };
}
