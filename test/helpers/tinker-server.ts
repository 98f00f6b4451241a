/**
 * Starts `turnwise tinker serve` on a model folder as a child process, for end-to-end tests of the
 * Tinker client and `model.engine: tinker`. Resolves with the server's root URL once it listens;
 * rejects at once, with its output, if it exits first (`watchProcess`).
 */
import { spawn } from 'node:child_process';
import { type WatchedProcess, watchProcess } from './child-process.js';

/** A running server. */
export interface TinkerServerProcess {
  /** Root URL (the client appends /api/v1). */
  readonly url: string;
  readonly watched: WatchedProcess;
  /** SIGKILL, then waits for the exit. */
  kill(): Promise<void>;
}

/**
 * @example const server = await startTinkerServer(folder, ['--base-model-name', 'standin']); … await server.kill();
 */
export async function startTinkerServer(folder: string, args: readonly string[] = [], port = 0): Promise<TinkerServerProcess> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'tinker', 'serve', folder, '--port', String(port), '--backend', 'wasm', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const watched = watchProcess(proc, 'turnwise tinker serve');
  const listening = /tinker API at (http:\/\/\S+)\/api\/v1 /;
  await watched.waitFor(listening, { timeoutMs: 120_000 });
  const url = listening.exec(watched.output())?.[1] as string;
  return {
    url,
    watched,
    async kill() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
      await watched.exit;
    },
  };
}
