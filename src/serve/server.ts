/**
 * `turnwise serve`: loads a model folder, run or checkpoint (load-model.ts) and binds the
 * OpenAI-compatible app to a port with `@hono/node-server` (Hono's maintained Node adapter).
 */
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Rng } from '../core/rng.js';
import type { BackendPreference } from '../backend/select.js';
import { createServeApp, type ServeAppOptions } from './app.js';
import { loadServedModel } from './load-model.js';

/** Options of {@link serveModel}. */
export interface ServeOptions extends Partial<Omit<ServeAppOptions, 'rng' | 'wallClockMs'>> {
  /** Port; 0 picks a free one. Default 8000. */
  readonly port?: number;
  /** Interface to bind. Default 127.0.0.1 (use 0.0.0.0 to expose it). */
  readonly host?: string;
  /** Model id clients must send. Default the folder's (run's) name. */
  readonly modelName?: string;
  /** Cap on prompt + completion tokens. Default the model's context. */
  readonly maxContext?: number;
  readonly backend?: BackendPreference;
  /** Seed of the stream for requests without `seed`. Default 0. */
  readonly seed?: number;
}

/** A running server. */
export interface RunningServer {
  /** Base URL for OpenAI clients, e.g. `http://127.0.0.1:8000/v1`. */
  readonly baseURL: string;
  readonly port: number;
  readonly modelId: string;
  /** One line for the console: what was loaded, backend. */
  readonly description: string;
  /** More lines: architecture, memory, adapters. */
  readonly notes: readonly string[];
  close(): Promise<void>;
}

/**
 * Serves a model folder, run or checkpoint until `close()`.
 * @example const server = await serveModel('runs/babyai-grpo', { port: 0 }); // server.baseURL
 */
export async function serveModel(location: string, options: ServeOptions = {}): Promise<RunningServer> {
  const model = await loadServedModel(location, {
    ...(options.modelName !== undefined ? { modelName: options.modelName } : {}),
    ...(options.maxContext !== undefined ? { maxContext: options.maxContext } : {}),
    ...(options.backend !== undefined ? { backend: options.backend } : {}),
  });
  const { port: wanted, host: wantedHost, modelName: _name, maxContext: _context, backend: _backend, seed, ...limits } = options;
  const app = createServeApp(model, { ...limits, rng: Rng.fromSeed(seed ?? 0).fork('serve') });
  const host = wantedHost ?? '127.0.0.1';
  let bound: { server: ReturnType<typeof serve>; port: number };
  try {
    bound = await new Promise((resolve, reject) => {
      const s = serve({ fetch: app.fetch, port: wanted ?? 8000, hostname: host }, (info: AddressInfo) => resolve({ server: s, port: info.port }));
      s.once('error', reject);
    });
  } catch (error) {
    model.dispose();
    throw error;
  }
  const { server, port } = bound;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    baseURL: `http://${urlHost}:${port}/v1`,
    port,
    modelId: model.id,
    description: model.description,
    notes: model.notes,
    close: () =>
      new Promise<void>((resolve) => {
        // Idle keep-alive sockets would hold `close` open; drop them.
        if ('closeAllConnections' in server) server.closeAllConnections();
        server.close(() => {
          model.dispose();
          resolve();
        });
      }),
  };
}

