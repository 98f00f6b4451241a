/**
 * Run identity on a shared nats-server: every stream, subject, bucket and trajectory id carries the
 * run's unique id, so a run that reuses a finished run's `run.name` trains on its own episodes
 * (compared with a fault-free in-process run of its seed), and a new run refuses a name whose run
 * still has its streams unless told to replace it. Also retention: a checkpoint purges the steps
 * before it from the trajectory stream; a completed run's streams are deleted.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, resolveConfig } from '../../src/core/config.js';
import { connectNats } from '../../src/bus/nats-connect.js';
import { natsTrainRun } from '../../src/runtime/nats/nats-train-run.js';
import { RunNameTakenError } from '../../src/runtime/nats/run-registry.js';
import { trainRun } from '../../src/runtime/train/train-run.js';
import { storedEpisodes, expectSameStoredContent } from '../helpers/run-content.js';
import { killProcess, spawnCli } from '../helpers/nats-run.js';
import { type NatsServerHandle, startNatsServer } from '../helpers/nats-server.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-nats-identity-'));
let server: NatsServerHandle;
const procs: ChildProcess[] = [];

const raw = (name: string, seed: number, steps: number) => ({
  seed,
  run: { dir, name },
  env: { name: 'babyai', settings: { levels: ['GoToRedBall'] } },
  algorithm: { tasksPerStep: 4, groupSize: 4 },
  horizon: { schedule: 'fixed', horizon: 5 },
  train: { steps, evalEvery: 0, checkpointEvery: 1 },
  // One request per forward pass, no KV cache: bit-exact against the in-process reference (see nats-faults.test.ts).
  runtime: { requestTimeoutMs: 5000, samplerMaxBatch: 1, kvCacheMiB: 0 },
});
const config = (name: string, seed: number, steps: number) => resolveConfig(parseConfig(raw(name, seed, steps)));

beforeAll(async () => {
  server = await startNatsServer();
});
afterEach(async () => {
  await Promise.all(procs.splice(0).map(killProcess));
});
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const worker = (name: string) => spawnCli(procs, ['worker', '--nats', server.url, '--run', name, '--role', 'sampler,episodes']);

async function streamsOnServer(): Promise<Map<string, number>> {
  const nc = await connectNats({ servers: server.url });
  try {
    const jsm = await jetstreamManager(nc);
    const out = new Map<string, number>();
    for await (const info of jsm.streams.list()) out.set(info.config.name, info.state.messages);
    return out;
  } finally {
    await nc.close();
  }
}

describe('run identity over NATS', () => {
  it("gives a run that reuses a finished run's name its own streams: it stores its own episodes, none of the old run's", async () => {
    const referenceDir = join(dir, 'reference-seed-6');
    expect((await trainRun({ config: config('reference', 6, 2), runDir: referenceDir })).status).toBe('finished');

    worker('shared');
    const first = await natsTrainRun({ config: config('shared', 5, 2), runDir: join(dir, 'shared-1'), nats: { servers: server.url } });
    expect(first.status).toBe('finished');
    // Completed: its trajectory and plan streams and its objects are gone.
    const left = await streamsOnServer();
    expect([...left.keys()].filter((s) => s.includes(first.runId))).toEqual([`KV_TW_${first.runId}_state`]);

    worker('shared');
    const logs: string[] = [];
    const second = await natsTrainRun({ config: config('shared', 6, 2), runDir: join(dir, 'shared-2'), nats: { servers: server.url }, log: (l) => logs.push(l) });
    expect(second.status).toBe('finished');
    expect(second.runId).not.toBe(first.runId);
    expect(logs.join('\n')).not.toMatch(/replayed from the stream/);
    expectSameStoredContent(join(dir, 'shared-2'), referenceDir, 32);
    // The first run's leftover state bucket went when the name was claimed again.
    expect([...(await streamsOnServer()).keys()].filter((s) => s.includes(first.runId))).toEqual([]);
  });

  it('refuses a new run on a name whose run still has its streams, touching nothing, and replaces that run when told to', async () => {
    const heldDir = join(dir, 'held-1');
    worker('held');
    const stop = new AbortController();
    const held = await natsTrainRun({
      config: config('held', 5, 4),
      runDir: heldDir,
      nats: { servers: server.url },
      signal: stop.signal,
      onEvent: (e) => e.type === 'step' && e.step === 2 && stop.abort(),
    });
    expect(held.status).toBe('stopped');
    // Interrupted: streams kept for a resume, but the steps before its checkpoint (2) were purged.
    const streams = await streamsOnServer();
    expect(streams.get(`TW_${held.runId}_TRAJ`)).toBe(0);
    expect(streams.has(`TW_${held.runId}_PLANS`)).toBe(true);

    const newDir = join(dir, 'held-2');
    const refused = await natsTrainRun({ config: config('held', 6, 1), runDir: newDir, nats: { servers: server.url } }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RunNameTakenError);
    expect((refused as Error).message).toBe(
      `run name 'held' belongs to run ${held.runId} (interrupted) on this NATS server, whose streams still exist; a new run would mix with it. ` +
        'Resume that run with `turnwise train --resume <its run folder> --nats …`, or pass --replace-nats-run to delete its streams, buckets and objects and take the name',
    );
    expect(existsSync(newDir)).toBe(false);

    worker('held');
    const logs: string[] = [];
    const replacing = await natsTrainRun({ config: config('held', 6, 1), runDir: newDir, nats: { servers: server.url }, replaceRun: true, log: (l) => logs.push(l) });
    expect(replacing.status, replacing.error ?? '').toBe('finished');
    expect(logs.join('\n')).toContain(`replaced run ${held.runId} (interrupted) as the run of 'held': deleted TW_${held.runId}_TRAJ, TW_${held.runId}_PLANS, OBJ_TW_${held.runId}_blobs, KV_TW_${held.runId}_state`);
    expect([...(await streamsOnServer()).keys()].filter((s) => s.includes(held.runId))).toEqual([]);
    expect(storedEpisodes(newDir)).toHaveLength(16);
  });
});
