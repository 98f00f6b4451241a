import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig, resolveConfig, type TurnwiseConfigInput } from '../../src/core/config.js';
import { RunStore } from '../../src/store/run-store.js';
import { loadRunConfig } from '../../src/runtime/run-folder.js';
import { trainRun } from '../../src/runtime/train/train-run.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-resume-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Metrics that depend only on seeds and data (not on wall-clock time).
const DETERMINISTIC = [
  'rollout/successRate',
  'rollout/meanReward',
  'rollout/meanTurns',
  'rollout/truncationRate',
  'horizon/current',
  'horizon/stage',
  'loss/policy',
  'loss/entropy',
  'loss/approxKl',
  'optim/gradNorm',
  'advantage/absMean',
  'policy/version',
];

function series(runDir: string): Record<string, number[]> {
  const store = RunStore.open(runDir, { readonly: true });
  const out: Record<string, number[]> = {};
  for (const name of DETERMINISTIC) out[name] = store.metricsSeries(name).map((p) => p.value);
  store.close();
  return out;
}

const base = (name: string, steps: number): TurnwiseConfigInput => ({
  seed: 3,
  run: { dir, name },
  env: { name: 'babyai', settings: { levels: ['GoToRedBall'] } },
  algorithm: { tasksPerStep: 4, groupSize: 4 },
  // Stage boundary exactly at the resume point: AgentGym-RL would skip a stage here.
  horizon: { schedule: 'stepwise', horizons: [2, 3, 4], every: 2 },
  train: { steps, evalEvery: 0, evalTasks: 8, checkpointEvery: 2 },
});

describe('turnwise train --resume', () => {
  it('continues with the same step count, horizon stage, optimizer state and random streams (N + resume + N = 2N)', async () => {
    const straight = await trainRun({ config: resolveConfig(parseConfig(base('straight', 4))), runDir: join(dir, 'straight') });
    expect(straight.status).toBe('finished');

    const firstHalf = await trainRun({ config: resolveConfig(parseConfig(base('resumed', 2))), runDir: join(dir, 'resumed') });
    expect(firstHalf.completedSteps).toBe(2);
    const resumedConfig = await loadRunConfig(join(dir, 'resumed'), (c) => ({ ...c, train: { ...c.train, steps: 4 } }));
    const secondHalf = await trainRun({ config: resumedConfig, resumeDir: join(dir, 'resumed') });
    expect(secondHalf.status).toBe('finished');
    expect(secondHalf.completedSteps).toBe(4);

    const a = series(join(dir, 'straight'));
    const b = series(join(dir, 'resumed'));
    expect(a['horizon/current']).toEqual([2, 2, 3, 3]);
    for (const name of DETERMINISTIC) expect(b[name], name).toEqual(a[name]);
    // The final weights are bit-identical.
    const weights = (runDir: string) => readFileSync(join(runDir, 'checkpoints', 'step-000004', 'model.safetensors'));
    expect(weights(join(dir, 'resumed')).equals(weights(join(dir, 'straight')))).toBe(true);
  });
});
