/**
 * kill -9 in a distributed run over a real nats-server, at moments named by fault points
 * (`TURNWISE_FAULT`, src/core/fault-point.ts) rather than timers; each run then completes (or
 * resumes) and must hold exactly what a fault-free run of the same seed holds: every episode and
 * turn (token ids, log-probs bit for bit, loss masks), the curves and the final weights.
 *
 * - the learner, right after it committed a trajectory to the run store and before acknowledging
 *   it: resumed, the step comes back from the stream, nothing stored twice;
 * - nats-server, while the learner is frozen at that same moment: restarted on its store, every
 *   client reconnects and the run finishes;
 * - a worker, right after it published a trajectory and before acknowledging the plan: the plan is
 *   redelivered, another worker redoes the episode, the re-published copy is dropped;
 * - the only worker: the learner says no episodes worker is connected and, after its bounded
 *   wait, fails the run (no silent hang); a new worker and a resume complete it.
 *
 * The reference is an in-process run. Each forward pass serves one request with no KV cache
 * (`samplerMaxBatch: 1`, `kvCacheMiB: 0`): how concurrent requests happen to be batched changes
 * float32 rounding in the last bit, and the comparison is meant to be exact.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig, resolveConfig } from '../../src/core/config.js';
import { natsTrainRun } from '../../src/runtime/nats/nats-train-run.js';
import { loadRunConfig } from '../../src/runtime/run-folder.js';
import { trainRun } from '../../src/runtime/train/train-run.js';
import { type NatsServerHandle, startNatsServer } from '../helpers/nats-server.js';
import { type CliProcess, expectStoreComplete, killProcess as kill, spawnCli } from '../helpers/nats-run.js';
import { expectSameCurves, expectSameFinalWeights, expectSameStoredContent } from '../helpers/run-content.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-nats-faults-'));
let server: NatsServerHandle;
const procs: ChildProcess[] = [];
const STEPS = 2;
const PER_STEP = 16;

const raw = (name: string) => ({
  seed: 5,
  run: { dir, name },
  env: { name: 'babyai', settings: { levels: ['GoToRedBall'] } },
  algorithm: { tasksPerStep: 4, groupSize: 4 },
  horizon: { schedule: 'fixed', horizon: 5 },
  train: { steps: STEPS, evalEvery: 0, checkpointEvery: 1 },
  runtime: { requestTimeoutMs: 5000, samplerMaxBatch: 1, kvCacheMiB: 0 },
});
const config = (name: string) => resolveConfig(parseConfig(raw(name)));
const referenceDir = join(dir, 'reference');

beforeAll(async () => {
  expect((await trainRun({ config: config('reference'), runDir: referenceDir })).status).toBe('finished');
});
beforeEach(async () => {
  server = await startNatsServer();
});
afterEach(async () => {
  await Promise.all(procs.splice(0).map(kill));
  await server?.stop();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function worker(name: string, env: Record<string, string> = {}, extra: readonly string[] = []): CliProcess {
  return spawnCli(procs, ['worker', '--nats', server.url, '--run', name, '--role', 'sampler,episodes', ...extra], env);
}

/** The run folder holds what the fault-free run holds, and no step has an `error` episode. */
async function expectSameAsReference(runDir: string): Promise<void> {
  expectStoreComplete(runDir, STEPS, PER_STEP);
  expectSameStoredContent(runDir, referenceDir, STEPS * PER_STEP);
  expectSameCurves(runDir, referenceDir, STEPS);
  await expectSameFinalWeights(runDir, referenceDir);
}

function writeConfig(name: string): string {
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify(raw(name)));
  return file;
}

describe('kill -9 in a run over NATS', () => {
  it('of the learner after it stored a trajectory but before acking it: the resumed run replays the step and ends as a fault-free run', async () => {
    const name = 'learner-kill';
    const runDir = join(dir, name);
    const natsArgs = ['--nats', server.url, '--plan-ack-wait-ms', '2000'];
    worker(name);
    worker(name);
    // The 24th trajectory stored is the 8th of step 1 (step 0 has 16).
    const learner = spawnCli(procs, ['train', writeConfig(name), '--run-dir', runDir, ...natsArgs], { TURNWISE_FAULT: 'trajectory-stored@24' });
    await learner.exit;
    expect(learner.proc.signalCode, learner.output()).toBe('SIGKILL');
    const resumed = spawnCli(procs, ['train', '--resume', runDir, ...natsArgs]);
    expect(await resumed.exit, resumed.output()).toBe(0);
    expect(resumed.output()).toMatch(/run finished after 2 steps/);
    expect(resumed.output()).toMatch(/step 1: \d+ trajectories replayed from the stream, [1-9]\d* already stored, 0 rejected/);
    await expectSameAsReference(runDir);
  });

  it('of nats-server while the learner is frozen between storing and acking a trajectory: restarted, the run finishes as a fault-free run', async () => {
    const name = 'server-kill';
    const runDir = join(dir, name);
    worker(name);
    worker(name);
    const learner = spawnCli(procs, ['train', writeConfig(name), '--run-dir', runDir, '--nats', server.url, '--plan-ack-wait-ms', '2000'], {
      TURNWISE_FAULT: 'trajectory-stored@24:stop',
    });
    await learner.frozenAt('trajectory-stored');
    await server.restart({ hard: true });
    learner.proc.kill('SIGCONT');
    expect(await learner.exit, learner.output()).toBe(0);
    expect(learner.output()).toMatch(/run finished after 2 steps/);
    await expectSameAsReference(runDir);
  });

  it('of a worker after it published a trajectory but before acking its plan: the plan is redone elsewhere, the copy dropped', async () => {
    const name = 'worker-kill';
    const runDir = join(dir, name);
    const logs: string[] = [];
    // The victim runs alone until it dies (so it surely holds plans); the survivor starts after.
    const victim = worker(name, { TURNWISE_FAULT: 'trajectory-published@3' });
    const running = natsTrainRun({ config: config(name), runDir, nats: { servers: server.url }, infra: { planAckWaitMs: 1500 }, log: (l) => logs.push(l) });
    await victim.exit;
    expect(victim.proc.signalCode, victim.output()).toBe('SIGKILL');
    const survivor = worker(name);
    const result = await running;
    expect(result.status, result.error ?? '').toBe('finished');
    // The survivor sees the run completed and exits, saying how many it published.
    expect(await survivor.exit, survivor.output()).toBe(0);
    expect(survivor.output()).toMatch(/run completed; published [1-9]\d* trajectories/);
    expect(logs.join('\n')).toMatch(/step 0: [1-9]\d* plan deliveries were redeliveries/);
    await expectSameAsReference(runDir);
  });

  it('of the only worker: the learner reports it, fails after its bounded wait, and a resume with a new worker ends as a fault-free run', async () => {
    const name = 'only-worker';
    const runDir = join(dir, name);
    const logs: string[] = [];
    // One plan at a time: with a step's 16 episodes in flight, the other publications of step 1 can
    // reach the server before the kill lands on the 20th, and step 1 would complete without it.
    worker(name, { TURNWISE_FAULT: 'trajectory-published@20' }, ['--pool', '1']);
    const failed = await natsTrainRun({
      config: config(name),
      runDir,
      nats: { servers: server.url },
      infra: { planAckWaitMs: 1500 },
      workerWaitMs: 3000,
      workerCheckMs: 250,
      log: (l) => logs.push(l),
    });
    expect(failed.status).toBe('failed');
    expect(failed.completedSteps).toBe(1);
    expect(failed.error).toMatch(/^rollout failed: no episodes worker has been connected to run only-worker-[0-9a-f]{8} for [3-9] s \(step 1: \d+ of 16 trajectories in\); start one with `turnwise worker --nats <url> --run only-worker --role sampler,episodes`/);
    expect(logs.join('\n')).toMatch(/no episodes worker is connected \(step 1: \d+ of 16 trajectories in\); waiting up to 3 s for one/);

    worker(name);
    const resumed = await natsTrainRun({ config: await loadRunConfig(runDir), resumeDir: runDir, nats: { servers: server.url }, infra: { planAckWaitMs: 1500 } });
    expect(resumed.status, resumed.error ?? '').toBe('finished');
    await expectSameAsReference(runDir);
  });
});
