/**
 * A LoRA run's checkpoints hold only adapters; they must never go on another model dropped into the
 * `model.from` folder. A run trains on base A; the folder is then replaced by base B, of the same
 * shape and files (only the random weights differ): `--resume`, `eval` and `serve` of the run are
 * each refused naming both fingerprints and the folder. With A put back, the resume goes on.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig, resolveConfig } from '../../src/core/config.js';
import { InvalidConfigError } from '../../src/core/errors.js';
import { selectBackend } from '../../src/backend/select.js';
import { loadCheckpoint, resolveCheckpointDir } from '../../src/models/checkpoint.js';
import { baseModelIdentity } from '../../src/models/hf/fingerprint.js';
import { evalRun } from '../../src/runtime/eval-run.js';
import { loadRunConfig } from '../../src/runtime/run-folder.js';
import { trainRun } from '../../src/runtime/train/train-run.js';
import { loadServedModel } from '../../src/serve/load-model.js';
import { writeTinyChatModel } from '../serve/tiny-chat-model.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-base-fingerprint-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const folder = join(dir, 'base');
/** Room for GoToRedBall's first prompt (about 900 tokens with the reply); a shorter context is refused. */
const WIDE = { maxContext: 1024 };
const runDir = join(dir, 'lora-run');

async function refusal(work: Promise<unknown>): Promise<string> {
  const error = await work.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InvalidConfigError);
  return (error as Error).message;
}

describe("a LoRA run's base model", () => {
  it('is recorded in its checkpoints; another model in the folder is refused at resume, eval and serve, naming both; the original is accepted again', async () => {
    await selectBackend('wasm');
    await writeTinyChatModel(folder, 3, WIDE);
    const a = await baseModelIdentity(folder);
    const config = resolveConfig(
      parseConfig({
        seed: 5,
        run: { dir, name: 'lora-run' },
        env: { name: 'babyai', settings: { levels: ['GoToRedBall'] } },
        model: { from: folder, lora: { rank: 4, alpha: 8, dropout: 0 }, maxContext: WIDE.maxContext },
        sampling: { constrained: true, maxActionTokens: 8 },
        algorithm: { tasksPerStep: 2, groupSize: 2, maxTokensPerMicroBatch: 4096 },
        horizon: { schedule: 'fixed', horizon: 2 },
        train: { steps: 1, evalEvery: 0, evalTasks: 2, checkpointEvery: 1 },
      }),
    );
    const first = await trainRun({ config, runDir });
    expect(first.status, first.error ?? '').toBe('finished');
    const checkpoint = await loadCheckpoint(await resolveCheckpointDir(runDir));
    expect(checkpoint.state.baseModel).toEqual(a);

    // Same shape, same files, other weights.
    await writeTinyChatModel(folder, 4, WIDE);
    const b = await baseModelIdentity(folder);
    expect(b.sha256).not.toBe(a.sha256);
    const both = new RegExp(`${a.sha256.slice(0, 16)}.*${b.sha256.slice(0, 16)}`);

    const more = await loadRunConfig(runDir, (c) => ({ ...c, train: { ...c.train, steps: 2 } }));
    const resumed = await refusal(trainRun({ config: more, resumeDir: runDir }));
    expect(resumed).toMatch(/is not the base model this run was trained on/);
    expect(resumed).toMatch(both);
    expect(await refusal(evalRun(runDir, { split: 'test', tasks: 1 }))).toMatch(both);
    expect(await refusal(loadServedModel(runDir))).toMatch(both);

    await writeTinyChatModel(folder, 3, WIDE);
    const again = await trainRun({ config: more, resumeDir: runDir });
    expect(again.status, again.error ?? '').toBe('finished');
    expect(again.completedSteps).toBe(2);
  });
});
