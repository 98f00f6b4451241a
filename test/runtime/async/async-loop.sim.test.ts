/**
 * Seeded simulation of the asynchronous loop: scripted episodes and learner, random delays as
 * random numbers of microtask yields (so every seed is a different, reproducible interleaving of
 * episodes, training and weight loads; no timers, no sleeps).
 */
import { describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../../src/core/clock.js';
import { Rng } from '../../../src/core/rng.js';
import type { Trajectory, Turn } from '../../../src/core/types.js';
import { type AsyncLoopEffects, type PartialRollout, runAsyncLoop } from '../../../src/runtime/async/async-loop.js';
import type { StalenessState } from '../../../src/runtime/async/staleness.js';
import type { EpisodePlan } from '../../../src/runtime/rollout.js';

interface Scenario {
  readonly seed: number;
  readonly eta: number;
  readonly partial: PartialRollout;
  readonly steps: number;
  readonly groups: number;
  readonly groupSize: number;
  readonly maxInFlight: number;
  /** Abort the run once this many episodes have finished (a kill), then resume from the last checkpoint. */
  readonly killAfterEpisodes?: number;
  /** Every this many episodes, a sampler hands in a turn made by a version too old for η (fault injection). */
  readonly staleEvery?: number;
}

interface TrainedRecord {
  readonly batch: number;
  readonly learnerVersion: number;
  readonly trajectories: readonly Trajectory[];
}

const turn = (index: number, policyVersion: number): Turn => ({
  index,
  observationText: 'o',
  promptTokens: new Int32Array([1, 2]),
  actionText: 'a',
  actionTokens: new Int32Array([3, 4]),
  actionLogprobs: new Float32Array([-0.5, 0]),
  actionLossMask: new Uint8Array([1, 0]),
  constraint: null,
  policyVersion,
  reward: 0,
  invalidAction: false,
});

/** One process lifetime: runs from `start` (a checkpoint) until the end or the kill. */
async function lifetime(s: Scenario, rng: Rng, start: { completed: number; state?: StalenessState }, killAfter: number | null) {
  let samplerVersion = start.completed; // a fresh process loads the checkpoint's weights
  let learnerVersion = start.completed;
  let inFlight = 0;
  let finished = 0;
  let injected = 0;
  const trained: TrainedRecord[] = [];
  const checkpoints: { completed: number; state: StalenessState; trainedCount: number }[] = [];
  const abort = new AbortController();
  const pause = async (max: number) => {
    for (let k = rng.int(max); k > 0; k--) await Promise.resolve();
  };
  const effects: AsyncLoopEffects = {
    plans: (batch) =>
      Array.from({ length: s.groups * s.groupSize }, (_, i): EpisodePlan => {
        const groupId = `s${batch}/t${Math.floor(i / s.groupSize)}`;
        return { taskId: `task_${i}`, taskIndex: i, groupId, trajectoryId: `${groupId}/g${i % s.groupSize}`, seed: i };
      }),
    async runEpisode(plan, batch) {
      inFlight++;
      const turns: Turn[] = [];
      const length = 1 + rng.int(4);
      for (let k = 0; k < length; k++) {
        await pause(40);
        turns.push(turn(k, samplerVersion));
      }
      finished++;
      if (s.staleEvery !== undefined && finished % s.staleEvery === 0) {
        turns.push(turn(length, batch - s.eta - 1)); // a lagging sampler's turn: over the bound
        injected++;
      }
      if (killAfter !== null && finished >= killAfter) abort.abort();
      inFlight--;
      return { trajectoryId: plan.trajectoryId, taskId: plan.taskId, groupId: plan.groupId, step: batch, turns, reward: 0, outcome: 'failure', horizon: 5, finalObservationText: '' };
    },
    samplerVersion: () => samplerVersion,
    async train(batch, trajectories) {
      expect(learnerVersion).toBe(batch);
      trained.push({ batch, learnerVersion, trajectories });
      await pause(60);
      learnerVersion++;
      return { version: learnerVersion, metrics: {} };
    },
    async publishWeights(version) {
      await pause(20);
      expect(version).toBeGreaterThan(samplerVersion);
      samplerVersion = version;
    },
    async stepCompleted(batch, metrics, control) {
      expect(metrics['async/stalenessMax']).toBeLessThanOrEqual(s.eta);
      if (rng.next() < 0.2) await control.exclusive(async () => expect(inFlight).toBe(0));
      if ((batch + 1) % 2 === 0) checkpoints.push({ completed: batch + 1, state: control.persist(), trainedCount: trained.length });
    },
  };
  const result = await runAsyncLoop(
    {
      startStep: start.completed,
      totalSteps: s.steps,
      maxStaleness: s.eta,
      partialRollout: s.partial,
      maxInFlight: s.maxInFlight,
      clock: new SimulatedClock(),
      signal: abort.signal,
      ...(start.state ? { restored: start.state } : {}),
    },
    effects,
  );
  return { result, trained, checkpoints, injected };
}

/** Runs a scenario with at most one kill-and-resume; returns what the learner trained, as the final history sees it. */
async function simulate(s: Scenario) {
  const rng = Rng.fromSeed(s.seed);
  const first = await lifetime(s, rng, { completed: 0 }, s.killAfterEpisodes ?? null);
  if (first.result.status === 'finished') return { trained: first.trained, state: first.result.state, injected: first.injected, resumed: false };
  // The process dies: what happened after the last checkpoint is lost.
  const last = first.checkpoints.at(-1);
  const kept = last === undefined ? [] : first.trained.slice(0, last.trainedCount);
  const second = await lifetime(s, rng, last === undefined ? { completed: 0 } : { completed: last.completed, state: last.state }, null);
  expect(second.result.status).toBe('finished');
  return { trained: [...kept, ...second.trained], state: second.result.state, injected: first.injected + second.injected, resumed: true };
}

function checkHistory(s: Scenario, trained: readonly TrainedRecord[]) {
  expect(trained.map((r) => r.batch)).toEqual(Array.from({ length: s.steps }, (_, b) => b));
  for (const record of trained) {
    for (const t of record.trajectories) {
      expect(t.step).toBe(record.batch);
      for (const u of t.turns) {
        const staleness = record.learnerVersion - u.policyVersion;
        expect(staleness, `${t.trajectoryId} turn ${u.index}`).toBeGreaterThanOrEqual(0);
        expect(staleness, `${t.trajectoryId} turn ${u.index}`).toBeLessThanOrEqual(s.eta);
      }
      // finish-old: an episode never sees a weight update.
      if (s.partial === 'finish-old') expect(new Set(t.turns.map((u) => u.policyVersion)).size).toBe(1);
    }
  }
}

describe('async loop (seeded simulation)', () => {
  it('never trains a token staler than η and never deadlocks, over many seeded interleavings', async () => {
    let runs = 0;
    let sawStaleness = 0;
    for (let seed = 1; seed <= 40; seed++) {
      for (const eta of [0, 1, 2, 4]) {
        const partial: PartialRollout = seed % 2 === 0 ? 'continue' : 'finish-old';
        const rng = Rng.fromSeed(seed * 31 + eta);
        const s: Scenario = { seed, eta, partial, steps: 7, groups: 1 + rng.int(3), groupSize: 1 + rng.int(3), maxInFlight: 1 + rng.int(8) };
        const { trained } = await simulate(s);
        checkHistory(s, trained);
        sawStaleness = Math.max(sawStaleness, ...trained.flatMap((r) => r.trajectories.flatMap((t) => t.turns.map((u) => r.learnerVersion - u.policyVersion))));
        runs++;
      }
    }
    expect(runs).toBe(160);
    // The simulation does exercise asynchrony: some tokens were trained several versions late.
    expect(sawStaleness).toBeGreaterThanOrEqual(2);
  });

  it('keeps the bound across a kill and resume from the last checkpoint', async () => {
    let resumed = 0;
    for (let seed = 1; seed <= 30; seed++) {
      const eta = 1 + (seed % 3);
      const s: Scenario = { seed, eta, partial: seed % 2 === 0 ? 'continue' : 'finish-old', steps: 8, groups: 2, groupSize: 2, maxInFlight: 6, killAfterEpisodes: 5 + ((seed * 7) % 20) };
      const run = await simulate(s);
      checkHistory(s, run.trained);
      expect(run.state).toEqual({ maxStaleness: eta, learnerVersion: 8, rejectedStale: 0 });
      if (run.resumed) resumed++;
    }
    expect(resumed).toBeGreaterThan(20);
  });

  it('rejects and counts trajectories that exceed η anyway, and never trains them', async () => {
    const s: Scenario = { seed: 5, eta: 1, partial: 'continue', steps: 6, groups: 2, groupSize: 3, maxInFlight: 5, staleEvery: 4 };
    const run = await simulate(s);
    expect(run.injected).toBeGreaterThan(0);
    expect(run.state.rejectedStale).toBe(run.injected);
    checkHistory(s, run.trained);
    const trainedCount = run.trained.reduce((n, r) => n + r.trajectories.length, 0);
    expect(trainedCount + run.injected).toBe(6 * 6);
  });
});
