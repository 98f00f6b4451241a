/**
 * Alarm actions in real (tiny) training runs on BabyAI: a reward-variance alarm set to fire on
 * every step (threshold 0) with `stop` ends the run after step 1 with a checkpoint that carries the
 * alarm state; with `lowerHorizon` it caps the horizon one turn lower after every step. Both store
 * the alarm as a run event and report it to the caller.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig, resolveConfig } from '../../src/core/config.js';
import { loadCheckpoint, resolveCheckpointDir } from '../../src/models/checkpoint.js';
import type { RunEvent } from '../../src/runtime/run-events.js';
import { trainRun } from '../../src/runtime/train/train-run.js';
import { RunStore } from '../../src/store/run-store.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-alarms-train-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const tiny = (name: string, action: 'stop' | 'lowerHorizon') =>
  resolveConfig(
    parseConfig({
      seed: 5,
      run: { dir, name },
      env: { name: 'babyai', settings: { levels: ['GoToRedBall'] } },
      tokenizer: { vocabSize: 320, corpusEpisodes: 60 },
      model: { dModel: 32, nLayers: 1, nHeads: 2, ffnHidden: 64 },
      algorithm: { tasksPerStep: 2, groupSize: 4 },
      horizon: { schedule: 'fixed', horizon: 4 },
      train: { steps: 3, evalEvery: 0, checkpointEvery: 0 },
      alarms: {
        cooldown: 1,
        lowerHorizonBy: 1,
        // Always true (a share is never below 0): an alarm on every step.
        rewardVariance: { above: 0, window: 1, ignoreSolved: false, action },
        entropyCollapse: { enabled: false },
        echoTrap: { enabled: false },
        gradNormSpike: { enabled: false },
        klBlowUp: { enabled: false },
      },
    }),
  );

describe('alarm actions in a training run', () => {
  it('stop: ends the run after the alarming step, checkpointed, with the alarm stored', async () => {
    const events: RunEvent[] = [];
    const runDir = join(dir, 'stopped');
    const result = await trainRun({ config: tiny('stopped', 'stop'), runDir, onEvent: (e) => events.push(e) });
    expect(result.status).toBe('stopped');
    expect(result.completedSteps).toBe(1);
    expect(events.filter((e) => e.type === 'alarm')).toEqual([expect.objectContaining({ type: 'alarm', step: 1, name: 'rewardVariance', action: 'stop' })]);
    const store = RunStore.open(runDir, { readonly: true });
    const stored = store.events('alarm/rewardVariance');
    store.close();
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ step: 1, data: { alarm: 'rewardVariance', metric: 'rollout/zeroVarianceGroups', action: 'stop', threshold: 0 } });
    const checkpoint = await loadCheckpoint(await resolveCheckpointDir(runDir));
    expect(checkpoint.step).toBe(1);
    expect((checkpoint.state.alarms as { monitor: { lastFired: unknown } }).monitor.lastFired).toEqual({ rewardVariance: 1 });
  });

  it('lowerHorizon: caps the horizon one turn lower after every alarming step', async () => {
    const runDir = join(dir, 'lowered');
    const result = await trainRun({ config: tiny('lowered', 'lowerHorizon'), runDir });
    expect(result.status).toBe('finished');
    const store = RunStore.open(runDir, { readonly: true });
    const horizons = store.metricsSeries('horizon/current').map((p) => p.value);
    const consequences = store.events('alarm/rewardVariance').map((e) => (e.data as { consequence: string }).consequence);
    const longest = Math.max(...store.episodes({ step: 2, split: 'train' }).map((e) => e.turns));
    store.close();
    expect(horizons).toEqual([4, 3, 2]);
    expect(consequences).toEqual(['horizon capped 4 -> 3 for the rest of the run', 'horizon capped 3 -> 2 for the rest of the run', 'horizon capped 2 -> 1 for the rest of the run']);
    expect(longest).toBeLessThanOrEqual(2);
    expect(existsSync(join(runDir, 'checkpoints', 'latest'))).toBe(true);
  });
});
