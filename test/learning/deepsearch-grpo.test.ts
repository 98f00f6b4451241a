import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig, resolveConfig } from '../../src/core/config.js';
import '../../src/envs/index.js';
import { trainRun } from '../../src/runtime/train/train-run.js';
import { learningSeed, reportFigures } from './figures.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-learning-deepsearch-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('GRPO on deep search, one-hop "capital of <country>" questions (fixed seed, small budget)', () => {
  it('raises held-out success well above the untrained policy', async () => {
    const config = resolveConfig(
      parseConfig({
        seed: learningSeed(5),
        run: { dir, name: 'learning' },
        // 202 train / 25 test questions; each test question sampled 4 times per evaluation. Turn 1
        // offers only <search>country</search>; turn 2 offers the first documents' capitals as
        // <answer>s (the top one is right) and further <search>es, which the 2-turn horizon cuts off.
        env: { name: 'deepsearch', settings: { templates: ['hops1/country_capital'], topK: 3, candidates: true, testRepeats: 4 } },
        tokenizer: { vocabSize: 512, corpusEpisodes: 200 },
        model: { maxContext: 256 },
        context: { history: 0, includeInstruction: false }, // turn 2 needs only the documents
        sampling: { maxActionTokens: 24 },
        algorithm: { tasksPerStep: 8, groupSize: 8, lr: 0.003 },
        horizon: { schedule: 'fixed', horizon: 2 },
        train: { steps: 8, evalEvery: 8, evalTasks: 100, checkpointEvery: 0 },
      }),
    );
    const result = await trainRun({ config, runDir: join(dir, 'learning') });
    expect(result.status).toBe('finished');
    const [before, after] = result.evals;
    reportFigures('deepsearch-grpo', { seed: config.seed, before: before?.successRate ?? Number.NaN, after: after?.successRate ?? Number.NaN });
    expect(before?.step).toBe(0);
    expect(after?.step).toBe(8);
    console.log(`deepsearch hops1/country_capital held-out success: ${before!.successRate.toFixed(3)} -> ${after!.successRate.toFixed(3)}`);
    // Untrained: about 0.3-0.5 (it often searches again on turn 2); trained: about 0.9.
    // Bound from the spread study (docs/testing.md): the gain over 10 runs — the fixed seed under OpenBLAS's
    // Cooperlake (OpenBLAS's own pick on this machine; turnwise asks for Zen since issue 31), Haswell, SkylakeX, Zen and Sandybridge kernels and the wasm path
    // (all six alike), and seeds 101–104 on the default kernel — ranged 0.360–0.580; the bound sits at least
    // 0.05 (about one standard error of a held-out success rate near 0.5) below the lowest.
    // `node --import tsx scripts/learning-spread.ts --tests deepsearch-grpo --seeds fixed` (six kernels),
    // then `--kernels default --seeds 101,…,104`.
    expect(after!.successRate).toBeGreaterThanOrEqual(before!.successRate + 0.2);
  });
});
