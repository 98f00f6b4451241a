import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/exit-codes.js';
import { planTrain } from '../../src/cli/train-plan.js';
import { parseConfig, resolveConfig } from '../../src/core/config.js';
import { saveRunConfig } from '../../src/runtime/run-folder.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-train-plan-'));
const runDir = join(dir, 'run');
const configPath = join(dir, 'base.yaml');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// A run folder as training leaves it after 10 of 10 steps (only what planning reads).
beforeAll(async () => {
  writeFileSync(configPath, 'train: { steps: 60 }\n');
  mkdirSync(join(runDir, 'checkpoints', 'step-000010'), { recursive: true });
  await saveRunConfig(runDir, resolveConfig(parseConfig({ train: { steps: 10 } })));
  writeFileSync(join(runDir, 'checkpoints', 'latest'), 'step-000010\n');
  writeFileSync(join(runDir, 'checkpoints', 'step-000010', 'trainer_state.json'), JSON.stringify({ step: 10 }));
  // The other files a complete checkpoint has (only their presence is checked here).
  for (const file of ['config.json', 'model.safetensors', 'tokenizer.json', 'optimizer.safetensors']) writeFileSync(join(runDir, 'checkpoints', 'step-000010', file), '');
});

describe('planTrain', () => {
  it('is a usage error to give neither a config nor --resume', async () => {
    await expect(planTrain({ set: [] })).rejects.toThrow(UsageError);
  });

  it('applies --set and --steps to a config file, --steps last', async () => {
    const plan = await planTrain({ configPath, set: ['train.steps=7', 'algorithm.lr=1e-4'], steps: 9 });
    expect(plan.config.train.steps).toBe(9);
    expect(plan.config.algorithm.lr).toBe(1e-4);
    expect(plan.warnings).toEqual([]);
  });

  it('extends a resumed run with --steps, silently when it does something', async () => {
    const plan = await planTrain({ resume: runDir, steps: 20, set: [] });
    expect(plan.startStep).toBe(10);
    expect(plan.config.train.steps).toBe(20);
    expect(plan.warnings).toEqual([]);
  });

  it('warns that --steps at or below the completed steps does nothing', async () => {
    const plan = await planTrain({ resume: runDir, steps: 5, set: [] });
    expect(plan.warnings).toEqual([expect.stringMatching(/^--steps 5 does nothing: the run has completed 10 steps already/)]);
  });

  it('warns that resuming a finished run without --steps does nothing', async () => {
    const plan = await planTrain({ resume: runDir, set: [] });
    expect(plan.warnings).toEqual([expect.stringMatching(/completed all its 10 steps: nothing to do/)]);
  });

  it('warns that a config file given with --resume is not read', async () => {
    const plan = await planTrain({ resume: runDir, configPath, steps: 30, set: [] });
    expect(plan.config.train.steps).toBe(30);
    expect(plan.warnings).toEqual([expect.stringContaining(`the config file ${configPath} is not read`)]);
  });

  it('refuses --set and --run-dir with --resume', async () => {
    await expect(planTrain({ resume: runDir, set: ['algorithm.lr=1'] })).rejects.toThrow(/--set cannot change a resumed run/);
    await expect(planTrain({ resume: runDir, runDir: join(dir, 'other'), set: [] })).rejects.toThrow(/--run-dir and --resume/);
  });
});
