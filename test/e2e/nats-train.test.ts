/**
 * A distributed BabyAI run over a real nats-server: this process is the coordinator + learner
 * (`natsTrainRun`), two `turnwise worker` processes (sampler + episodes each) run the episodes.
 * Each test ends by checking the run store's trajectory count against what the run produced.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, resolveConfig } from '../../src/core/config.js';
import { connectNats } from '../../src/runtime/nats/connect.js';
import { natsTrainRun } from '../../src/runtime/nats/nats-train-run.js';
import { openRunInfra } from '../../src/runtime/nats/run-infra.js';
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
  });

  it('finishes when a worker is killed with SIGKILL mid-run; its in-flight episodes are redone, none counted twice', async () => {
    const steps = 3;
    const config = smallConfig('nats-kill', steps);
    const victim = spawnCli(workers, ['worker', '--nats', server.url, '--run', 'nats-kill', '--role', 'sampler,episodes']);
    const survivor = spawnCli(workers, ['worker', '--nats', server.url, '--run', 'nats-kill', '--role', 'sampler,episodes']);
    const runDir = join(dir, 'nats-kill');
    const logs: string[] = [];
    const running = natsTrainRun({ config, runDir, nats: { servers: server.url }, infra: { planAckWaitMs: 1500 }, log: (l) => logs.push(l) });
    // Kill the victim as soon as it runs episodes of step 1: it holds plans it will never finish.
    await victim.waitFor(/running plans of step 1/);
    await killProcess(victim.proc);
    const result = await running;
    expect(result.status).toBe('finished');
    expect(survivor.output()).toMatch(/serving policy v3/);
    // The victim's unfinished plans came back to the work queue and were run again.
    const nc = await connectNats({ servers: server.url });
    const infra = await openRunInfra(nc, 'nats-kill');
    // Deliveries (consumer sequence, redeliveries included) outnumber the plans (stream sequence).
    const { delivered } = await infra.jsm.consumers.info(infra.names.planStream, infra.names.planConsumer);
    expect(delivered.stream_seq).toBe(steps * 64);
    expect(delivered.consumer_seq).toBeGreaterThan(delivered.stream_seq);
    await nc.close();
    expectStoreComplete(runDir, steps, 64);
  });
});
