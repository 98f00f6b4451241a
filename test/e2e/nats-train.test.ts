/**
 * A distributed BabyAI run over a real nats-server: this process is the coordinator + learner
 * (`natsTrainRun`), two `turnwise worker` processes (sampler + episodes each) run the episodes.
 * The run ends by checking the run store's trajectory count against what the run produced, and
 * that its NATS streams were deleted once it completed. Worker, learner and server crashes are in
 * nats-faults.test.ts.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, resolveConfig } from '../../src/core/config.js';
import { connectNats } from '../../src/bus/nats-connect.js';
import { natsTrainRun } from '../../src/runtime/nats/nats-train-run.js';
import { type NatsServerHandle, startNatsServer } from '../helpers/nats-server.js';
import { expectStoreComplete, killProcess, spawnCli } from '../helpers/nats-run.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-nats-e2e-'));
let server: NatsServerHandle;
const workers: ChildProcess[] = [];

beforeAll(async () => {
  server = await startNatsServer();
});
afterEach(async () => {
  await Promise.all(workers.splice(0).map(killProcess));
});
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function smallConfig(name: string, steps: number) {
  return resolveConfig(
    parseConfig({
      seed: 7,
      run: { dir, name },
      env: { name: 'babyai', settings: { levels: ['GoToRedBall'] } },
      algorithm: { tasksPerStep: 8, groupSize: 8, lr: 0.001 },
      horizon: { schedule: 'fixed', horizon: 5 },
      train: { steps, evalEvery: steps, evalTasks: 64, checkpointEvery: 0 },
    }),
  );
}

describe('training over NATS with two worker processes', () => {
  it('learns as the in-process run does, and stores every trajectory once', async () => {
    const steps = 8;
    const config = smallConfig('nats-learn', steps);
    spawnCli(workers, ['worker', '--nats', server.url, '--run', 'nats-learn', '--role', 'sampler,episodes']);
    spawnCli(workers, ['worker', '--nats', server.url, '--run', 'nats-learn', '--role', 'sampler,episodes']);
    const runDir = join(dir, 'nats-learn');
    const result = await natsTrainRun({ config, runDir, nats: { servers: server.url } });
    expect(result.status).toBe('finished');
    const [before, after] = result.evals;
    // Same bar as the in-process learning test (untrained about 0.4).
    expect(after!.successRate).toBeGreaterThanOrEqual(before!.successRate + 0.15);
    expectStoreComplete(runDir, steps, 64);
    // Retention: a completed run leaves only its small state bucket (and the name registry).
    const nc = await connectNats({ servers: server.url });
    const jsm = await jetstreamManager(nc);
    const streams: string[] = [];
    for await (const info of jsm.streams.list()) streams.push(info.config.name);
    await nc.close();
    expect(streams.sort()).toEqual([`KV_TW_${result.runId}_state`, 'KV_TW_runs']);
  });
});
