/**
 * A `train` refused while it opens its models (here: a `model.from` whose config.json declares
 * 3,000,000 layers) leaves no claimed run folder behind: no writer.lock, no empty `<name>` folder,
 * so the next run of that name gets `<name>`, not `<name>-2`. A folder the user named that holds
 * files of theirs keeps them.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig, resolveConfig } from '../../src/core/config.js';
import { CheckpointError } from '../../src/core/errors.js';
import { selectBackend } from '../../src/backend/select.js';
import { trainRun } from '../../src/runtime/train/train-run.js';
import { writeTinyChatModel } from '../serve/tiny-chat-model.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-refused-folder-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Room for GoToRedBall's first prompt (about 900 tokens with the reply); a shorter context is refused. */
const WIDE = { maxContext: 1024 };

const config = (from: string) =>
  resolveConfig(
    parseConfig({
      seed: 5,
      run: { dir: join(dir, 'runs'), name: 'tiny' },
      env: { name: 'babyai', settings: { levels: ['GoToRedBall'] } },
      model: { from, lora: { rank: 4, alpha: 8, dropout: 0 }, maxContext: WIDE.maxContext },
      sampling: { constrained: true, maxActionTokens: 8 },
      algorithm: { tasksPerStep: 2, groupSize: 2, maxTokensPerMicroBatch: 4096 },
      horizon: { schedule: 'fixed', horizon: 2 },
      train: { steps: 1, evalEvery: 0, checkpointEvery: 0 },
    }),
  );

describe('a train refused while opening its models', () => {
  it('releases the run name: no folder left, and the next run of the name gets it', async () => {
    await selectBackend('wasm');
    const bad = await writeTinyChatModel(join(dir, 'bad'), 3, WIDE);
    writeFileSync(join(bad, 'config.json'), JSON.stringify({ ...JSON.parse(readFileSync(join(bad, 'config.json'), 'utf8')), num_hidden_layers: 3_000_000 }));
    await expect(trainRun({ config: config(bad) })).rejects.toBeInstanceOf(CheckpointError);
    expect(existsSync(join(dir, 'runs', 'tiny'))).toBe(false);
    const good = await writeTinyChatModel(join(dir, 'good'), 3, WIDE);
    const result = await trainRun({ config: config(good) });
    expect(result.status, result.error ?? '').toBe('finished');
    expect(result.runDir).toBe(join(dir, 'runs', 'tiny'));
  });

  it("leaves a folder the user named with the user's files in it, without the lock", async () => {
    const bad = join(dir, 'bad');
    const runDir = join(dir, 'mine');
    mkdirSync(runDir);
    writeFileSync(join(runDir, 'notes.txt'), 'mine');
    await expect(trainRun({ config: config(bad), runDir })).rejects.toBeInstanceOf(CheckpointError);
    expect(readdirSync(runDir)).toEqual(['notes.txt']);
  });
});
