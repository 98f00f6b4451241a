/**
 * A step's trajectory collection on a real nats-server with JetStream: a message the run store
 * would refuse (a turn without its typed arrays) is refused as a message and terminated, and the
 * step's good trajectories are all committed, the same as in a run without the bad message.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Trajectory, Turn } from '../../src/core/types.js';
import { encode } from '../../src/bus/codec.js';
import { NatsBus } from '../../src/bus/nats-bus.js';
import { openRunInfra } from '../../src/runtime/nats/run-infra.js';
import { collectStep, publishTrajectoryDurably } from '../../src/runtime/nats/trajectory-stream.js';
import { RunStore } from '../../src/store/run-store.js';
import { type NatsServerHandle, startNatsServer } from '../helpers/nats-server.js';

let server: NatsServerHandle;
const dir = mkdtempSync(join(tmpdir(), 'turnwise-traj-stream-'));
beforeAll(async () => {
  server = await startNatsServer();
});
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function turn(index: number): Turn {
  return {
    index,
    observationText: `obs ${index}`,
    promptTokens: Int32Array.from([1, 2, 3 + index]),
    actionText: 'turn left',
    actionTokens: Int32Array.from([7, 2]),
    actionLogprobs: Float32Array.from([-0.5, -0.25]),
    actionLossMask: Uint8Array.from([1, 1]),
    constraint: null,
    policyVersion: 0,
    reward: 0,
    invalidAction: false,
  };
}

function trajectory(id: string): Trajectory {
  return { trajectoryId: id, taskId: 'babyai_1', groupId: 'g1', step: 1, turns: [turn(0), turn(1)], reward: 1, outcome: 'success', horizon: 4, finalObservationText: 'done' };
}

/** Collects step 1 of a fresh run whose stream holds `good` (and, before them, `bad` when given). */
async function collect(runId: string, good: readonly Trajectory[], bad?: unknown) {
  const bus = await NatsBus.connect({ servers: server.url });
  const store = RunStore.open(join(dir, runId));
  try {
    store.createRun({ id: runId, name: runId, createdAt: 1, config: {}, backend: 'wasm', seed: 1 });
    const infra = await openRunInfra(bus.connection, runId);
    const subject = infra.names.trajSubject(1);
    if (bad !== undefined) await infra.js.publish(subject, encode(bad, subject), { msgID: 'bad' });
    for (const t of good) await publishTrajectoryDurably(infra, t);
    const logs: string[] = [];
    const { trajectories, stats } = await collectStep({ infra, store, storeRunId: runId, step: 1, expected: good.map((t) => t.trajectoryId), onReplayed: async () => {}, log: (line) => logs.push(line) });
    const stored = store.episodes({ runId, limit: 100 }).map((e) => [e.id, store.episodeTurns(e.id).map((t) => t.actionText)]);
    return { ids: trajectories.map((t) => t.trajectoryId), stats, stored, logs };
  } finally {
    store.close();
    await bus.close();
  }
}

describe('collectStep', () => {
  it('terminates a message the store would refuse, naming the field, and commits every good trajectory as a clean run does', async () => {
    const good = [trajectory('t-a'), trajectory('t-b')];
    const clean = await collect('clean-run-0001', good);
    const bad = { ...trajectory('t-bad'), turns: [{ ...turn(0), promptTokens: [1, 2, 3] }] };
    const faulty = await collect('faulty-run-0001', good, bad);
    expect(faulty.stats).toEqual({ replayed: 3, duplicates: 0, rejected: 1 });
    expect(faulty.logs.join('\n')).toMatch(/rejected a message on '.*': .*trajectory\.turns\[0\]\.promptTokens.*Int32Array/);
    expect(faulty.ids).toEqual(['t-a', 't-b']);
    expect(faulty.stored).toEqual(clean.stored);
    expect(clean.stats).toEqual({ replayed: 2, duplicates: 0, rejected: 0 });
  });
});
