/**
 * `turnwise serve <model folder | run | checkpoint>`: an OpenAI-compatible server (chat
 * completions, legacy completions with echo + logprobs, vLLM's tokenizer endpoints) for a Hugging
 * Face model folder or a turnwise run, until Ctrl-C or SIGTERM.
 */
// Registers the built-in environments (this module is loaded only when its command runs).
import '../envs/index.js';
import type { BackendPreference } from '../backend/select.js';
import { serveModel } from '../serve/server.js';
import { exitCodeForSignal, UsageError } from './exit-codes.js';
import { nextStopSignal } from './signals.js';

const BACKENDS: readonly BackendPreference[] = ['auto', 'tensorflow', 'wasm', 'cpu'];

/** The command's options. */
export interface ServeCommandOptions {
  readonly port: number;
  readonly host: string;
  readonly modelName?: string;
  readonly maxBodyBytes?: number;
  readonly maxQueue?: number;
  readonly maxContext?: number;
  readonly backend?: string;
  readonly seed?: number;
}

/**
 * Starts the server, prints how to reach it, and stops on Ctrl-C / SIGTERM.
 * @example await serveCommand('models/SmolLM2-135M-Instruct', { port: 8000, host: '127.0.0.1' });
 */
export async function serveCommand(location: string, options: ServeCommandOptions): Promise<void> {
  const { backend, ...rest } = options;
  if (backend !== undefined && !BACKENDS.includes(backend as BackendPreference)) throw new UsageError(`--backend must be one of ${BACKENDS.join(', ')}, got '${backend}'`);
  const server = await serveModel(location, { ...rest, ...(backend !== undefined ? { backend: backend as BackendPreference } : {}) });
  const stopped = nextStopSignal(); // before the lines that tell a caller the server is up
  console.log(`serving ${server.description}`);
  for (const note of server.notes) console.log(`  ${note}`);
  const root = server.baseURL.slice(0, -'/v1'.length);
  console.log(`model '${server.modelId}' at ${server.baseURL} (POST /chat/completions, /completions; GET /models), tokenizer at ${root}/tokenize; Ctrl-C stops`);
  const signal = await stopped;
  await server.close();
  process.exitCode = exitCodeForSignal(signal);
}
