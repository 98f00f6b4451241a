/**
 * `turnwise tinker serve`'s server: picks the tensor backend, loads the base model folder once,
 * and binds the Tinker app (app.ts) with `@hono/node-server`.
 */
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { LossReduction } from '../../engines/engine.js';
import { LocalLoraBase } from '../../engines/local/lora-base.js';
import { type BackendPreference, describeBackend, selectBackend } from '../../backend/select.js';
import { describeHfModel, inspectHfModel } from '../../models/hf/hf-model.js';
import { createTinkerApp, type TinkerAppOptions } from './app.js';

/** Options of {@link serveTinker}. */
export interface TinkerServeOptions extends TinkerAppOptions {
  /** Port; 0 picks a free one. Default 8000. */
  readonly port?: number;
  /** Interface to bind. Default 127.0.0.1. */
  readonly host?: string;
  /** The base model's name on the API (default: the folder's absolute path). */
  readonly baseModelName?: string;
  readonly maxLoraRank?: number;
  readonly reduction?: LossReduction;
  /** Tie q/k/v and gate/up lora_A as SkyRL tx does. */
  readonly sharedA?: boolean;
  readonly checkpointsDir?: string;
  readonly backend?: BackendPreference;
}

/** A running server. */
export interface RunningTinkerServer {
  /** e.g. `http://127.0.0.1:8000` (routes live under /api/v1). */
  readonly baseURL: string;
  readonly port: number;
  /** What was loaded, on which backend, with which settings. */
  readonly description: string;
  readonly baseModel: string;
  readonly checkpointsDir: string;
  close(): Promise<void>;
}

/**
 * Serves `folder` until `close()`.
 * @example const server = await serveTinker('test/fixtures/tinker-skyrl/model', { port: 0 });
 */
export async function serveTinker(folder: string, options: TinkerServeOptions = {}): Promise<RunningTinkerServer> {
  const backend = await selectBackend(options.backend ?? 'auto');
  const info = await inspectHfModel(folder);
  const base = await LocalLoraBase.load(folder, {
    ...(options.baseModelName !== undefined ? { name: options.baseModelName } : {}),
    ...(options.checkpointsDir !== undefined ? { checkpointsDir: options.checkpointsDir } : {}),
    ...(options.maxLoraRank !== undefined ? { maxLoraRank: options.maxLoraRank } : {}),
    ...(options.reduction !== undefined ? { reduction: options.reduction } : {}),
    sharedA: options.sharedA === true,
  });
  const { port: wanted, host: wantedHost, baseModelName: _n, maxLoraRank: _r, reduction: _red, sharedA: _s, checkpointsDir: _c, backend: _b, ...appOptions } = options;
  const tinker = createTinkerApp(base, appOptions);
  const host = wantedHost ?? '127.0.0.1';
  let bound: { server: ReturnType<typeof serve>; port: number };
  try {
    bound = await new Promise((resolve, reject) => {
      const s = serve({ fetch: tinker.app.fetch, port: wanted ?? 8000, hostname: host }, (addr: AddressInfo) => resolve({ server: s, port: addr.port }));
      s.once('error', reject);
    });
  } catch (error) {
    await tinker.close();
    base.close();
    throw error;
  }
  const { server, port } = bound;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  const settings = tinker.state.settings;
  return {
    baseURL: `http://${urlHost}:${port}`,
    port,
    baseModel: base.name,
    checkpointsDir: base.checkpointsDir,
    description: `${describeHfModel(info)}; ${describeBackend(backend)}; LoRA alpha 32, rank <= ${base.maxLoraRank}, ${base.reduction} reduction${base.sharedA ? ', tied lora_A' : ''}; ${settings.dialect} dialect`,
    close: async () => {
      await new Promise<void>((resolve) => {
        if ('closeAllConnections' in server) server.closeAllConnections();
        server.close(() => resolve());
      });
      await tinker.close();
      base.close();
    },
  };
}
