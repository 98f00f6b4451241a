/**
 * Faults in a distributed run over a real nats-server; each test ends by checking the run store's
 * trajectory count against the episodes the run planned (every step complete, no id twice).
 * - the learner process is killed with SIGKILL mid-step and resumed from its checkpoint: the step's
 *   trajectories are replayed from the stream (the unacknowledged ones included), none lost;
 * - nats-server restarts mid-run: clients reconnect and the run finishes.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig, resolveConfig } from '../../src/core/config.js';
import { natsTrainRun } from '../../src/runtime/nats/nats-train-run.js';
import { type NatsServerHandle, startNatsServer } from '../helpers/nats-server.js';
import { type CliProcess, expectStoreComplete, killProcess as kill, spawnCli } from '../helpers/nats-run.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-nats-faults-'));
let server: NatsServerHandle;
const procs: ChildProcess[] = [];

beforeEach(async () => {
  server = await startNatsServer();
});
afterEach(async () => {
  await Promise.all(procs.splice(0).map(kill));
  await server?.stop();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const raw = (name: string, steps: number) => ({
  seed: 5,
  run: { dir, name },
  env: { name: 'babyai', settings: { levels: ['GoToRedBall'] } },
  algorithm: { tasksPerStep: 4, groupSize: 8 },
  horizon: { schedule: 'fixed', horizon: 5 },
  train: { steps, evalEvery: 0, checkpointEvery: 1 },
  runtime: { requestTimeoutMs: 5000 },
});

/** Two sampler+episodes worker processes for run `name`. */
function startWorkers(name: string): CliProcess[] {
  return [0, 1].map(() => spawnCli(procs, ['worker', '--nats', server.url, '--run', name, '--role', 'sampler,episodes']));
}

/**
 * Resolves when any worker starts running plans of `step`. Either may take them all (a slow second
 * start, or a fast step): waiting on one worker's log alone hung until the test timed out.
 */
function stepStarted(workers: readonly CliProcess[], step: number): Promise<void> {
  const pattern = new RegExp(`running plans of step ${step}\\b`);
  return Promise.race(workers.map((w) => w.waitFor(pattern)));
}

describe('faults in a run over NATS', () => {
  it('resumes a SIGKILLed learner from its checkpoint; the step is replayed from the stream, nothing lost or duplicated', async () => {
    const steps = 3;
    const name = 'learner-kill';
    const runDir = join(dir, name);
    const configFile = join(dir, `${name}.json`);
    writeFileSync(configFile, JSON.stringify(raw(name, steps)));
    const natsArgs = ['--nats', server.url, '--plan-ack-wait-ms', '2000'];
    const workers = startWorkers(name);
    const learner = spawnCli(procs, ['train', configFile, '--run-dir', runDir, ...natsArgs]);
    // Step 0 trained and checkpointed (plans of step 1 go out after the checkpoint): kill while step 1's episodes stream in.
    await stepStarted(workers, 1);
    await kill(learner.proc);
    const resumed = spawnCli(procs, ['train', '--resume', runDir, ...natsArgs]);
    expect(await resumed.exit).toBe(0);
    expect(resumed.output()).toMatch(/run finished after 3 steps/);
    // Whatever step 1 had produced before the kill came back from the stream (logged as replayed), the rest was planned again.
    expect(resumed.output()).not.toMatch(/[1-9]\d* rejected/);
    expectStoreComplete(runDir, steps, 32);
  });

  it('finishes the run when nats-server restarts mid-run; clients reconnect', async () => {
    const steps = 2;
    const name = 'server-restart';
    const workers = startWorkers(name);
    const runDir = join(dir, name);
    const running = natsTrainRun({ config: resolveConfig(parseConfig(raw(name, steps))), runDir, nats: { servers: server.url }, infra: { planAckWaitMs: 2000 } });
    await stepStarted(workers, 1);
    await server.restart();
    const result = await running;
    expect(result.status).toBe('finished');
    expectStoreComplete(runDir, steps, 32);
  });
});
