/**
 * Per-turn signals in the run store (schema 2): the shaped reward and the per-token entropies are
 * stored and read back exactly; a schema-1 file (written before they existed) still reads, read-only,
 * with both absent, and migrates when opened writable.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { Trajectory, Turn } from '../../src/core/types.js';
import { RunStore } from '../../src/store/run-store.js';
import { MIGRATIONS, SCHEMA_VERSION } from '../../src/store/schema.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const fresh = () => {
  const d = mkdtempSync(join(tmpdir(), 'turnwise-turn-signals-'));
  dirs.push(d);
  return d;
};

const turn = (index: number, extra: Partial<Turn>): Turn => ({
  index,
  observationText: `obs ${index}`,
  promptTokens: Int32Array.of(1, 2, 3),
  actionText: 'turn left',
  actionTokens: Int32Array.of(7, 8),
  actionLogprobs: Float32Array.of(-0.25, 0),
  actionLossMask: Uint8Array.of(1, 0),
  constraint: null,
  policyVersion: 1,
  reward: index === 1 ? 0.5 : 0,
  invalidAction: false,
  ...extra,
});
const trajectory = (turns: Turn[]): Trajectory => ({ trajectoryId: 'e1', taskId: 'babyai_1', groupId: 'g', step: 0, turns, reward: 0.5, outcome: 'success', horizon: 4, finalObservationText: 'done' });

describe('per-turn signals in the run store', () => {
  it('stores shaped rewards and entropies and reads them back exactly (absent ones stay absent)', () => {
    const store = RunStore.open(fresh());
    store.createRun({ id: 'r', name: 'r', createdAt: 1, config: {}, backend: 'cpu', seed: 1 });
    store.recordTrajectories('r', 'train', [trajectory([turn(0, { shapedReward: -0.1, entropies: Float32Array.of(1.25, 0) }), turn(1, {})])]);
    const turns = store.episodeTurns('e1');
    expect(turns.map((t) => t.reward)).toEqual([0, 0.5]);
    expect(turns.map((t) => t.shapedReward)).toEqual([-0.1, undefined]);
    expect(turns[0]?.entropies).toEqual(Float32Array.of(1.25, 0));
    expect(turns[1]).not.toHaveProperty('entropies');
    store.close();
  });

  it('refuses entropies that do not match the action tokens, naming the field', () => {
    const store = RunStore.open(fresh());
    store.createRun({ id: 'r', name: 'r', createdAt: 1, config: {}, backend: 'cpu', seed: 1 });
    expect(() => store.recordTrajectories('r', 'train', [trajectory([turn(0, { entropies: Float32Array.of(1) })])])).toThrow(/trajectories\[0\]\.turns\[0\]\.entropies/);
    expect(() => store.recordTrajectories('r', 'train', [trajectory([turn(0, { shapedReward: Number.NaN })])])).toThrow(/turns\[0\]\.shapedReward/);
    expect(store.episodes()).toHaveLength(0); // nothing half-written
    store.close();
  });

  it('reads a schema-1 file read-only (new fields absent) and migrates it when opened writable', () => {
    const dir = fresh();
    mkdirSync(dir, { recursive: true });
    const db = new Database(join(dir, 'run.db'));
    db.exec(MIGRATIONS[0] as string);
    db.exec('CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version VALUES (1);');
    db.prepare("INSERT INTO runs VALUES ('r', 'r', 1, '{}', 'completed', 'cpu', 1)").run();
    db.prepare("INSERT INTO episodes VALUES ('e1', 'r', 0, 'babyai_1', 'g', 'train', 'success', 1, 1, 4, 1, 1, NULL, 'done')").run();
    const blob = (a: ArrayBufferView) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
    db.prepare("INSERT INTO turns VALUES ('e1', 0, 'obs', 'turn left', 1, 1, ?, ?, ?, ?, 0)").run(blob(Int32Array.of(1)), blob(Int32Array.of(7)), blob(Float32Array.of(-0.5)), blob(Uint8Array.of(1)));
    db.close();

    const viewer = RunStore.open(dir, { readonly: true });
    const [old] = viewer.episodeTurns('e1');
    expect(old?.reward).toBe(1);
    expect(old).not.toHaveProperty('shapedReward');
    expect(old).not.toHaveProperty('entropies');
    viewer.close();

    RunStore.open(dir).close(); // writable: migrates
    const check = new Database(join(dir, 'run.db'), { readonly: true });
    expect(check.prepare('SELECT version FROM schema_version').get()).toEqual({ version: SCHEMA_VERSION });
    expect(check.prepare('SELECT shaped_reward, entropies FROM turns').get()).toEqual({ shaped_reward: null, entropies: null });
    check.close();
  });
});
