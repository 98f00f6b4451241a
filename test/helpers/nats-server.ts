/**
 * Starts a real `nats-server` (Debian package `nats-server`; `.ci/run` installs it) with JetStream
 * and a temp store on a free loopback port, waits until it accepts connections, and stops it.
 *
 * Readiness is polled (a TCP connect that gets the server's `INFO` line), never a fixed sleep.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A running server. */
export interface NatsServerHandle {
  /** `nats://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  /** JetStream store folder (kept across `restart`). */
  readonly storeDir: string;
  /** Server output so far (for failure messages). */
  log(): string;
  /** kill -9 when `hard`, else SIGTERM; resolves once the process exited. */
  stop(options?: { hard?: boolean }): Promise<void>;
  /**
   * Stops (kill -9 when `hard`, else SIGTERM), then starts again on the same port and store; with
   * `whileDown`, only once it resolved (the test waits, with the server down, for a client to notice).
   */
  restart(options?: { hard?: boolean; whileDown?: () => Promise<void> }): Promise<void>;
}

export interface NatsServerOptions {
  /** Require this token from clients. */
  readonly token?: string;
  /** Largest message, bytes (server default 1 MiB). */
  readonly maxPayload?: number;
  /** More server config text (e.g. an `authorization { users = [...] }` block), appended to the config file. */
  readonly extraConfig?: string;
}

/** Asks the OS for a free loopback port. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Resolves when a TCP client receives the server's INFO greeting. */
function probe(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('data', (data) => done(data.toString('utf8').startsWith('INFO')));
    socket.once('error', () => done(false));
  });
}

async function waitReady(port: number, proc: ChildProcess, output: () => string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`nats-server exited with ${proc.exitCode}:\n${output()}`);
    if (await probe(port)) return;
    if (Date.now() > deadline) throw new Error(`nats-server not ready on port ${port} after ${timeoutMs} ms:\n${output()}`);
    // Poll on the event loop's next turn after a short timer (the OS needs time to bind).
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Starts nats-server. Stop it in `afterAll`.
 * @example const nats = await startNatsServer(); … await nats.stop();
 */
export async function startNatsServer(options: NatsServerOptions = {}): Promise<NatsServerHandle> {
  const root = mkdtempSync(join(tmpdir(), 'turnwise-nats-'));
  const storeDir = join(root, 'store');
  const port = await freePort();
  const args = ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir];
  if (options.token !== undefined || options.maxPayload !== undefined || options.extraConfig !== undefined) {
    // Token and max_payload go in a config file: the token must not show in `ps`.
    const lines: string[] = [];
    if (options.token !== undefined) lines.push(`authorization { token: "${options.token}" }`);
    if (options.maxPayload !== undefined) lines.push(`max_payload: ${options.maxPayload}`);
    if (options.extraConfig !== undefined) lines.push(options.extraConfig);
    const file = join(root, 'server.conf');
    writeFileSync(file, `${lines.join('\n')}\n`);
    args.push('-c', file);
  }
  let output = '';
  let proc: ChildProcess;
  const launch = async () => {
    proc = spawn(existsSync('/usr/sbin/nats-server') ? '/usr/sbin/nats-server' : 'nats-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    proc.stdout?.on('data', (d: Buffer) => {
      output += d.toString('utf8');
    });
    proc.stderr?.on('data', (d: Buffer) => {
      output += d.toString('utf8');
    });
    await waitReady(port, proc, () => output, 15_000);
  };
  const stop = async (stopOptions: { hard?: boolean } = {}) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.kill(stopOptions.hard ? 'SIGKILL' : 'SIGTERM');
    await exited;
  };
  await launch();
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    storeDir,
    log: () => output,
    async stop(stopOptions) {
      await stop(stopOptions);
      rmSync(root, { recursive: true, force: true });
    },
    async restart(restartOptions) {
      await stop(restartOptions);
      await restartOptions?.whileDown?.();
      await launch();
    },
  };
}
