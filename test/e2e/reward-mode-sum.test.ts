import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig, resolveConfig } from '../../src/core/config.js';
import '../../src/envs/index.js';
import { trainRun } from '../../src/runtime/train/train-run.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-reward-sum-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const config = (env: Record<string, unknown>) => resolveConfig(parseConfig({ seed: 1, run: { dir, name: 'sum' }, env, reward: { mode: 'sum' } }));

describe('reward.mode sum on native environments', () => {
  it.each([
    [{ name: 'wordle' }, /reward\.mode.*wordle with these settings pays only a final reward.*turnRewards: true/],
    [{ name: 'babyai', settings: { levels: ['GoToRedBall'] } }, /reward\.mode.*babyai.*pays only a final reward; use 'outcome'$/],
    [{ name: 'sql' }, /reward\.mode.*sql/],
  ])('is refused before the run folder is written where the environment pays only at the end (%o)', async (env, message) => {
    await expect(trainRun({ config: config(env), runDir: join(dir, 'sum') })).rejects.toThrow(message);
    expect(existsSync(join(dir, 'sum'))).toBe(false);
  });
});
