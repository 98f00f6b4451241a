/**
 * Helpers for the distributed-run tests: spawn `turnwise …` CLI processes whose output can be
 * awaited (no sleeps, and an error at once if the process exits first), kill them, and check a run
 * store's train trajectories.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { expect } from 'vitest';
import type { FaultPoint } from '../../src/core/fault-point.js';
import { RunStore } from '../../src/store/run-store.js';
import { type WatchedProcess, waitStopped, watchProcess } from './child-process.js';

/** A spawned `turnwise` process. */
export interface CliProcess extends WatchedProcess {
  /**
   * Resolves once the process reached fault point `point` armed with `:stop` (see
   * `src/core/fault-point.ts`) and is really stopped there, so a SIGCONT sent next resumes it.
   */
  frozenAt(point: FaultPoint): Promise<void>;
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
  const watched = watchProcess(proc, `turnwise ${args.slice(0, 2).join(' ')}`);
  return {
    ...watched,
    async frozenAt(point) {
      await watched.waitFor(new RegExp(`fault point '${point}' reached`));
      // The line is written just before the process stops itself: wait for the stop to land.
      await waitStopped(proc.pid as number);
    },
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
