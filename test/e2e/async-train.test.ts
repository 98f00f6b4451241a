import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig, resolveConfig, type TurnwiseConfigInput } from '../../src/core/config.js';
import { loadCheckpoint, resolveCheckpointDir } from '../../src/models/checkpoint.js';
import { trainRun } from '../../src/runtime/train/train-run.js';
import { RunStore } from '../../src/store/run-store.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-async-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const base = (name: string, extra: Partial<TurnwiseConfigInput>): TurnwiseConfigInput => ({
  seed: 3,
  run: { dir, name },
  env: { name: 'babyai', settings: { levels: ['GoToRedBall'] } },
  tokenizer: { vocabSize: 320, corpusEpisodes: 100 },
  model: { dModel: 32, nLayers: 1, nHeads: 2, ffnHidden: 64, maxContext: 192 },
  algorithm: { tasksPerStep: 2, groupSize: 4 },
  horizon: { schedule: 'fixed', horizon: 4 },
  train: { steps: 4, evalEvery: 0, evalTasks: 8, checkpointEvery: 1 },
  ...extra,
});

/** Every stored training turn: (step it was trained in = learner version then, version that produced it). */
function storedTurns(runDir: string): { step: number; episode: string; versions: number[] }[] {
  const store = RunStore.open(runDir, { readonly: true });
  const out = store.episodes({ split: 'train' }).map((e) => ({ step: e.step, episode: e.id, versions: store.episodeTurns(e.id).map((t) => t.policyVersion) }));
  store.close();
  return out;
}

describe('asynchronous training (in-process bus)', () => {
  it('keeps every stored turn within η of the learner, across a stop mid-run and a resume', async () => {
    const config = resolveConfig(parseConfig(base('async', { mode: 'async', async: { maxStaleness: 1, partialRollout: 'continue' } })));
    const runDir = join(dir, 'async');
    const stop = new AbortController();
    const first = await trainRun({ config, runDir, signal: stop.signal, onEvent: (e) => e.type === 'step' && e.step === 2 && stop.abort() });
    expect(first.status).toBe('stopped');
    expect(first.completedSteps).toBe(2);
    const saved = await loadCheckpoint(await resolveCheckpointDir(runDir));
    expect(saved.step).toBe(2);
    expect(saved.state.async).toEqual({ maxStaleness: 1, learnerVersion: 2, rejectedStale: 0 });

    const second = await trainRun({ config, resumeDir: runDir });
    expect(second.status).toBe('finished');
    expect(second.completedSteps).toBe(4);
    const final = await loadCheckpoint(await resolveCheckpointDir(runDir));
    expect(final.state.async).toEqual({ maxStaleness: 1, learnerVersion: 4, rejectedStale: 0 });

    const turns = storedTurns(runDir);
    expect([...new Set(turns.map((t) => t.step))]).toEqual([0, 1, 2, 3]);
    expect(turns).toHaveLength(4 * 8);
    for (const t of turns) {
      // Trained in batch `step`, i.e. by the learner at version `step`.
      for (const v of t.versions) expect(t.step - v, t.episode).toBeGreaterThanOrEqual(0);
      for (const v of t.versions) expect(t.step - v, t.episode).toBeLessThanOrEqual(1);
      // After the resume nothing older than the checkpoint's weights was trained.
      if (t.step >= 2) for (const v of t.versions) expect(v).toBeGreaterThanOrEqual(2);
    }
    const store = RunStore.open(runDir, { readonly: true });
    const maxStaleness = store.metricsSeries('async/stalenessMax').map((p) => p.value);
    store.close();
    expect(maxStaleness).toHaveLength(4);
    for (const m of maxStaleness) expect(m).toBeLessThanOrEqual(1);
  });

  it('one-step-off finishes episodes with the weights they started with and trains with the decoupled objective', async () => {
    const config = resolveConfig(parseConfig(base('one-step-off', { mode: 'one-step-off', offPolicy: { correction: 'decoupled', cap: 2 }, train: { steps: 3, evalEvery: 3, evalTasks: 8, checkpointEvery: 0 } })));
    const runDir = join(dir, 'one-step-off');
    const result = await trainRun({ config, runDir });
    expect(result.status).toBe('finished');
    expect(result.evals.map((e) => e.step)).toEqual([0, 3]);
    for (const t of storedTurns(runDir)) {
      expect(new Set(t.versions).size, t.episode).toBe(1);
      expect(t.step - (t.versions[0] as number)).toBeGreaterThanOrEqual(0);
      expect(t.step - (t.versions[0] as number)).toBeLessThanOrEqual(1);
    }
    const store = RunStore.open(runDir, { readonly: true });
    const isWeight = store.metricsSeries('offpolicy/isWeight').map((p) => p.value);
    const staleTokens = store.metricsSeries('async/staleness/1').map((p) => p.value);
    store.close();
    expect(isWeight).toHaveLength(3);
    // A step whose groups all share one reward has no trained tokens (mean 0); the others weigh tokens by min(π_prox/μ, 2).
    for (const w of isWeight) expect(w).toBeLessThanOrEqual(2);
    expect(isWeight.some((w) => w > 0)).toBe(true);
    // Step 0 is trained on version-0 data by version 0; later steps on data one version old.
    expect(staleTokens[0]).toBe(0);
    expect(staleTokens.slice(1).some((n) => n > 0)).toBe(true);
  });
});
