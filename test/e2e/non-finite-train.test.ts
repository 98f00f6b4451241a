/**
 * A run whose training goes non-finite stops with an alarm before it writes a checkpoint of that
 * step. The NaN comes from where a user's code would bring it: a registered policy loss (here the
 * PPO-clip loss, times NaN once step 1 is done), so the step's loss and gradients are NaN through
 * the real backward pass. (Rewards and shapers are checked for finiteness before they get here.)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig, resolveConfig } from '../../src/core/config.js';
import { ppoClipLoss, registerPolicyLoss } from '../../src/index.js';
import { tf } from '../../src/backend/tf.js';
import { loadCheckpoint, resolveCheckpointDir } from '../../src/models/checkpoint.js';
import { firstNonFinite } from '../../src/models/finite.js';
import type { RunEvent } from '../../src/runtime/run-events.js';
import { trainRun } from '../../src/runtime/train/train-run.js';
import { RunStore } from '../../src/store/run-store.js';

let poisoned = false;
registerPolicyLoss({
  name: 'nan-after-step-1',
  description: 'test: PPO-clip, times NaN once step 1 completed',
  loss: (input, options) => {
    const terms = ppoClipLoss(input, options);
    if (!poisoned) return terms;
    const total = tf.mul(terms.total, tf.scalar(Number.NaN)) as tf.Scalar;
    terms.total.dispose();
    return { ...terms, total };
  },
});

const dir = mkdtempSync(join(tmpdir(), 'turnwise-non-finite-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const config = resolveConfig(
  parseConfig({
    seed: 5,
    run: { dir, name: 'diverging' },
    env: { name: 'babyai', settings: { levels: ['GoToRedBall'] } },
    tokenizer: { vocabSize: 320, corpusEpisodes: 60 },
    model: { dModel: 32, nLayers: 1, nHeads: 2, ffnHidden: 64 },
    algorithm: { tasksPerStep: 2, groupSize: 4, policyLoss: 'nan-after-step-1' },
    horizon: { schedule: 'fixed', horizon: 4 },
    train: { steps: 4, evalEvery: 0, checkpointEvery: 1 },
  }),
);

describe('a run whose loss goes non-finite', () => {
  it('stops with an alarm before checkpointing that step; every checkpoint it left holds finite weights', async () => {
    const runDir = join(dir, 'diverging');
    const events: RunEvent[] = [];
    const result = await trainRun({
      config,
      runDir,
      onEvent: (e) => {
        events.push(e);
        if (e.type === 'step' && e.step === 1) poisoned = true;
      },
    });
    expect(result.status, result.error ?? '').toBe('failed');
    expect(result.error).toMatch(/training went non-finite at step (\d+) \((loss|optim)\/\w+ (NaN|-?Infinity)/);
    const failedAt = Number(/at step (\d+)/.exec(result.error ?? '')?.[1]);
    // Poisoned once step 1 is reported (the next step may already be training then).
    expect(failedAt).toBeGreaterThanOrEqual(2);
    expect(events.filter((e) => e.type === 'step').map((e) => (e as { step: number }).step)).toEqual(Array.from({ length: failedAt - 1 }, (_, i) => i + 1));
    expect(events.filter((e) => e.type === 'alarm')).toEqual([expect.objectContaining({ type: 'alarm', step: failedAt, name: 'nonFinite', action: 'stop' })]);
    const store = RunStore.open(runDir, { readonly: true });
    const stored = store.events('alarm/nonFinite');
    store.close();
    expect(stored).toEqual([expect.objectContaining({ step: failedAt, data: expect.objectContaining({ alarm: 'nonFinite', action: 'stop' }) })]);
    // The latest checkpoint is of the step before, and its weights are numbers.
    const checkpoint = await loadCheckpoint(await resolveCheckpointDir(runDir));
    expect(checkpoint.step).toBe(failedAt - 1);
    for (const [name, w] of checkpoint.weights) expect(firstNonFinite(w.data), name).toBe(-1);
  });
});
