import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig, parseConfig, resolveConfig } from '../../src/core/config.js';
import { trainRun } from '../../src/runtime/train-run.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-learning-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('REINFORCE++ (KL in the reward, batch-whitened returns) on BabyAI GoToRedBall (fixed seed, small budget)', () => {
  it('raises held-out success well above the untrained policy within 10 steps', async () => {
    // The shipped config, with a 10-step budget and a smaller evaluation.
    const shipped = loadConfig('configs/babyai-reinforce_pp.yaml');
    const config = resolveConfig(
      parseConfig({ ...shipped, run: { dir, name: 'learning' }, train: { steps: 10, evalEvery: 10, evalTasks: 128, checkpointEvery: 0 } }),
    );
    const result = await trainRun({ config, runDir: join(dir, 'learning') });
    expect(result.status).toBe('finished');
    const [before, after] = result.evals;
    expect(before?.step).toBe(0);
    expect(after?.step).toBe(10);
    // Untrained: about 0.4 (it picks uniformly among the listed actions).
    expect(after!.successRate).toBeGreaterThanOrEqual(before!.successRate + 0.15);
  });
});
