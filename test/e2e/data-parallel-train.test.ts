import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig, resolveConfig, type TurnwiseConfigInput } from '../../src/core/config.js';
import { trainRun } from '../../src/runtime/train/train-run.js';
import { RunStore } from '../../src/store/run-store.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-dp-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const config = (name: string, dataParallel: number): TurnwiseConfigInput => ({
  seed: 5,
  run: { dir, name },
  env: { name: 'babyai', settings: { levels: ['GoToRedBall'] } },
  algorithm: { tasksPerStep: 4, groupSize: 4, maxTokensPerMicroBatch: 512 },
  horizon: { schedule: 'fixed', horizon: 3 },
  train: { steps: 3, evalEvery: 0, evalTasks: 8, checkpointEvery: 3, dataParallel },
});

function series(runDir: string, name: string): number[] {
  const store = RunStore.open(runDir, { readonly: true });
  const values = store.metricsSeries(name).map((p) => p.value);
  store.close();
  return values;
}

describe('turnwise train with train.dataParallel: 2', () => {
  it('follows the single-process run (same rollouts, same losses) and checkpoints as usual', async () => {
    const one = await trainRun({ config: resolveConfig(parseConfig(config('one', 1))), runDir: join(dir, 'one') });
    const two = await trainRun({ config: resolveConfig(parseConfig(config('two', 2))), runDir: join(dir, 'two') });
    expect(two.status).toBe('finished');
    expect(two.completedSteps).toBe(3);
    // Step 1 samples with identical initial weights; later steps with weights equal to ~1e-7, which
    // flips a sampled token only if a uniform draw lands within ~1e-7 of a boundary.
    expect(series(join(dir, 'two'), 'rollout/successRate')).toEqual(series(join(dir, 'one'), 'rollout/successRate'));
    const lossOne = series(join(dir, 'one'), 'loss/policy');
    const lossTwo = series(join(dir, 'two'), 'loss/policy');
    expect(lossTwo).toHaveLength(3);
    lossTwo.forEach((x, i) => {
      expect(x).toBeCloseTo(lossOne[i], 5);
    });
    expect(existsSync(join(dir, 'two', 'checkpoints', 'step-000003', 'optimizer.safetensors'))).toBe(true);
    expect(one.status).toBe('finished');
  });
});
