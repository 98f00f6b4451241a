import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig, resolveConfig } from '../../src/core/config.js';
import { trainRun } from '../../src/runtime/train/train-run.js';
import { learningSeed, reportFigures } from './figures.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-learning-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('GRPO on BabyAI GoToRedBall (fixed seed, small budget)', () => {
  it('raises held-out success well above the untrained policy within 10 steps', async () => {
    const config = resolveConfig(
      parseConfig({
        seed: learningSeed(7),
        run: { dir, name: 'learning' },
        env: { name: 'babyai', settings: { levels: ['GoToRedBall'] } },
        algorithm: { tasksPerStep: 8, groupSize: 8, lr: 0.001 },
        horizon: { schedule: 'fixed', horizon: 5 },
        train: { steps: 10, evalEvery: 10, evalTasks: 128, checkpointEvery: 0 },
      }),
    );
    const result = await trainRun({ config, runDir: join(dir, 'learning') });
    expect(result.status).toBe('finished');
    const [before, after] = result.evals;
    reportFigures('babyai-grpo', { seed: config.seed, before: before?.successRate ?? Number.NaN, after: after?.successRate ?? Number.NaN });
    expect(before?.step).toBe(0);
    expect(after?.step).toBe(10);
    // Untrained: about 0.4 (it picks uniformly among the listed actions); trained: about 0.65+.
    // Bound from the spread study (docs/testing.md): the gain over 14 runs — the fixed seed under OpenBLAS's
    // Cooperlake (OpenBLAS's own pick on this machine; turnwise asks for Zen since issue 31), Haswell, SkylakeX, Zen and Sandybridge kernels and the wasm path
    // (all six alike), and seeds 101–108 on the default kernel — ranged 0.188–0.320; the bound sits at least
    // 0.05 (about one standard error of a held-out success rate near 0.5) below the lowest.
    // `node --import tsx scripts/learning-spread.ts --tests babyai-grpo --seeds fixed` (six kernels), then
    // `--kernels default --seeds 101,…,108`.
    expect(after!.successRate).toBeGreaterThanOrEqual(before!.successRate + 0.1);
  });
});
