/**
 * `turnwise serve <checkpoint>`: an OpenAI-compatible chat-completions endpoint for a checkpoint,
 * until Ctrl-C.
 */
import { serveCheckpoint } from '../serve/server.js';

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
  console.log(`serving ${server.description}`);
  console.log(`model '${server.modelId}' at ${server.baseURL} (POST /chat/completions, GET /models); Ctrl-C stops`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  await server.close();
}
