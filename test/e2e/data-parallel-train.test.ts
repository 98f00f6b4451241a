import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig, resolveConfig, type TurnwiseConfigInput } from '../../src/core/config.js';
import { gradientWorkersOf } from '../../src/runtime/gradient-workers.js';
import type { RunEvent } from '../../src/runtime/run-events.js';
import { trainRun } from '../../src/runtime/train/train-run.js';

// train.dataParallel changes where the gradients are computed, and train.evalOverlap when the
// held-out evaluations run, never what is stored: a run with 2 gradient workers and one with the
// defaults (auto, evaluations beside the next step) against the old way (gradients in the learner
// thread, each evaluation alone), compared row by row — every metric but the wall-clock ones, every
// episode and turn (tokens, behaviour log-probs), and the checkpointed weights and optimizer state,
// byte for byte.

const dir = mkdtempSync(join(tmpdir(), 'turnwise-dp-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const config = (name: string, train: { dataParallel?: number; evalOverlap?: boolean }): TurnwiseConfigInput => ({
  seed: 5,
  run: { dir, name },
  env: { name: 'babyai', settings: { levels: ['GoToRedBall'] } },
  model: { dModel: 32, nLayers: 1, nHeads: 2, ffnHidden: 64, maxContext: 256 },
  tokenizer: { vocabSize: 320, corpusEpisodes: 40 },
  // Small micro-batches, so every step has several for the workers to share out.
  algorithm: { tasksPerStep: 4, groupSize: 4, maxTokensPerMicroBatch: 512, miniBatches: 2 },
  horizon: { schedule: 'fixed', horizon: 3 },
  // Evaluations at 0 and 2 run beside steps 1 and 3; the one at 4 ends the run.
  train: { steps: 4, evalEvery: 2, evalTasks: 8, checkpointEvery: 4, ...train },
});

/** Everything a run stored that does not depend on the wall clock, with its own run id taken out. */
function stored(name: string): { metrics: unknown[]; episodes: unknown[]; turns: unknown[]; weights: Buffer; optimizer: Buffer } {
  const runDir = join(dir, name);
  const db = new Database(join(runDir, 'run.db'), { readonly: true });
  const runId = (db.prepare('SELECT id FROM runs').get() as { id: string }).id;
  const strip = (id: string): string => id.replace(runId, 'RUN');
  const metrics = db.prepare("SELECT step, name, value FROM metrics WHERE name NOT LIKE 'time/%' AND name NOT LIKE 'throughput/%' ORDER BY name, step").all();
  // Sorted once the run id is out (a run's name decides where its ids sort among the evaluations').
  const byKey = (a: { key: string }, b: { key: string }): number => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
  const episodes = (db.prepare('SELECT * FROM episodes').all() as { id: string; run_id: string }[]).map(({ run_id: _, ...e }) => ({ ...e, id: strip(e.id), key: strip(e.id) })).sort(byKey);
  const turns = (db.prepare('SELECT * FROM turns').all() as { episode_id: string; idx: number }[])
    .map((t) => ({ ...t, episode_id: strip(t.episode_id), key: `${strip(t.episode_id)}#${String(t.idx).padStart(4, '0')}` }))
    .sort(byKey);
  db.close();
  const checkpoint = join(runDir, 'checkpoints', 'step-000004');
  return { metrics, episodes, turns, weights: readFileSync(join(checkpoint, 'model.safetensors')), optimizer: readFileSync(join(checkpoint, 'optimizer.safetensors')) };
}

describe('turnwise train with gradient workers', () => {
  it('stores exactly what the old single-thread run stores, with 2 workers and with the defaults', async () => {
    const runs = [
      ['one', { dataParallel: 1, evalOverlap: false }],
      ['two', { dataParallel: 2 }],
      ['auto', {}],
    ] as const;
    const evals: unknown[] = [];
    const printed: string[][] = [];
    const headers: string[] = [];
    for (const [name, train] of runs) {
      const events: RunEvent[] = [];
      const result = await trainRun({ config: resolveConfig(parseConfig(config(name, train))), runDir: join(dir, name), onEvent: (e) => events.push(e) });
      expect(result.status).toBe('finished');
      expect(result.completedSteps).toBe(4);
      evals.push(result.evals);
      // What the CLI prints, in its order: every event but the info lines, with its step.
      printed.push(events.filter((e) => e.type !== 'info').map((e) => `${e.type}@${'step' in e ? e.step : ''}`));
      headers.push(events.flatMap((e) => (e.type === 'info' && e.message.startsWith('backend:') ? [e.message] : []))[0] ?? '');
    }
    expect(evals[1]).toEqual(evals[0]);
    expect(evals[2]).toEqual(evals[0]);
    expect(printed[0]).toContain('eval@2');
    expect(printed[1]).toEqual(printed[0]);
    expect(printed[2]).toEqual(printed[0]);
    // The old way evaluates alone in the learner thread's run; the defaults beside the rollout, with workers.
    expect(headers[0]).toContain('learner: main thread (train.dataParallel 1)');
    expect(headers[0]).not.toContain('evaluations beside the rollout');
    expect(headers[1]).toContain('learner: 2 gradient workers (train.dataParallel 2)');
    expect(headers[2]).toContain('evaluations beside the rollout');
    const one = stored('one');
    expect(one.metrics.length).toBeGreaterThan(50);
    expect(one.turns.length).toBeGreaterThan(16 * 4 + 8 * 3); // 4 steps of 16 episodes, 3 evaluations of 8
    // The policy moved: the loss and gradient are real, so equality below is not of zeros.
    expect((one.metrics as { name: string; value: number }[]).some((m) => m.name === 'optim/gradNorm' && m.value > 0)).toBe(true);
    for (const name of ['two', 'auto']) {
      const other = stored(name);
      expect(other.metrics).toEqual(one.metrics);
      expect(other.episodes).toEqual(one.episodes);
      expect(other.turns).toEqual(one.turns);
      expect(other.weights.equals(one.weights)).toBe(true);
      expect(other.optimizer.equals(one.optimizer)).toBe(true);
    }
    // On this machine the default ran with gradient workers whenever it has two cores.
    expect(gradientWorkersOf(resolveConfig(parseConfig(config('auto', {})))).count).toBe(Math.min(availableParallelism(), 4));
  });
});
