/**
 * What a fault test compares with a fault-free run of the same seed: every stored episode and turn
 * (token ids, behaviour log-probs, loss masks, texts, rewards, policy versions) and the final
 * weights. Trajectory ids carry the run's unique id (`<runId>/s3/t1/g0`), which differs between
 * the two runs, so ids are compared without it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { resolveCheckpointDir } from '../../src/models/checkpoint.js';
import type { EpisodeSplit } from '../../src/store/run-store.js';
import { RunStore } from '../../src/store/run-store.js';

/** An episode and its turns as plain, comparable values (typed arrays as number arrays). */
export interface StoredEpisode {
  readonly id: string;
  readonly fields: Record<string, unknown>;
  readonly turns: Record<string, unknown>[];
}

/** The id without the run id in front (`r-abc/s0/t0/g0` → `s0/t0/g0`). */
function localId(id: string, runId: string): string {
  return id.startsWith(`${runId}/`) ? id.slice(runId.length + 1) : id;
}

/**
 * Every episode of `split` in a run folder with its turns, ordered by run-local id.
 * @example storedEpisodes('runs/x', 'train')[0].turns[0].actionTokens // [17, 4, 2]
 */
export function storedEpisodes(runDir: string, split: EpisodeSplit = 'train'): StoredEpisode[] {
  const store = RunStore.open(runDir, { readonly: true });
  try {
    const runId = store.runId ?? '';
    const out = store.episodes({ split, limit: 1_000_000 }).map((e) => ({
      id: localId(e.id, runId),
      fields: {
        step: e.step,
        taskId: e.taskId,
        groupId: localId(e.groupId, runId),
        outcome: e.outcome,
        reward: e.reward,
        turns: e.turns,
        horizon: e.horizon,
        policyVersionMin: e.policyVersionMin,
        policyVersionMax: e.policyVersionMax,
        error: e.error,
        finalObservation: e.finalObservation,
      },
      turns: store.episodeTurns(e.id).map((t) => ({
        index: t.index,
        observation: t.observationText,
        action: t.actionText,
        reward: t.reward,
        policyVersion: t.policyVersion,
        promptTokens: Array.from(t.promptTokens),
        actionTokens: Array.from(t.actionTokens),
        // Bit patterns, so that -0 vs 0 or NaN payloads would not hide a difference.
        actionLogprobs: Array.from(new Uint32Array(t.actionLogprobs.buffer.slice(t.actionLogprobs.byteOffset, t.actionLogprobs.byteOffset + t.actionLogprobs.byteLength))),
        lossMask: Array.from(t.actionLossMask),
        invalid: t.invalidAction,
      })),
    }));
    return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  } finally {
    store.close();
  }
}

/**
 * The run folder holds exactly the episodes and turns of the reference run, field for field, and
 * `expectedCount` of them (so an empty pair of runs cannot pass).
 */
export function expectSameStoredContent(runDir: string, referenceDir: string, expectedCount: number, split: EpisodeSplit = 'train'): void {
  const got = storedEpisodes(runDir, split);
  const want = storedEpisodes(referenceDir, split);
  expect(want).toHaveLength(expectedCount);
  expect(got.map((e) => e.id)).toEqual(want.map((e) => e.id));
  for (let i = 0; i < want.length; i++) {
    const w = want[i] as StoredEpisode;
    const g = got[i] as StoredEpisode;
    expect(g.fields, `episode ${w.id}`).toEqual(w.fields);
    expect(g.turns, `turns of episode ${w.id}`).toEqual(w.turns);
  }
}

/** Bytes of the weights in the run folder's latest checkpoint: the model's, or a LoRA run's adapters. */
export async function finalWeights(runDir: string): Promise<Buffer> {
  const dir = await resolveCheckpointDir(runDir);
  return readFileSync(join(dir, existsSync(join(dir, 'adapter_config.json')) ? 'adapter_model.safetensors' : 'model.safetensors'));
}

/** The latest checkpoints of both runs hold bit-identical weights (and are at the same step). */
export async function expectSameFinalWeights(runDir: string, referenceDir: string): Promise<void> {
  const [a, b] = await Promise.all([resolveCheckpointDir(runDir), resolveCheckpointDir(referenceDir)]);
  expect(a.slice(a.lastIndexOf('/'))).toBe(b.slice(b.lastIndexOf('/')));
  expect((await finalWeights(runDir)).equals(await finalWeights(referenceDir))).toBe(true);
}

/** Metrics that depend only on seeds and data (not on wall-clock time). */
export const DETERMINISTIC_METRICS = [
  'rollout/successRate',
  'rollout/meanReward',
  'rollout/meanTurns',
  'rollout/truncationRate',
  'horizon/current',
  'horizon/stage',
  'loss/policy',
  'loss/entropy',
  'loss/approxKl',
  'optim/gradNorm',
  'advantage/absMean',
  'policy/version',
] as const;

/** Each deterministic metric over steps, as `[step, value]` pairs. */
export function curves(runDir: string): Record<string, [number, number][]> {
  const store = RunStore.open(runDir, { readonly: true });
  try {
    const out: Record<string, [number, number][]> = {};
    for (const name of DETERMINISTIC_METRICS) out[name] = store.metricsSeries(name).map((p) => [p.step, p.value]);
    return out;
  } finally {
    store.close();
  }
}

/** Both runs logged the same deterministic curves, `steps` points each (a resumed run continues the same curves). */
export function expectSameCurves(runDir: string, referenceDir: string, steps: number): void {
  const got = curves(runDir);
  const want = curves(referenceDir);
  for (const name of DETERMINISTIC_METRICS) {
    expect(want[name], name).toHaveLength(steps);
    expect(got[name], name).toEqual(want[name]);
  }
}
