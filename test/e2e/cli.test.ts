import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RunStore } from '../../src/store/run-store.js';
import { evalRun } from '../../src/runtime/eval-run.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function turnwise(...args: string[]) {
  return spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { encoding: 'utf8', env: { ...process.env, CI: 'true' } });
}

describe('turnwise CLI', () => {
  it('trains from a YAML config, writes a run folder, and `eval` reloads the checkpoint with the same score', async () => {
    const configPath = join(dir, 'tiny.yaml');
    writeFileSync(
      configPath,
      [
        'seed: 2',
        `run: { dir: ${JSON.stringify(dir)}, name: tiny }`,
        'env: { name: babyai, settings: { levels: [GoToRedBall] } }',
        'algorithm: { tasksPerStep: 4, groupSize: 4 }',
        'train: { steps: 2, evalEvery: 2, evalTasks: 24, checkpointEvery: 2 }',
      ].join('\n'),
    );
    const run = turnwise('train', configPath);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/backend: (wasm|cpu|tensorflow)/);
    expect(run.stdout).toMatch(/step 2\/2 success [\d.]+ \| turns [\d.]+ \| horizon 5 \| \d+ tok\/s \| eval /);
    expect(run.stdout).toMatch(/eval @ step 2 \([0-9ms]+\): held-out success ([\d.]+) on 24 test tasks/);
    const runDir = join(dir, 'tiny');
    for (const file of ['run.db', 'config.json', 'tokenizer.json', 'checkpoints/latest', 'checkpoints/step-000002/model.safetensors']) {
      expect(existsSync(join(runDir, file)), file).toBe(true);
    }
    const store = RunStore.open(runDir, { readonly: true });
    expect(store.metricsSeries('rollout/successRate')).toHaveLength(2);
    expect(store.episodes({ split: 'train' })).toHaveLength(2 * 16);
    const trainedEval = store.metricsSeries('eval/successRate').find((p) => p.step === 2)?.value;
    store.close();

    // Same fixed evaluation seeds and the same weights: the reloaded checkpoint scores the same.
    const reloaded = await evalRun(runDir, { split: 'test', tasks: 24 });
    expect(reloaded.step).toBe(2);
    expect(reloaded.summary.successRate).toBeCloseTo(trainedEval as number, 10);

    const cli = turnwise('eval', runDir, '--tasks', '24', '--json');
    expect(cli.status).toBe(0);
    expect(JSON.parse(cli.stdout).summary.successRate).toBeCloseTo(trainedEval as number, 10);
  });

  it('rejects a config with an unknown key, naming its path, without starting a run', () => {
    const configPath = join(dir, 'bad.yaml');
    writeFileSync(configPath, `run: { dir: ${JSON.stringify(dir)}, name: bad }\nalgorithm: { learningRate: 0.1 }\n`);
    const run = turnwise('train', configPath);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/algorithm\.learningRate/);
    expect(existsSync(join(dir, 'bad'))).toBe(false);
  });

  it('rejects a wrongly typed value, naming its path', () => {
    const configPath = join(dir, 'bad-type.yaml');
    writeFileSync(configPath, 'train: { steps: many }\n');
    const run = turnwise('train', configPath);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/train\.steps/);
  });
});
