/**
 * What `--resume` finds in a run folder a crash left behind: `latest` missing, empty, naming a
 * folder that is gone or incomplete → the newest complete `step-*` folder, with a message saying so;
 * and what the atomic writers leave (no temporary names, extra files through the same path).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { writeFileAtomic, writeFolderAtomic } from '../../src/core/atomic-file.js';
import { CheckpointError } from '../../src/core/errors.js';
import { parseFaultSpec } from '../../src/core/fault-point.js';
import { checkpointFiles, locateCheckpoint, REQUIRED_CHECKPOINT_FILES, writeCheckpoint } from '../../src/models/checkpoint.js';

const root = mkdtempSync(join(tmpdir(), 'turnwise-ckpt-recovery-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let runDir: string;
let n = 0;
beforeEach(() => {
  runDir = join(root, `run-${n++}`);
});

const content = (step: number) => ({
  step,
  hfConfig: { architectures: ['LlamaForCausalLM'] },
  weights: new Map([['w', { shape: [2], data: new Float32Array([step, -step]) }]]),
  tokenizerJson: { model: 'x' },
  optimizer: new Map([['m', { shape: [1], data: new Float32Array([0.5]) }]]),
  state: { policyVersion: step },
});
const save = (step: number) => writeCheckpoint(runDir, step, checkpointFiles(content(step)));
const ckpt = (name: string) => join(runDir, 'checkpoints', name);

describe('finding the checkpoint to resume from', () => {
  it('uses the folder latest names when it is complete, with no message', async () => {
    await save(1);
    await save(2);
    expect(await locateCheckpoint(runDir)).toEqual({ dir: ckpt('step-000002'), fallback: null });
    expect(readFileSync(ckpt('latest'), 'utf8')).toBe('step-000002\n');
  });

  it('falls back to the newest complete checkpoint when latest is empty (a kill -9 during the old in-place write) and says so', async () => {
    await save(1);
    await save(2);
    writeFileSync(ckpt('latest'), '');
    const found = await locateCheckpoint(runDir);
    expect(found.dir).toBe(ckpt('step-000002'));
    expect(found.fallback).toBe('checkpoints/latest is empty; using step-000002, the newest complete checkpoint');
  });

  it('falls back when latest is missing, names a folder that is gone, or names an incomplete one', async () => {
    await save(1);
    await save(2);
    await save(3);
    rmSync(ckpt('latest'));
    expect((await locateCheckpoint(runDir)).fallback).toMatch(/^checkpoints\/latest cannot be read \(ENOENT\); using step-000003/);
    writeFileSync(ckpt('latest'), 'step-000009\n');
    expect((await locateCheckpoint(runDir)).fallback).toMatch(/names step-000009, which is incomplete \(no config\.json\); using step-000003/);
    // step-3 lost a file, step-2's state disagrees with its name: step-1 is the newest complete one.
    rmSync(join(ckpt('step-000003'), 'optimizer.safetensors'));
    writeFileSync(join(ckpt('step-000002'), 'trainer_state.json'), '{"step": 5}');
    writeFileSync(ckpt('latest'), 'step-000003\n');
    const found = await locateCheckpoint(runDir);
    expect(found.dir).toBe(ckpt('step-000001'));
    expect(found.fallback).toMatch(/names step-000003, which is incomplete \(no optimizer\.safetensors\); using step-000001/);
  });

  it('refuses, naming the run folder and what was checked, when no complete checkpoint is left', async () => {
    await save(1);
    rmSync(join(ckpt('step-000001'), 'model.safetensors'));
    writeFileSync(ckpt('latest'), '');
    const error = await locateCheckpoint(runDir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CheckpointError);
    expect((error as Error).message).toContain(runDir);
    expect((error as Error).message).toMatch(/latest is empty, and no complete checkpoint folder is left under checkpoints\/ \(1 step-\* folders checked\)/);
  });

  it('takes a checkpoint folder given directly as it is', async () => {
    await save(4);
    expect(await locateCheckpoint(ckpt('step-000004'))).toEqual({ dir: ckpt('step-000004'), fallback: null });
  });
});

describe('atomic checkpoint writes', () => {
  it('leaves no temporary names, writes extra files through the same path, and replaces a folder of the same step whole', async () => {
    await writeCheckpoint(runDir, 1, [...checkpointFiles(content(1)), { name: 'generation_config.json', data: '{"do_sample": true}' }]);
    expect(readdirSync(ckpt('step-000001')).sort()).toEqual([...REQUIRED_CHECKPOINT_FILES, 'model.safetensors', 'generation_config.json'].sort());
    await writeCheckpoint(runDir, 1, checkpointFiles(content(1)));
    expect(readdirSync(ckpt('step-000001')).sort()).toEqual([...REQUIRED_CHECKPOINT_FILES, 'model.safetensors'].sort());
    expect(readdirSync(join(runDir, 'checkpoints')).sort()).toEqual(['latest', 'step-000001']);
  });

  it('removes the leftovers of a writer killed mid-write before writing the next checkpoint', async () => {
    await save(1);
    mkdirSync(ckpt('.tmp-step-000002-123-abcd'));
    writeFileSync(ckpt('.latest.tmp-123-abcd'), 'step-000002\n');
    await save(2);
    expect(readdirSync(join(runDir, 'checkpoints')).sort()).toEqual(['latest', 'step-000001', 'step-000002']);
  });

  it('keeps the old file when the write fails before the rename', async () => {
    mkdirSync(runDir, { recursive: true });
    const file = join(runDir, 'config.json');
    await writeFileAtomic(file, 'old');
    await expect(
      writeFileAtomic(file, 'new', {
        beforeRename: () => {
          throw new Error('crash');
        },
      }),
    ).rejects.toThrow('crash');
    expect(readFileSync(file, 'utf8')).toBe('old');
    expect(readdirSync(runDir)).toEqual(['config.json']);
  });

  it('refuses file names that would escape the folder or collide with temporary names', async () => {
    for (const name of ['../x', '.hidden', '', 'a/b']) {
      await expect(writeFolderAtomic(runDir, 'f', [{ name, data: '' }])).rejects.toThrow(/bad or repeated file name/);
    }
    await expect(writeFolderAtomic(runDir, 'f', [{ name: 'a', data: '' }, { name: 'a', data: '' }])).rejects.toThrow(/repeated/);
  });
});

describe('TURNWISE_FAULT', () => {
  it('arms a named point, optionally at its n-th visit and to freeze instead of kill; refuses unknown points', () => {
    expect(parseFaultSpec(undefined)).toBeNull();
    expect(parseFaultSpec('checkpoint-latest-written')).toEqual({ point: 'checkpoint-latest-written', at: 1, action: 'kill' });
    expect(parseFaultSpec('trajectory-stored@12:stop')).toEqual({ point: 'trajectory-stored', at: 12, action: 'stop' });
    expect(() => parseFaultSpec('no-such-point')).toThrow(/expected <point>\[@<n>\]\[:kill\|stop\] with a point among checkpoint-latest-written/);
    expect(() => parseFaultSpec('trajectory-stored@0')).toThrow(/TURNWISE_FAULT/);
  });
});
