import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig, resolveConfig } from '../../src/core/config.js';
import '../../src/envs/index.js';
import { trainRun } from '../../src/runtime/train/train-run.js';
import { learningSeed, reportFigures } from './figures.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-learning-sql-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('GRPO on text-to-SQL, aggregate questions with 2 candidate queries (fixed seed, small budget)', () => {
  it('raises held-out success well above picking a candidate at random', async () => {
    const config = resolveConfig(
      parseConfig({
        seed: learningSeed(3),
        run: { dir, name: 'learning' },
        // 198 train / 42 test questions; each test question sampled 3 times per evaluation.
        env: { name: 'sql', settings: { databases: ['cars', 'penguins', 'weather'], families: ['aggregate'], candidates: 2, testRepeats: 3 } },
        // A 1024-token vocabulary (907 learned) shortens the schema + query sequences, which is most of the cost.
        tokenizer: { vocabSize: 1024, corpusEpisodes: 200 },
        model: { maxContext: 256 },
        sampling: { maxActionTokens: 48 },
        algorithm: { tasksPerStep: 8, groupSize: 8, lr: 0.003 },
        horizon: { schedule: 'fixed', horizon: 1 },
        train: { steps: 20, evalEvery: 20, evalTasks: 126, checkpointEvery: 0 },
      }),
    );
    const result = await trainRun({ config, runDir: join(dir, 'learning') });
    expect(result.status).toBe('finished');
    const [before, after] = result.evals;
    reportFigures('sql-grpo', { seed: config.seed, before: before?.successRate ?? Number.NaN, after: after?.successRate ?? Number.NaN });
    expect(before?.step).toBe(0);
    expect(after?.step).toBe(20);
    console.log(`sql aggregate held-out success: ${before!.successRate.toFixed(3)} -> ${after!.successRate.toFixed(3)}`);
    // Untrained: about 0.5 (one of two candidates); trained: well above.
    // Bound from the spread study (docs/testing.md): with 10 steps the gain over 10 runs (the fixed seed
    // under six kernels, all alike, and seeds 101–104) ranged 0.127–0.365, too close to any useful bound;
    // with 20 steps it ranged 0.246–0.381 over the fixed seed and seeds 101–104 (default kernel); the bound
    // sits at least 0.05 (about one standard error of a held-out success rate near 0.5) below the lowest.
    // `node --import tsx scripts/learning-spread.ts --tests sql-grpo --kernels default --seeds fixed,101,102,103,104`.
    expect(after!.successRate).toBeGreaterThanOrEqual(before!.successRate + 0.15);
  });
});
