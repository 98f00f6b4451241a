/**
 * A distributed BabyAI run over a real nats-server: this process is the coordinator + learner
 * (`natsTrainRun`), two `turnwise worker` processes (sampler + episodes each) run the episodes.
 * Each test ends by checking the run store's trajectory count against what the run produced.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, resolveConfig } from '../../src/core/config.js';
import { connectNats } from '../../src/runtime/nats/connect.js';
import { natsTrainRun } from '../../src/runtime/nats/nats-train-run.js';
import { openRunInfra } from '../../src/runtime/nats/run-infra.js';
import { RunStore } from '../../src/store/run-store.js';
import { type NatsServerHandle, startNatsServer } from '../helpers/nats-server.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-nats-e2e-'));
let server: NatsServerHandle;
const workers: ChildProcess[] = [];

beforeAll(async () => {
  server = await startNatsServer();
});
afterEach(async () => {
  await Promise.all(workers.splice(0).map(stopProcess));
});
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function stopProcess(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  proc.kill('SIGKILL');
  return exited;
}

/** Spawns `turnwise worker`; resolves with the process and a way to await a line of its log. */
function spawnWorker(runId: string): { proc: ChildProcess; output: () => string; waitFor: (pattern: RegExp) => Promise<void> } {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'worker', '--nats', server.url, '--run', runId, '--role', 'sampler,episodes'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  workers.push(proc);
  let output = '';
  const waiters: { pattern: RegExp; resolve: () => void }[] = [];
  const onData = (d: Buffer) => {
    output += d.toString('utf8');
    for (const w of waiters.splice(0)) {
      if (w.pattern.test(output)) w.resolve();
      else waiters.push(w);
    }
  };
  proc.stdout?.on('data', onData);
  proc.stderr?.on('data', onData);
  return {
    proc,
    output: () => output,
    waitFor: (pattern) =>
      new Promise((resolve) => {
        if (pattern.test(output)) resolve();
        else waiters.push({ pattern, resolve });
      }),
  };
}

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

/** Every step has exactly its 64 train trajectories in the store, and no other train episode exists. */
function expectStoreComplete(runDir: string, steps: number): void {
  const store = RunStore.open(runDir, { readonly: true });
  try {
    const episodes = store.episodes({ split: 'train', limit: 100_000 });
    expect(episodes).toHaveLength(steps * 64);
    expect(new Set(episodes.map((e) => e.id)).size).toBe(steps * 64);
    for (let step = 0; step < steps; step++) expect(episodes.filter((e) => e.step === step)).toHaveLength(64);
  } finally {
    store.close();
  }
}

describe('training over NATS with two worker processes', () => {
  it('learns as the in-process run does, and stores every trajectory once', async () => {
    const steps = 8;
    const config = smallConfig('nats-learn', steps);
    spawnWorker('nats-learn');
    spawnWorker('nats-learn');
    const runDir = join(dir, 'nats-learn');
    const result = await natsTrainRun({ config, runDir, nats: { servers: server.url } });
    expect(result.status).toBe('finished');
    const [before, after] = result.evals;
    // Same bar as the in-process learning test (untrained about 0.4).
    expect(after!.successRate).toBeGreaterThanOrEqual(before!.successRate + 0.15);
    expectStoreComplete(runDir, steps);
  });

  it('finishes when a worker is killed with SIGKILL mid-run; its in-flight episodes are redone, none counted twice', async () => {
    const steps = 3;
    const config = smallConfig('nats-kill', steps);
    const victim = spawnWorker('nats-kill');
    const survivor = spawnWorker('nats-kill');
    const runDir = join(dir, 'nats-kill');
    const logs: string[] = [];
    const running = natsTrainRun({ config, runDir, nats: { servers: server.url }, infra: { planAckWaitMs: 1500 }, log: (l) => logs.push(l) });
    // Kill the victim as soon as it runs episodes of step 1: it holds plans it will never finish.
    await victim.waitFor(/running plans of step 1/);
    await stopProcess(victim.proc);
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
    expectStoreComplete(runDir, steps);
  });
});
