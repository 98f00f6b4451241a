/**
 * kill -9 of the trainer while `checkpoints/latest` is being replaced (fault point
 * `checkpoint-latest-written`, at the second checkpoint), then `train --resume`: the run completes
 * and holds exactly the episodes, turns, curves and final weights of a fault-free run of the same seed.
 */
import type { ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, resolveConfig } from '../../src/core/config.js';
import { loadRunConfig } from '../../src/runtime/run-folder.js';
import { trainRun } from '../../src/runtime/train/train-run.js';
import { killProcess, spawnCli } from '../helpers/nats-run.js';
import { expectSameCurves, expectSameFinalWeights, expectSameStoredContent } from '../helpers/run-content.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-checkpoint-crash-'));
const procs: ChildProcess[] = [];
const STEPS = 3;
const PER_STEP = 16;

const raw = (name: string) => ({
  seed: 3,
  run: { dir, name },
  env: { name: 'babyai', settings: { levels: ['GoToRedBall'] } },
  algorithm: { tasksPerStep: 4, groupSize: 4 },
  horizon: { schedule: 'fixed', horizon: 5 },
  train: { steps: STEPS, evalEvery: 0, checkpointEvery: 1 },
});

const referenceDir = join(dir, 'reference');
beforeAll(async () => {
  const result = await trainRun({ config: resolveConfig(parseConfig(raw('reference'))), runDir: referenceDir });
  expect(result.status).toBe('finished');
});
afterEach(async () => {
  await Promise.all(procs.splice(0).map(killProcess));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a trainer killed with SIGKILL while checkpoints/latest is written', () => {
  it('resumes and ends with the stored content, curves and weights of an uninterrupted run', async () => {
    const runDir = join(dir, 'crashed');
    const configFile = join(dir, 'crashed.json');
    writeFileSync(configFile, JSON.stringify(raw('crashed')));
    const first = spawnCli(procs, ['train', configFile, '--run-dir', runDir], { TURNWISE_FAULT: 'checkpoint-latest-written@2' });
    await first.exit;
    expect(first.proc.signalCode, first.output()).toBe('SIGKILL');
    expect(first.output()).toContain("fault point 'checkpoint-latest-written' reached");

    const resumed = spawnCli(procs, ['train', '--resume', runDir]);
    expect(await resumed.exit, resumed.output()).toBe(0);
    expect(resumed.output()).toMatch(/run finished after 3 steps/);

    expectSameStoredContent(runDir, referenceDir, STEPS * PER_STEP);
    expectSameCurves(runDir, referenceDir, STEPS);
    await expectSameFinalWeights(runDir, referenceDir);
  });

  it('resumes a run folder whose latest is zero bytes (what the old in-place write left) from the newest complete checkpoint, saying so', async () => {
    const runDir = join(dir, 'empty-latest');
    cpSync(referenceDir, runDir, { recursive: true });
    writeFileSync(join(runDir, 'checkpoints', 'latest'), '');
    const messages: string[] = [];
    const config = await loadRunConfig(runDir, (c) => ({ ...c, train: { ...c.train, steps: STEPS + 1 } }));
    const result = await trainRun({ config, resumeDir: runDir, onEvent: (e) => 'message' in e && messages.push(e.message) });
    expect(result.status).toBe('finished');
    expect(result.completedSteps).toBe(STEPS + 1);
    expect(messages).toContain('resume: checkpoints/latest is empty; using step-000003, the newest complete checkpoint');
    expect(messages).toContain('resuming at step 3');
  });
});
