import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it, expect } from 'vitest';
import { startNatsServer } from '../helpers/nats-server.js';
import { spawnCli, killProcess } from '../helpers/nats-run.js';

it('scratch: restart nats mid-run', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'scratch-'));
  const server = await startNatsServer();
  const procs: ChildProcess[] = [];
  const name = 'scr';
  const raw = { seed: 5, run: { dir, name }, env: { name: 'babyai', settings: { levels: ['GoToRedBall'] } }, algorithm: { tasksPerStep: 4, groupSize: 4 }, horizon: { schedule: 'fixed', horizon: 5 }, train: { steps: 4, evalEvery: 0, checkpointEvery: 1 }, runtime: { requestTimeoutMs: 5000, samplerMaxBatch: 1, kvCacheMiB: 0 } };
  const file = join(dir, 'c.json'); writeFileSync(file, JSON.stringify(raw));
  const w1 = spawnCli(procs, ['worker', '--nats', server.url, '--run', name, '--role', 'sampler,episodes']);
  const learner = spawnCli(procs, ['train', file, '--run-dir', join(dir, name), '--nats', server.url]);
  await learner.waitFor(new RegExp(process.env.AT ?? 'step 1'));
  await server.restart({ hard: true });
  const code = await Promise.race([learner.exit, new Promise((r) => setTimeout(() => r('TIMEOUT'), 120000))]);
  console.log('LEARNER', code, learner.output().slice(-6000));
  console.log('WORKER', w1.output().slice(-6000));
  await Promise.all(procs.map(killProcess));
  await server.stop();
  expect(code).toBe(0);
});
