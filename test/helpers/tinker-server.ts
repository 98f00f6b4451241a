/**
 * Starts `turnwise tinker serve` on a model folder as a child process on a free loopback port, for
 * end-to-end tests of the Tinker client and `model.engine: tinker`. Resolves with the server's root
 * URL once it listens; rejects at once, with its output, if it exits first.
 */
import { type ChildProcess, spawn } from 'node:child_process';

/** A running server. */
export interface TinkerServerProcess {
  /** Root URL (the client appends /api/v1). */
  readonly url: string;
  readonly child: ChildProcess;
  /** Everything it printed so far. */
  output(): string;
  /** Resolves with the exit code or signal once it exited. */
  readonly exited: Promise<number | string>;
  /** SIGKILL, then waits for the exit. */
  kill(): Promise<void>;
}

/**
 * @example const server = await startTinkerServer(folder, ['--base-model-name', 'standin']); … await server.kill();
 */
export async function startTinkerServer(folder: string, args: readonly string[] = []): Promise<TinkerServerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'tinker', 'serve', folder, '--port', '0', '--backend', 'wasm', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      out += chunk.toString();
      const match = /tinker API at (http:\/\/\S+)\/api\/v1 /.exec(out);
      if (match) resolve(match[1] as string);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    void exited.then((code) => reject(new Error(`turnwise tinker serve exited (${code}) before listening:\n${out}`)));
  });
  return {
    url,
    child,
    output: () => out,
    exited,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
