/**
 * nats-server killed (kill -9) and restarted on its store while the learner is working, not frozen
 * (test/e2e/nats-faults.test.ts covers a learner frozen across the restart): the learner is caught
 * about to publish new weights (fault point `weights-publishing`), the server is killed, the
 * learner resumes and finds no server, and only once it says so is the server started again. The
 * run must ride it out — reconnect, repeat what was not acknowledged — and end as a fault-free run
 * of the same seed: every episode and turn, the curves and the final weights.
 *
 * And a run that cannot ride it out (the server stays down longer than the learner waits) fails
 * resumable, before its first checkpoint: `--resume` with the server back finishes it, again as
 * the fault-free run.
 *
 * Before the fix: `publishWeights failed: timeout` / `checkpoint failed: timeout`, exit 1, the
 * workers exit, and a resume before the first checkpoint did not find the run.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig, resolveConfig } from '../../src/core/config.js';
import { natsTrainRun } from '../../src/runtime/nats/nats-train-run.js';
import { trainRun } from '../../src/runtime/train/train-run.js';
import { type NatsServerHandle, startNatsServer } from '../helpers/nats-server.js';
import { type CliProcess, expectStoreComplete, killProcess as kill, spawnCli } from '../helpers/nats-run.js';
import { expectSameCurves, expectSameFinalWeights, expectSameStoredContent } from '../helpers/run-content.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-nats-restart-'));
let server: NatsServerHandle;
const procs: ChildProcess[] = [];
const STEPS = 2;
const PER_STEP = 16;

// As in nats-faults.test.ts: one request per forward pass, no KV cache, so the comparison can be exact;
// a generous act timeout, so a loaded machine does not time an act out (an error episode) in one run only.
const raw = (name: string, checkpointEvery: number) => ({
  seed: 5,
  run: { dir, name },
  env: { name: 'babyai', settings: { levels: ['GoToRedBall'] } },
  algorithm: { tasksPerStep: 4, groupSize: 4 },
  horizon: { schedule: 'fixed', horizon: 5 },
  train: { steps: STEPS, evalEvery: 0, checkpointEvery },
  runtime: { requestTimeoutMs: 30_000, samplerMaxBatch: 1, kvCacheMiB: 0 },
});
const referenceDir = join(dir, 'reference');

beforeAll(async () => {
  expect((await trainRun({ config: resolveConfig(parseConfig(raw('reference', 1))), runDir: referenceDir })).status).toBe('finished');
});
beforeEach(async () => {
  server = await startNatsServer();
});
afterEach(async () => {
  await Promise.all(procs.splice(0).map(kill));
  await server?.stop();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function worker(name: string): CliProcess {
  return spawnCli(procs, ['worker', '--nats', server.url, '--run', name, '--role', 'sampler,episodes']);
}

async function expectSameAsReference(runDir: string): Promise<void> {
  expectStoreComplete(runDir, STEPS, PER_STEP);
  expectSameStoredContent(runDir, referenceDir, STEPS * PER_STEP);
  expectSameCurves(runDir, referenceDir, STEPS);
  await expectSameFinalWeights(runDir, referenceDir);
}

describe('a nats-server restart during `train --nats`', () => {
  it('while the learner publishes weights: it waits for the server, re-publishes, and ends as a fault-free run', async () => {
    const name = 'restart-publish';
    const runDir = join(dir, name);
    const file = join(dir, `${name}.json`);
    writeFileSync(file, JSON.stringify(raw(name, 1)));
    const workers = [worker(name), worker(name)];
    // The 2nd publication is weights v1, after step 0 trained (the 1st is v0 at the start).
    const learner = spawnCli(procs, ['train', file, '--run-dir', runDir, '--nats', server.url], { TURNWISE_FAULT: 'weights-publishing@2:stop' });
    // Frozen, not only announced: a SIGCONT sent before the stop lands would leave it stopped.
    await learner.frozenAt('weights-publishing');
    await server.restart({
      hard: true,
      whileDown: async () => {
        learner.proc.kill('SIGCONT');
        // (Or its exit: a learner that gives up at once fails the assertions below instead of hanging here.)
        await Promise.race([learner.waitFor(/NATS unreachable while publishing weights v1/), learner.exit]);
      },
    });
    expect(await learner.exit, learner.output()).toBe(0);
    expect(learner.output()).toMatch(/NATS is back: publishing weights v1 done after/);
    expect(learner.output()).toMatch(/run finished after 2 steps/);
    // The workers rode it out too, and left when the run completed.
    for (const w of workers) {
      expect(await w.exit, w.output()).toBe(0);
      expect(w.output()).toMatch(/run completed; published \d+ trajectories/);
    }
    await expectSameAsReference(runDir);
  });

  it('longer than the learner waits, before the first checkpoint: the run fails resumable, and --resume finishes it as a fault-free run', async () => {
    const name = 'outage-resume';
    const runDir = join(dir, name);
    worker(name);
    worker(name);
    const config = resolveConfig(parseConfig(raw(name, 0)));
    let learnerDone: () => void = () => undefined;
    const down = new Promise<void>((resolve) => {
      learnerDone = resolve;
    });
    let restarted: Promise<void> = Promise.resolve();
    const failed = await natsTrainRun({
      config,
      runDir,
      nats: { servers: server.url },
      outageWaitMs: 1500,
      onEvent: (e) => {
        // Killed once step 1 is done, and started again only after the learner gave up (no checkpoint: checkpointEvery 0).
        if (e.type === 'step' && e.step === 1) restarted = server.restart({ hard: true, whileDown: () => down });
      },
    }).finally(learnerDone);
    await restarted;
    expect(failed.status, failed.error ?? '').toBe('failed');
    expect(failed.error).toMatch(/NATS was unreachable for \d+ s while .*; the run is resumable once the server is back/);
    const resumed = await natsTrainRun({ config, resumeDir: runDir, nats: { servers: server.url } });
    expect(resumed.status, resumed.error ?? '').toBe('finished');
    await expectSameAsReference(runDir);
  });
});
