import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CheckpointError, InvalidArgumentError } from '../../src/core/errors.js';
import type { Trajectory, Turn } from '../../src/core/types.js';
import { RunStore } from '../../src/store/run-store.js';
import { SCHEMA_VERSION } from '../../src/store/schema.js';

function makeTurn(index: number, version: number): Turn {
  return {
    index,
    observationText: `obs ${index}`,
    promptTokens: Int32Array.from({ length: 40 + index }, (_, i) => i),
    actionText: `action ${index}`,
    actionTokens: Int32Array.from([10 + index, 11, 2]),
    actionLogprobs: Float32Array.from([-0.5, -0.25, -0.125]),
    actionLossMask: Uint8Array.from([1, 0, 1]),
    constraint: null,
    policyVersion: version,
    reward: index === 4 ? 1 : 0,
    invalidAction: index === 2,
  };
}

function makeTrajectory(id: string, step: number, turns = 5): Trajectory {
  return {
    trajectoryId: id,
    taskId: `babyai_${step}`,
    groupId: `g${step}`,
    step,
    turns: Array.from({ length: turns }, (_, i) => makeTurn(i, 3 + (i % 2))),
    reward: 1,
    outcome: 'success',
    horizon: 5,
    finalObservationText: 'done',
  };
}

describe('RunStore', () => {
  let dir: string;
  let store: RunStore;
  const config = { seed: 1, algorithm: { lr: 0.001 } };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'turnwise-store-'));
    store = RunStore.open(join(dir, 'run-a'));
    store.createRun({ id: 'r1', name: 'babyai-grpo', createdAt: 1_700_000_000_000, config, backend: 'wasm', seed: 1 });
  });
  afterEach(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates run.db in WAL mode with the current schema version', () => {
    expect(store.path).toBe(join(dir, 'run-a', 'run.db'));
    const db = new Database(store.path, { readonly: true });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.prepare('SELECT version FROM schema_version').get()).toEqual({ version: SCHEMA_VERSION });
    db.close();
  });

  it('stores the run with its config and status', () => {
    expect(store.runId).toBe('r1');
    store.setRunStatus('completed');
    expect(store.run()).toEqual({ id: 'r1', name: 'babyai-grpo', createdAt: 1_700_000_000_000, config, status: 'completed', backend: 'wasm', seed: 1 });
    expect(() => store.setRunStatus('done' as never)).toThrow(InvalidArgumentError);
  });

  it('logs metrics one row per name and reads series and latest values', () => {
    store.logMetrics(1, { 'rollout/successRate': 0.25, 'loss/policy': 0.5 });
    store.logMetrics(2, { 'rollout/successRate': 0.5, 'loss/policy': Number.NaN });
    store.logMetrics(10, { 'eval/successRate': 0.4 });
    store.logMetrics(2, { 'rollout/successRate': 0.75 }); // re-logged: replaces
    expect(store.metricsSeries('rollout/successRate')).toEqual([
      { step: 1, value: 0.25 },
      { step: 2, value: 0.75 },
    ]);
    expect(store.metricsSeries('loss/policy')[1].value).toBeNaN();
    expect(store.metricNames()).toEqual(['eval/successRate', 'loss/policy', 'rollout/successRate']);
    const latest = store.latestMetrics();
    expect(latest['eval/successRate']).toEqual({ step: 10, value: 0.4 });
    expect(latest['rollout/successRate']).toEqual({ step: 2, value: 0.75 });
    expect(() => store.logMetrics(-1, {})).toThrow(/'step'/);
  });

  it('records trajectories with their turns and token blobs', () => {
    const t = makeTrajectory('e1', 3);
    expect(store.recordTrajectories('r1', 'train', [t])).toEqual({ inserted: 1, duplicates: 0 });
    const [episode] = store.episodes();
    expect(episode).toEqual({
      id: 'e1',
      runId: 'r1',
      step: 3,
      taskId: 'babyai_3',
      groupId: 'g3',
      split: 'train',
      outcome: 'success',
      reward: 1,
      turns: 5,
      horizon: 5,
      policyVersionMin: 3,
      policyVersionMax: 4,
      error: null,
      finalObservation: 'done',
    });
    const turns = store.episodeTurns('e1');
    expect(turns).toHaveLength(5);
    const { constraint: _constraint, ...expected } = t.turns[2];
    expect(turns[2]).toEqual(expected);
    expect(turns[2].actionLogprobs).toBeInstanceOf(Float32Array);
    expect(turns[2].promptTokens).toBeInstanceOf(Int32Array);
    expect(turns[2].actionLossMask).toBeInstanceOf(Uint8Array);
  });

  it('stores a redelivered trajectory once', () => {
    store.recordTrajectories('r1', 'train', [makeTrajectory('e1', 1)]);
    expect(store.recordTrajectories('r1', 'train', [makeTrajectory('e1', 1), makeTrajectory('e2', 1)])).toEqual({ inserted: 1, duplicates: 1 });
    expect(store.episodes().map((e) => e.id)).toEqual(['e1', 'e2']);
    expect(store.episodeTurns('e1')).toHaveLength(5);
  });

  it('rolls back the whole batch when one trajectory is bad', () => {
    const bad = { ...makeTrajectory('e2', 1), outcome: undefined } as unknown as Trajectory;
    expect(() => store.recordTrajectories('r1', 'train', [makeTrajectory('e1', 1), bad])).toThrow("invalid 'trajectories[1].outcome'");
    expect(store.episodes()).toEqual([]);
    const badTurn = makeTrajectory('e2', 1);
    (badTurn.turns[3] as { actionLogprobs: unknown }).actionLogprobs = [0.1];
    expect(() => store.recordTrajectories('r1', 'train', [makeTrajectory('e1', 1), badTurn])).toThrow(/trajectories\[1\]\.turns\[3\]\.actionLogprobs/);
    expect(store.episodes()).toEqual([]);
    // Fields SQLite would refuse deep in the batch are named first.
    const noTask = { ...makeTrajectory('e4', 1), taskId: null } as unknown as Trajectory;
    expect(() => store.recordTrajectories('r1', 'train', [makeTrajectory('e1', 1), noTask])).toThrow("invalid 'trajectories[1].taskId'");
    const nanReward = makeTrajectory('e4', 1);
    (nanReward.turns[1] as { reward: number }).reward = Number.NaN;
    expect(() => store.recordTrajectories('r1', 'train', [nanReward])).toThrow("invalid 'trajectories[0].turns[1].reward'");
    expect(() => store.recordTrajectories('r1', 'train', [{ ...makeTrajectory('e4', 1), horizon: 2.5 }])).toThrow("invalid 'trajectories[0].horizon'");
    expect(store.episodes()).toEqual([]);
    // A violation the checks miss (two turns with one index) still fails the batch (no silent OR IGNORE drop).
    const twice = makeTrajectory('e5', 1);
    (twice.turns[4] as { index: number }).index = 3;
    expect(() => store.recordTrajectories('r1', 'train', [makeTrajectory('e1', 1), twice])).toThrow(/UNIQUE/);
    expect(store.episodes()).toEqual([]);
    expect(() => store.recordTrajectories('r1', 'dev' as never, [])).toThrow(/'split'/);
    expect(() => store.recordTrajectories('nope', 'train', [makeTrajectory('e3', 1)])).toThrow(/FOREIGN KEY/);
  });

  it('records an error episode with no turns', () => {
    const t: Trajectory = { ...makeTrajectory('e9', 2, 0), outcome: 'error', reward: 0, error: 'env crashed' };
    store.recordTrajectories('r1', 'test', [t]);
    expect(store.episodes({ split: 'test' })[0]).toMatchObject({ outcome: 'error', error: 'env crashed', turns: 0, policyVersionMin: null });
  });

  it('filters episodes', () => {
    store.recordTrajectories('r1', 'train', [makeTrajectory('a', 1), makeTrajectory('b', 2), makeTrajectory('c', 3)]);
    store.recordTrajectories('r1', 'eval', [{ ...makeTrajectory('d', 3), outcome: 'truncated' }]);
    expect(store.episodes({ step: 2 }).map((e) => e.id)).toEqual(['b']);
    expect(store.episodes({ fromStep: 2, split: 'train' }).map((e) => e.id)).toEqual(['b', 'c']);
    expect(store.episodes({ outcome: 'truncated' }).map((e) => e.id)).toEqual(['d']);
    expect(store.episodes({ taskId: 'babyai_1' }).map((e) => e.id)).toEqual(['a']);
    expect(store.episodes({ limit: 2, offset: 1 }).map((e) => e.id)).toEqual(['b', 'c']);
  });

  it('logs events in order', () => {
    store.logEvent(0, 'horizon.stage', 'horizon 5', { stage: 0, horizon: 5 });
    store.logEvent(20, 'horizon.stage', 'horizon 8', { stage: 1, horizon: 8 });
    store.logEvent(20, 'checkpoint.saved', 'step 20');
    expect(store.events().map((e) => e.kind)).toEqual(['horizon.stage', 'horizon.stage', 'checkpoint.saved']);
    expect(store.events('horizon.stage')[1]).toEqual({ step: 20, kind: 'horizon.stage', message: 'horizon 8', data: { stage: 1, horizon: 8 } });
    expect(store.events('checkpoint.saved')[0].data).toBeNull();
  });

  it('lets a read-only viewer read while the writer is open, and refuses its writes', () => {
    store.logMetrics(1, { 'rollout/successRate': 0.5 });
    const viewer = RunStore.open(join(dir, 'run-a'), { readonly: true });
    try {
      expect(viewer.runId).toBe('r1');
      expect(viewer.metricsSeries('rollout/successRate')).toEqual([{ step: 1, value: 0.5 }]);
      store.logMetrics(2, { 'rollout/successRate': 0.6 });
      expect(viewer.metricsSeries('rollout/successRate')).toHaveLength(2);
      expect(() => viewer.logMetrics(3, { x: 1 })).toThrow(CheckpointError);
      expect(() => viewer.logMetrics(3, { x: 1 })).toThrow(/read-only; cannot logMetrics/);
    } finally {
      viewer.close();
    }
  });

  it('refuses a read-only open of a missing store', () => {
    expect(() => RunStore.open(join(dir, 'missing'), { readonly: true })).toThrow(CheckpointError);
  });

  it('reopens an existing store without re-migrating and picks the newest run', () => {
    store.createRun({ id: 'r2', name: 'resumed', createdAt: 1_700_000_100_000, config: {}, backend: 'cpu', seed: 2 });
    store.close();
    store = RunStore.open(join(dir, 'run-a'));
    expect(store.runId).toBe('r2');
    expect(store.runs().map((r) => r.id)).toEqual(['r1', 'r2']);
    store.useRun('r1');
    expect(store.run()?.name).toBe('babyai-grpo');
    expect(() => store.useRun('r3')).toThrow(/no run 'r3'/);
  });

  it('refuses a store written by a newer schema', () => {
    store.close();
    const db = new Database(join(dir, 'run-a', 'run.db'));
    db.prepare('UPDATE schema_version SET version = ?').run(SCHEMA_VERSION + 1);
    db.close();
    expect(() => RunStore.open(join(dir, 'run-a'))).toThrow(/newer than this build/);
    expect(() => RunStore.open(join(dir, 'run-a'), { readonly: true })).toThrow(CheckpointError);
    store = RunStore.open(join(dir, 'other'));
  });

  it('needs a run before run-scoped calls', () => {
    const empty = RunStore.open(join(dir, 'empty'));
    try {
      expect(empty.runId).toBeNull();
      expect(() => empty.logMetrics(1, { x: 1 })).toThrow(/call createRun first/);
    } finally {
      empty.close();
    }
  });

  it('stores a batch of 64 trajectories x 5 turns in one transaction: a failure on its last row keeps none of it', () => {
    const batch = Array.from({ length: 64 }, (_, i) => makeTrajectory(`b${i}`, 1));
    store.recordTrajectories('r1', 'train', [makeTrajectory('before', 0)]);
    // A fault injected from a second connection: SQLite refuses the very last turn of the batch.
    const other = new Database(join(dir, 'run-a', 'run.db'));
    other.exec(`CREATE TRIGGER refuse_last BEFORE INSERT ON turns WHEN NEW.episode_id = 'b63' AND NEW.idx = 4 BEGIN SELECT RAISE(ABORT, 'injected fault'); END`);
    expect(() => store.recordTrajectories('r1', 'train', batch)).toThrow(/injected fault/);
    expect(store.episodes({ limit: 100 }).map((e) => e.id)).toEqual(['before']);
    other.exec('DROP TRIGGER refuse_last');
    other.close();
    expect(store.recordTrajectories('r1', 'train', batch)).toEqual({ inserted: 64, duplicates: 0 });
    expect(store.episodes({ limit: 100 })).toHaveLength(65);
    expect(store.episodeTurns('b63').map((t) => t.index)).toEqual([0, 1, 2, 3, 4]);
  });
});
