/**
 * A run folder under concurrent and careless use, through the CLI, each case compared with a
 * fault-free run of the same seed (episodes, turns, curves, final weights):
 * - two writers: a second `train` on a folder being written is refused with the holder's pid, and
 *   the first run ends as if alone;
 * - `train` into a folder that holds a run is refused (no more `UNIQUE constraint failed: runs.id`),
 *   `--force` starts over;
 * - SIGTERM (and Ctrl-C) stop after the phase with a checkpoint: status `interrupted`, exit 143 (130);
 * - a writer killed with SIGKILL shows as `stale` (dashboard and eval), and the next writer takes over.
 *
 * Kill points come from `TURNWISE_FAULT` (src/core/fault-point.ts): the trainer freezes itself
 * (SIGSTOP) right after a step's trajectories are stored, and the test acts once the kernel reports
 * it stopped (a SIGCONT sent before the stop lands would be lost, and the trainer would stay stopped).
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, resolveConfig } from '../../src/core/config.js';
import { evalRun } from '../../src/runtime/eval-run.js';
import { trainRun } from '../../src/runtime/train/train-run.js';
import { RunStore } from '../../src/store/run-store.js';
import { createUiApp } from '../../src/ui/server/app.js';
import { type CliProcess, killProcess, spawnCli } from '../helpers/nats-run.js';
import { expectSameCurves, expectSameFinalWeights, expectSameStoredContent } from '../helpers/run-content.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-run-folder-'));
const procs: ChildProcess[] = [];
const STEPS = 3;
const PER_STEP = 16;

const raw = (name: string) => ({
  seed: 11,
  run: { dir, name },
  env: { name: 'babyai', settings: { levels: ['GoToRedBall'] } },
  algorithm: { tasksPerStep: 4, groupSize: 4 },
  horizon: { schedule: 'fixed', horizon: 5 },
  train: { steps: STEPS, evalEvery: 0, evalTasks: 4, checkpointEvery: 1 },
});
const configFile = join(dir, 'config.json');
const referenceDir = join(dir, 'reference');

beforeAll(async () => {
  writeFileSync(configFile, JSON.stringify(raw('case')));
  const result = await trainRun({ config: resolveConfig(parseConfig(raw('reference'))), runDir: referenceDir });
  expect(result.status).toBe('finished');
});
afterEach(async () => {
  await Promise.all(procs.splice(0).map(killProcess));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Freezes the trainer right after the n-th training step's trajectories are stored. */
const freezeAt = (n: number) => ({ TURNWISE_FAULT: `trajectories-stored@${n}:stop` });
const frozen = (p: CliProcess) => p.frozenAt('trajectories-stored');

function expectSameAsReference(runDir: string): Promise<void> {
  expectSameStoredContent(runDir, referenceDir, STEPS * PER_STEP);
  expectSameCurves(runDir, referenceDir, STEPS);
  return expectSameFinalWeights(runDir, referenceDir);
}

function storedRuns(runDir: string): { status: string; count: number } {
  const store = RunStore.open(runDir, { readonly: true });
  try {
    return { status: store.run()?.status ?? 'none', count: store.runs().length };
  } finally {
    store.close();
  }
}

describe('one writer per run folder', () => {
  it('refuses a second writer with the holder pid while a run is being written; the first run ends as if alone', async () => {
    const runDir = join(dir, 'two-writers');
    const first = spawnCli(procs, ['train', configFile, '--run-dir', runDir], freezeAt(2));
    await frozen(first);
    for (const args of [['train', '--resume', runDir], ['train', configFile, '--run-dir', runDir, '--force']]) {
      const second = spawnCli(procs, args);
      expect(await second.exit, second.output()).toBe(2);
      expect(second.output()).toContain(`RunFolderLockedError: run folder ${runDir} is being written by pid ${first.proc.pid} on `);
    }
    first.proc.kill('SIGCONT');
    expect(await first.exit, first.output()).toBe(0);
    expect(storedRuns(runDir)).toEqual({ status: 'completed', count: 1 });
    await expectSameAsReference(runDir);
  });

  it('refuses `train` into a folder that holds a run, and starts over there with --force', async () => {
    const runDir = join(dir, 'reused-folder');
    const first = await trainRun({ config: resolveConfig(parseConfig(raw('case'))), runDir });
    expect(first.status).toBe('finished');
    const refused = spawnCli(procs, ['train', configFile, '--run-dir', runDir]);
    expect(await refused.exit, refused.output()).toBe(2);
    expect(refused.output()).toContain(`RunFolderExistsError: run folder ${runDir} already holds a run; continue it with \`turnwise train --resume ${runDir}\`, or start over with --force (deletes its run.db, config.json, tokenizer.json, checkpoints; other files stay)`);
    expect(refused.output()).not.toMatch(/UNIQUE constraint/);
    await expectSameAsReference(runDir);

    writeFileSync(join(runDir, 'notes.txt'), 'mine');
    const again = spawnCli(procs, ['train', configFile, '--run-dir', runDir, '--force']);
    expect(await again.exit, again.output()).toBe(0);
    const store = RunStore.open(runDir, { readonly: true });
    const [run] = store.runs();
    store.close();
    expect(run?.id).not.toBe(first.runId); // a new run, not the old one continued
    expect(storedRuns(runDir)).toEqual({ status: 'completed', count: 1 });
    await expectSameAsReference(runDir);
  });
});

describe('stop signals', () => {
  it('stops on SIGTERM and on Ctrl-C after the phase with a checkpoint (interrupted, exit 143 / 130); resume ends as an uninterrupted run', async () => {
    const runDir = join(dir, 'signals');
    const first = spawnCli(procs, ['train', configFile, '--run-dir', runDir], freezeAt(1));
    await frozen(first);
    first.proc.kill('SIGTERM');
    first.proc.kill('SIGCONT');
    expect(await first.exit, first.output()).toBe(143);
    expect(first.output()).toMatch(/SIGTERM: stopping after the current phase/);
    expect(first.output()).toMatch(/run stopped after 1 steps/);
    expect(storedRuns(runDir).status).toBe('interrupted');

    const second = spawnCli(procs, ['train', '--resume', runDir], freezeAt(1));
    await frozen(second);
    second.proc.kill('SIGINT');
    second.proc.kill('SIGCONT');
    expect(await second.exit, second.output()).toBe(130);
    expect(second.output()).toMatch(/run stopped after 2 steps/);
    expect(storedRuns(runDir).status).toBe('interrupted');

    const last = spawnCli(procs, ['train', '--resume', runDir]);
    expect(await last.exit, last.output()).toBe(0);
    expect(storedRuns(runDir).status).toBe('completed');
    await expectSameAsReference(runDir);
  });

  it('shows a writer killed with SIGKILL as stale in the dashboard and in eval; the next writer takes over and the run ends as an uninterrupted one', async () => {
    const runDir = join(dir, 'killed');
    const first = spawnCli(procs, ['train', configFile, '--run-dir', runDir], freezeAt(2));
    await frozen(first);
    await killProcess(first.proc);
    expect(storedRuns(runDir).status).toBe('running');

    const ui = createUiApp({ runsDir: dir });
    try {
      const { runs } = (await (await ui.app.request('/api/runs')).json()) as { runs: { folder: string; status: string }[] };
      expect(runs.find((r) => r.folder === 'killed')?.status).toBe('stale');
      expect(runs.find((r) => r.folder === 'reference')?.status).toBe('completed');
    } finally {
      ui.close();
    }
    const evaluated = await evalRun(runDir, { split: 'test', tasks: 2 });
    expect(evaluated.runStatus).toEqual({ status: 'stale', writerPid: first.proc.pid });

    const resumed = spawnCli(procs, ['train', '--resume', runDir]);
    expect(await resumed.exit, resumed.output()).toBe(0);
    expect(resumed.output()).toContain(`took over the run folder from pid ${first.proc.pid} on `);
    await expectSameAsReference(runDir);
  });
});
