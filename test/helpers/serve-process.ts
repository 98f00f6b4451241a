/**
 * `turnwise serve <folder>` as its own process on a free port (wasm backend), for e2e tests that
 * talk to it over HTTP: resolves once it prints the address of model `modelId`.
 */
import { spawn } from 'node:child_process';
import { type WatchedProcess, watchProcess } from './child-process.js';

/**
 * Starts the server; kill `served.proc` when done.
 * @example const { served, baseURL } = await startServe(folder, 'qwen-tiny');
 */
export async function startServe(folder: string, modelId: string): Promise<{ readonly served: WatchedProcess; readonly baseURL: string }> {
  const served = watchProcess(spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve', folder, '--port', '0', '--backend', 'wasm'], { stdio: ['ignore', 'pipe', 'pipe'] }), 'turnwise serve');
  const ready = new RegExp(`model '${modelId}' at (http://\\S+/v1) `);
  await served.waitFor(ready);
  return { served, baseURL: ready.exec(served.output())?.[1] as string };
}
