/**
 * `turnwise ui`: binds the dashboard app to a port with `@hono/node-server` and finds the built
 * front end that ships with the package (`src/ui/dist`, committed, so no build step is needed).
 */
import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { serve } from '@hono/node-server';
import type { Clock } from '../../core/clock.js';
import type { CategoryResolver } from './eval-tables.js';
import { createUiApp } from './app.js';

/** Options of {@link startUiServer}. */
export interface UiServerOptions {
  readonly runsDir: string;
  /** Port; 0 picks a free one. Default 5174. */
  readonly port?: number;
  /** Interface to bind. Default 127.0.0.1. */
  readonly host?: string;
  /** Built front end; default the one shipped in the package. */
  readonly assetsDir?: string;
  readonly clock?: Clock;
  readonly pollMs?: number;
  readonly resolveCategory?: CategoryResolver;
}

/** A running dashboard. */
export interface RunningUi {
  /** e.g. `http://127.0.0.1:5174/` */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/**
 * The shipped front end: `src/ui/dist` next to this file's source (`src/ui/server` when run with
 * tsx; `dist/src/ui/server` after `tsc`, whose package root is three folders further up).
 * @example defaultAssetsDir() // '/…/turnwise/src/ui/dist'
 */
export function defaultAssetsDir(): string {
  const candidates = [new URL('../dist/', import.meta.url), new URL('../../../../src/ui/dist/', import.meta.url)].map((u) => fileURLToPath(u));
  return candidates.find((dir) => existsSync(`${dir}index.html`)) ?? (candidates[0] as string);
}

/**
 * Serves the dashboard until `close()`.
 * @example const ui = await startUiServer({ runsDir: 'runs', port: 0 }); console.log(ui.url);
 */
export async function startUiServer(options: UiServerOptions): Promise<RunningUi> {
  const ui = createUiApp({
    runsDir: options.runsDir,
    assetsDir: options.assetsDir ?? defaultAssetsDir(),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.pollMs !== undefined ? { pollMs: options.pollMs } : {}),
    ...(options.resolveCategory ? { resolveCategory: options.resolveCategory } : {}),
  });
  const host = options.host ?? '127.0.0.1';
  let server: ReturnType<typeof serve>;
  let port: number;
  try {
    ({ server, port } = await new Promise<{ server: ReturnType<typeof serve>; port: number }>((resolve, reject) => {
      const s = serve({ fetch: ui.app.fetch, port: options.port ?? 5174, hostname: host }, (info: AddressInfo) => resolve({ server: s, port: info.port }));
      s.once('error', reject);
    }));
  } catch (error) {
    ui.close();
    throw error;
  }
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${urlHost}:${port}/`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        ui.close(); // ends SSE streams first, so their sockets can close
        if ('closeAllConnections' in server) server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
