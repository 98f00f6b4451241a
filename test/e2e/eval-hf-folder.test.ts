/**
 * `turnwise eval` on a Hugging Face model folder (issue #32): the model as downloaded, talking
 * through its own chat template in free text, on the default environment's test split — as a
 * researcher who downloads a model would try it before training.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeTinyChatModel } from '../serve/tiny-chat-model.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-eval-hf-'));
let folder: string;
beforeAll(async () => {
  folder = await writeTinyChatModel(join(dir, 'SmolTiny-Instruct'), 5, { maxContext: 4096 });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('turnwise eval <Hugging Face folder>', () => {
  it('evaluates the folder as it is: its table, on the default environment, with the model named', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'eval', folder, '--tasks', '3', '--json'], { encoding: 'utf8', env: { ...process.env, CI: 'true' }, timeout: 240_000 });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const result = JSON.parse(run.stdout);
    expect(result.checkpoint).toBe(folder);
    expect(result.step).toBe(0);
    expect(result.runStatus).toBeNull();
    expect(result.summary.episodes).toBe(3);
    // Free text through the chat template: every episode ran (none failed to start).
    expect(result.summary.errorRate).toBe(0);
  });
});
