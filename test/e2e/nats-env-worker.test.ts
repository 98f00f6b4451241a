/**
 * Remote env sessions: a BabyAI run over a real nats-server whose episodes worker
 * (`--role sampler,episodes --remote-env`) leases every env session from a separate
 * `turnwise worker --role env` process. Ends with the store's trajectory count checked against the plan.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, resolveConfig } from '../../src/core/config.js';
import { natsTrainRun } from '../../src/runtime/nats/nats-train-run.js';
import { expectStoreComplete, killProcess, spawnCli } from '../helpers/nats-run.js';
import { type NatsServerHandle, startNatsServer } from '../helpers/nats-server.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-nats-env-'));
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

describe('env sessions served by an env worker process', () => {
  it('runs every planned episode on leased remote sessions and stores each trajectory once', async () => {
    const steps = 2;
    const perStep = 4 * 4;
    const config = resolveConfig(
      parseConfig({
        seed: 11,
        run: { dir, name: 'nats-env' },
        env: { name: 'babyai', settings: { levels: ['GoToRedBall'] } },
        algorithm: { tasksPerStep: 4, groupSize: 4, lr: 0.001 },
        horizon: { schedule: 'fixed', horizon: 5 },
        train: { steps, evalEvery: steps, evalTasks: 8, checkpointEvery: 0 },
      }),
    );
    // Fewer sessions than episodes per step: leases are released and granted again as episodes end.
    const env = spawnCli(workers, ['worker', '--nats', server.url, '--run', 'nats-env', '--role', 'env', '--env-capacity', '8']);
    const episodes = spawnCli(workers, ['worker', '--nats', server.url, '--run', 'nats-env', '--role', 'sampler,episodes', '--remote-env', '--pool', '6', '--max-act-in-flight', '4']);
    const runDir = join(dir, 'nats-env');
    const result = await natsTrainRun({ config, runDir, nats: { servers: server.url } });
    expect(result.status).toBe('finished');
    expectStoreComplete(runDir, steps, perStep);
    // Both workers see the run end and exit; the env worker reports the leases it granted.
    expect(await episodes.exit).toBe(0);
    expect(await env.exit).toBe(0);
    expect(episodes.output()).toMatch(/episodes use env sessions leased from env workers/);
    const granted = Number(/granted (\d+) leases/.exec(env.output())?.[1]);
    // The runner leases one session per pool slot and keeps it across episodes (6 slots, twice per step at most).
    expect(granted).toBeGreaterThanOrEqual(6);
    expect(env.output()).toMatch(/reclaimed 0 expired/);
  });
});
