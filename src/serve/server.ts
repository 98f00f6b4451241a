/**
 * `turnwise serve`: loads a checkpoint (with its run's config) and binds the OpenAI-compatible app
 * to a port with `@hono/node-server` (Hono's maintained Node adapter).
 */
import type { AddressInfo } from 'node:net';
import { basename, dirname } from 'node:path';
import { serve } from '@hono/node-server';
import { Rng } from '../core/rng.js';
import { getEnvironmentSpec } from '../envs/registry.js';
import { describeBackend, selectBackend } from '../models/backend/select.js';
import { loadCheckpoint, resolveCheckpointDir } from '../models/checkpoint.js';
import { buildPolicyStack } from '../runtime/policy-stack.js';
import { loadRunConfig } from '../runtime/run-folder.js';
import { createServeApp, type ServedModel } from './app.js';

/** Options of {@link serveCheckpoint}. */
export interface ServeOptions {
  /** Port; 0 picks a free one. Default 8000. */
  readonly port?: number;
  /** Interface to bind. Default 127.0.0.1 (use 0.0.0.0 to expose it). */
  readonly host?: string;
  /** Model id clients must send. Default the run folder's name. */
  readonly modelName?: string;
  readonly maxBodyBytes?: number;
  readonly maxMessages?: number;
}

/** A running server. */
export interface RunningServer {
  /** Base URL for OpenAI clients, e.g. `http://127.0.0.1:8000/v1`. */
  readonly baseURL: string;
  readonly port: number;
  readonly modelId: string;
  /** One line for the console: checkpoint, step, backend. */
  readonly description: string;
  close(): Promise<void>;
}

/**
 * Loads a checkpoint as a {@link ServedModel} (plus `dispose`).
 * @example const model = await loadServedModel('runs/babyai-grpo');
 */
export async function loadServedModel(location: string, modelName?: string): Promise<ServedModel & { step: number; checkpointDir: string; backend: string; dispose(): void }> {
  const checkpointDir = await resolveCheckpointDir(location);
  const runDir = dirname(dirname(checkpointDir));
  const config = await loadRunConfig(runDir);
  const backend = await selectBackend(config.model.backend, { matmul: config.model.matmul });
  const checkpoint = await loadCheckpoint(checkpointDir);
  const spec = getEnvironmentSpec(config.env.name);
  const stack = await buildPolicyStack(config, spec, checkpoint);
  const probe = spec.create({ settings: config.env.settings });
  const envInstruction = probe.instruction();
  await probe.close();
  return {
    id: modelName ?? basename(runDir),
    config,
    text: stack.text,
    policy: stack.policy,
    envInstruction,
    step: checkpoint.step,
    checkpointDir,
    backend: describeBackend(backend),
    dispose: () => stack.dispose(),
  };
}

/**
 * Serves a checkpoint until `close()`.
 * @example const server = await serveCheckpoint('runs/babyai-grpo', { port: 0 }); // server.baseURL
 */
export async function serveCheckpoint(location: string, options: ServeOptions = {}): Promise<RunningServer> {
  const model = await loadServedModel(location, options.modelName);
  const app = createServeApp(model, {
    rng: Rng.fromSeed(model.config.seed).fork('serve'),
    ...(options.maxBodyBytes !== undefined ? { maxBodyBytes: options.maxBodyBytes } : {}),
    ...(options.maxMessages !== undefined ? { maxMessages: options.maxMessages } : {}),
  });
  const host = options.host ?? '127.0.0.1';
  const { server, port } = await new Promise<{ server: ReturnType<typeof serve>; port: number }>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, port: options.port ?? 8000, hostname: host }, (info: AddressInfo) => resolve({ server: s, port: info.port }));
    s.once('error', reject);
  });
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    baseURL: `http://${urlHost}:${port}/v1`,
    port,
    modelId: model.id,
    description: `${model.checkpointDir} (step ${model.step}, ${model.config.env.name}, ${model.backend})`,
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
