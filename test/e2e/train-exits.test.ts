/**
 * How `turnwise train` ends when its environment calls time out (issue #32): with every episode of
 * a step in error the run fails, and the process says so — its result line, exit status 1, the
 * run folder released (no writer.json, no SQLite WAL left). Before, an env session stopped in the
 * middle of a call never answered it, the in-process bus waited for it forever on close, and the
 * process either exited 0 without a word (nothing else kept the event loop alive) or hung, deaf
 * to SIGTERM (worker threads did).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-exits-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function train(runDir: string, ...sets: string[]) {
  const args = ['--import', 'tsx', 'src/cli/main.ts', 'train', 'configs/babyai-grpo.yaml', '--run-dir', runDir];
  for (const set of ['runtime.envTimeoutMs=1', 'env.workers=2', 'train.steps=2', 'train.evalEvery=0', 'algorithm.tasksPerStep=4', ...sets]) args.push('--set', set);
  // A hang is killed (SIGKILL: the bug also ignored SIGTERM) and shows as a null status.
  return spawnSync(process.execPath, args, { encoding: 'utf8', timeout: 240_000, killSignal: 'SIGKILL', env: { ...process.env, CI: 'true' } });
}

describe('train when environment calls time out', () => {
  it.each([
    ['sampling on the main thread (it used to exit 0 silently)', 'runtime.inferenceWorkers=0'],
    ['sampling in an inference worker (it used to hang)', 'runtime.inferenceWorkers=1'],
  ])('fails with its result line and exit status 1, and releases the run folder: %s', (_name, placement) => {
    const runDir = join(dir, placement.replace(/\W/g, '-'));
    const run = train(runDir, placement);
    expect(run.signal).toBeNull();
    expect(run.status).toBe(1);
    expect(run.stdout).toContain(`run failed after 0 steps: ${runDir}`);
    expect(run.stderr).toMatch(/error: rollout failed: every episode of step 0 ended in error .*timed out after 1 ms/);
    expect(existsSync(join(runDir, 'run.db'))).toBe(true);
    expect(existsSync(join(runDir, 'writer.json'))).toBe(false);
    expect(existsSync(join(runDir, 'run.db-wal'))).toBe(false);
  });
});
