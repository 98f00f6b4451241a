/**
 * A child process whose output a test can await without ever hanging silently: `waitFor` rejects
 * as soon as the child exits without printing what was awaited (with its exit code and the last
 * lines it wrote) or when a deadline passes, and `waitStopped` waits until the kernel reports the
 * process stopped (SIGSTOP), so a test never sends SIGCONT before the stop has landed.
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** A spawned process with its output and exit, awaitable. */
export interface WatchedProcess {
  readonly proc: ChildProcess;
  /** stdout and stderr together, as received so far. */
  readonly output: () => string;
  /** Resolves with the exit code (null when a signal ended it) once the process has exited and its pipes closed. */
  readonly exit: Promise<number | null>;
  /**
   * Resolves once stdout+stderr matches `pattern`; rejects at once if the process exits first, or
   * after `timeoutMs` (default 240 s, below the e2e tier's 300 s test timeout so the error is ours).
   */
  waitFor(pattern: RegExp, options?: { readonly timeoutMs?: number }): Promise<void>;
}

const DEFAULT_WAIT_MS = 240_000;
const TAIL_LINES = 20;

/** The last `n` non-empty lines of `text`, indented, for an error message. */
export function lastLines(text: string, n = TAIL_LINES): string {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  return lines.length === 0 ? '  (no output)' : lines.slice(-n).map((l) => `  ${l}`).join('\n');
}

/**
 * Watches a process spawned with `stdio: [_, 'pipe', 'pipe']`; `label` names it in errors.
 * @example const server = watchProcess(spawn(process.execPath, ['server.js'], { stdio: ['ignore', 'pipe', 'pipe'] }), 'server');
 * await server.waitFor(/listening on/);
 */
export function watchProcess(proc: ChildProcess, label: string): WatchedProcess {
  let output = '';
  let stderr = '';
  let ended: string | null = null;
  let waiters: { pattern: RegExp; resolve: () => void; reject: (e: Error) => void }[] = [];
  const settle = () => {
    for (const w of waiters) {
      if (w.pattern.test(output)) w.resolve();
      else if (ended !== null) w.reject(notPrinted(w.pattern));
    }
    waiters = waiters.filter((w) => !w.pattern.test(output) && ended === null);
  };
  const notPrinted = (pattern: RegExp) =>
    new Error(`${label} (pid ${proc.pid}) ${ended} before printing ${pattern}; its last stderr lines:\n${lastLines(stderr)}`);
  proc.stdout?.on('data', (d: Buffer) => {
    output += d.toString('utf8');
    settle();
  });
  proc.stderr?.on('data', (d: Buffer) => {
    const text = d.toString('utf8');
    output += text;
    stderr += text;
    settle();
  });
  // 'close' comes after 'exit' once the pipes are drained, so no output is still on its way.
  const exit = new Promise<number | null>((resolve) =>
    proc.once('close', (code, signal) => {
      ended = signal === null ? `exited with code ${code}` : `was ended by ${signal}`;
      settle();
      resolve(code);
    }),
  );
  return {
    proc,
    output: () => output,
    exit,
    waitFor: (pattern, options = {}) => {
      if (pattern.test(output)) return Promise.resolve();
      if (ended !== null) return Promise.reject(notPrinted(pattern));
      const timeoutMs = options.timeoutMs ?? DEFAULT_WAIT_MS;
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters = waiters.filter((w) => w !== waiter);
          reject(new Error(`${label} (pid ${proc.pid}) printed no ${pattern} within ${timeoutMs} ms; its last output lines:\n${lastLines(output)}`));
        }, timeoutMs);
        timer.unref(); // a wait nobody awaits any more must not hold the process open
        const waiter = {
          pattern,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
          reject: (e: Error) => {
            clearTimeout(timer);
            reject(e);
          },
        };
        waiters.push(waiter);
      });
    },
  };
}

/**
 * The state letter of a process from `/proc/<pid>/stat` (`R` running, `S` sleeping, `T` stopped,
 * `Z` zombie, …), or null when there is no such process. The command name, in parentheses, may
 * itself hold spaces and parentheses, so the state is read after the last `)`.
 */
export function processState(pid: number): string | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) || null;
}

/**
 * Resolves once the process is stopped (state `T`): a process that prints a line and then stops
 * itself may still be running when the line arrives, and a SIGCONT sent then would be lost.
 * Rejects if the process is gone or a zombie, or after `timeoutMs`.
 * @example await cli.waitFor(/fault point .* reached/); await waitStopped(cli.proc.pid!); cli.proc.kill('SIGCONT');
 */
export async function waitStopped(pid: number, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = processState(pid);
    if (state === 'T') return;
    if (state === null || state === 'Z') throw new Error(`pid ${pid} ended before it stopped (state ${state ?? 'gone'})`);
    if (Date.now() > deadline) throw new Error(`pid ${pid} not stopped after ${timeoutMs} ms (state ${state})`);
    // The stop is one system call after the line it follows; a few ms of polling is plenty.
    await sleep(5);
  }
}
