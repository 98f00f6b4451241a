/**
 * `turnwise serve <checkpoint>`: an OpenAI-compatible chat-completions endpoint for a checkpoint,
 * until Ctrl-C.
 */
// Registers the built-in environments (this module is loaded only when its command runs).
import '../envs/index.js';
import { serveCheckpoint } from '../serve/server.js';
import { exitCodeForSignal } from './exit-codes.js';
import { nextStopSignal } from './signals.js';

/**
 * Starts the server and prints how to reach it.
 * @example await serveCommand('runs/babyai-grpo', { port: 8000, host: '127.0.0.1' });
 */
export async function serveCommand(location: string, options: { port: number; host: string; modelName?: string; maxBodyBytes?: number }): Promise<void> {
  const server = await serveCheckpoint(location, {
    port: options.port,
    host: options.host,
    ...(options.modelName !== undefined ? { modelName: options.modelName } : {}),
    ...(options.maxBodyBytes !== undefined ? { maxBodyBytes: options.maxBodyBytes } : {}),
  });
  const stopped = nextStopSignal(); // before the lines that tell a caller the server is up
  console.log(`serving ${server.description}`);
  console.log(`model '${server.modelId}' at ${server.baseURL} (POST /chat/completions, GET /models); Ctrl-C stops`);
  const signal = await stopped;
  await server.close();
  process.exitCode = exitCodeForSignal(signal);
}
