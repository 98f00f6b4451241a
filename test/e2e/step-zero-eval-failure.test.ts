/**
 * A run whose first held-out evaluation (step 0, before any training) fails ends like any other
 * failed run: `trainRun` returns status `failed` with the evaluation's error, the run store says
 * `failed` (not `running`, which the dashboard would show as `stale` once the process is gone),
 * and the folder's writer lock is released. The environment is an AgentGym server at a port where
 * nothing listens, so every evaluation episode ends in error after its retries.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig, resolveConfig } from '../../src/core/config.js';
import { acquireRunLock } from '../../src/runtime/run-lock.js';
import { trainRun } from '../../src/runtime/train/train-run.js';
import { RunStore } from '../../src/store/run-store.js';
import { freePort } from '../helpers/nats-server.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-eval-zero-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a run whose step-0 evaluation fails', () => {
  it('returns failed with the evaluation error, is stored as failed, and releases its folder', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const runDir = join(dir, 'eval-zero');
    const config = resolveConfig(
      parseConfig({
        seed: 5,
        run: { dir, name: 'eval-zero' },
        env: { name: 'agentgym', settings: { type: 'babyai', url, levels: ['GoToRedBall'], retries: 0, timeoutMs: 2_000 } },
        algorithm: { tasksPerStep: 2, groupSize: 2 },
        horizon: { schedule: 'fixed', horizon: 3 },
        train: { steps: 1, evalEvery: 1, evalTasks: 2, checkpointEvery: 0 },
        runtime: { inferenceWorkers: 0 },
      }),
    );
    const result = await trainRun({ config, runDir });
    expect(result.status).toBe('failed');
    expect(result.completedSteps).toBe(0);
    expect(result.error).toContain('evaluate failed: every episode of the test evaluation at step 0 ended in error (2 of 2)');
    expect(result.error).toContain(url);

    const store = RunStore.open(runDir, { readonly: true });
    try {
      expect(store.run(result.runId)?.status).toBe('failed');
    } finally {
      store.close();
    }
    // The folder is free again: another writer can take it at once.
    const lock = await acquireRunLock(runDir, 'after the failed run');
    lock.release();
  });
});
