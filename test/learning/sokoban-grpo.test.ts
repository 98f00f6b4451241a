import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig, resolveConfig } from '../../src/core/config.js';
import '../../src/envs/index.js';
import { trainRun } from '../../src/runtime/train/train-run.js';
import { RunStore } from '../../src/store/run-store.js';
import { learningSeed, reportFigures } from './figures.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-learning-sokoban-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const STEPS = 48;
/** Steps averaged at each end of training: 6 steps are 384 training episodes. */
const WINDOW = 6;

/** Mean training success (rollout/successRate) over the first and the last {@link WINDOW} steps. */
function trainingSuccess(runDir: string): { first: number; last: number } {
  const store = RunStore.open(runDir, { readonly: true });
  try {
    const series = store.metricsSeries('rollout/successRate').map((p) => p.value);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    return { first: mean(series.slice(0, WINDOW)), last: mean(series.slice(-WINDOW)) };
  } finally {
    store.close();
  }
}

describe('GRPO on Sokoban, one box in a 5x5 room (rooms that may need a single push) (fixed seed, small budget)', () => {
  it('raises held-out success well above the untrained policy within 48 steps', async () => {
    const config = resolveConfig(
      parseConfig({
        seed: learningSeed(7),
        run: { dir, name: 'learning' },
        env: { name: 'sokoban', settings: { width: 5, height: 5, boxes: 1, minSolutionMoves: 1 } },
        tokenizer: { vocabSize: 512, corpusEpisodes: 200 },
        algorithm: { tasksPerStep: 8, groupSize: 8, lr: 0.001 },
        horizon: { schedule: 'fixed', horizon: 6 },
        train: { steps: STEPS, evalEvery: STEPS, evalTasks: 128, checkpointEvery: 0 },
      }),
    );
    const runDir = join(dir, 'learning');
    const result = await trainRun({ config, runDir });
    expect(result.status).toBe('finished');
    const [before, after] = result.evals;
    const training = trainingSuccess(runDir);
    reportFigures('sokoban-grpo', {
      seed: config.seed,
      before: before?.successRate ?? Number.NaN,
      after: after?.successRate ?? Number.NaN,
      trainFirst: training.first,
      trainLast: training.last,
    });
    expect(before?.step).toBe(0);
    expect(after?.step).toBe(STEPS);
    // Untrained: about 0.45 (many rooms need one or two pushes); trained: about 0.7 on held-out rooms.
    // Bound and budget from the spread study (docs/testing.md). At 24 steps and lr 0.003 the gain over
    // 14 runs (the fixed seed under six kernels, 0.226–0.234, and seeds 101–108) ranged -0.063–0.336:
    // seed 106's training success fell from 0.44 to 0.30, seed 104 gained 0.039. At 48 steps and lr
    // 0.001 every seed learns: the gain ranged 0.156–0.289 over the fixed seed (default, Haswell and wasm:
    // 0.258–0.273) and seeds 101, 102, 104, 105, 106 (default kernel); the bound sits at least 0.05 (about
    // one standard error of a held-out success rate near 0.5) below the lowest.
    // `node --import tsx scripts/learning-spread.ts --tests sokoban-grpo --kernels default --seeds fixed,101,102,104,105,106`,
    // then `--kernels Haswell,wasm --seeds fixed`.
    expect(after!.successRate).toBeGreaterThanOrEqual(before!.successRate + 0.1);
  });
});
