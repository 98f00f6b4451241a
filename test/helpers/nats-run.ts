/**
 * Helpers for the distributed-run tests: spawn `turnwise …` CLI processes whose output can be
 * awaited (no sleeps), kill them, and check a run store's train trajectories.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { expect } from 'vitest';
import { RunStore } from '../../src/store/run-store.js';

/** A spawned `turnwise` process. */
export interface CliProcess {
  readonly proc: ChildProcess;
  readonly output: () => string;
  readonly exit: Promise<number | null>;
  /** Resolves once the combined stdout/stderr matches. */
  waitFor(pattern: RegExp): Promise<void>;
}

/** SIGKILLs a process (if still running) and resolves once it exited. */
export function killProcess(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  proc.kill('SIGKILL');
  return exited;
}

/**
 * Spawns `node --import tsx src/cli/main.ts …args` and records it in `registry` (kill them in afterEach).
 * `env` adds environment variables (e.g. `TURNWISE_FAULT`, see `src/core/fault-point.ts`).
 * @example const w = spawnCli(procs, ['worker', '--nats', url, '--run', 'r1', '--role', 'sampler,episodes']);
 */
export function spawnCli(registry: ChildProcess[], args: readonly string[], env: Readonly<Record<string, string>> = {}): CliProcess {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  registry.push(proc);
  let output = '';
  let waiters: { pattern: RegExp; resolve: () => void }[] = [];
  const onData = (d: Buffer) => {
    output += d.toString('utf8');
    const ready = waiters.filter((w) => w.pattern.test(output));
    waiters = waiters.filter((w) => !ready.includes(w));
    for (const w of ready) w.resolve();
  };
  proc.stdout?.on('data', onData);
  proc.stderr?.on('data', onData);
  return {
    proc,
    output: () => output,
    exit: new Promise((resolve) => proc.once('exit', (code) => resolve(code))),
    waitFor: (pattern) =>
      new Promise((resolve) => {
        if (pattern.test(output)) resolve();
        else waiters.push({ pattern, resolve });
      }),
  };
}

/**
 * Every step has exactly `perStep` train trajectories in the store, there are no others, and none
 * ended in `error` (a lost sampler or server would show as one). Whether they are the right ones
 * is {@link expectSameStoredContent}'s job (ids are the primary key, so "each id once" cannot fail).
 */
export function expectStoreComplete(runDir: string, steps: number, perStep: number): void {
  const store = RunStore.open(runDir, { readonly: true });
  try {
    const episodes = store.episodes({ split: 'train', limit: 100_000 });
    expect(episodes).toHaveLength(steps * perStep);
    for (let step = 0; step < steps; step++) expect(episodes.filter((e) => e.step === step)).toHaveLength(perStep);
    expect(episodes.filter((e) => e.outcome === 'error').map((e) => `${e.id}: ${e.error}`)).toEqual([]);
  } finally {
    store.close();
  }
}
