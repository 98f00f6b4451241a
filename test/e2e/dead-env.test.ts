/**
 * A dead remote environment server or policy endpoint fails the run or the evaluation once the
 * clients' retries are spent, with a non-zero exit and a message naming it, and keeps what was
 * done before: no run "finishes" at success 0 on episodes nobody played.
 * - `train` against an AgentGym server (`turnwise env serve`'s app) that goes away at the start of
 *   step 1 (its 5th /reset, counted by the test's listener): exit 1 naming the step and the URL;
 *   step 0 and its checkpoint are kept, and a resume once the server is back completes the run;
 * - `eval --remote` at a port where nothing listens: non-zero exit naming the policy and the
 *   endpoint; its episodes are in the run folder, marked failed.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getRequestListener } from '@hono/node-server';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { babyaiSpec } from '../../src/envs/babyai/index.js';
import { createAgentGymApp } from '../../src/envs/agentgym/server/app.js';
import { createFastListener } from '../../src/envs/agentgym/server/fast-listener.js';
import { loadRunConfig } from '../../src/runtime/run-folder.js';
import { trainRun } from '../../src/runtime/train/train-run.js';
import { RunStore } from '../../src/store/run-store.js';
import { freePort } from '../helpers/nats-server.js';
import { killProcess, spawnCli } from '../helpers/nats-run.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-dead-env-'));
const procs: ChildProcess[] = [];
const built = createAgentGymApp({ spec: babyaiSpec, settings: { levels: ['GoToRedBall'] }, maxSessions: 64, idleMs: 0, maxBodyBytes: 1 << 20, cors: false, clock: systemClock });
const fast = createFastListener({ protocol: built.protocol, maxBodyBytes: 1 << 20, cors: false, fallback: getRequestListener(built.app.fetch) });
let server: Server | null = null;
const sockets = new Set<Socket>();

/** Serves the environment on `port`; `dieAtReset` = the n-th /reset on which the server goes away. */
function serve(port: number, dieAtReset = Number.POSITIVE_INFINITY): Promise<void> {
  let resets = 0;
  const s = createServer((req, res) => {
    if (req.url === '/reset' && ++resets === dieAtReset) {
      s.close();
      for (const socket of sockets) socket.destroy();
      return;
    }
    fast(req, res);
  });
  s.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server = s;
  return new Promise((resolve) => s.listen(port, '127.0.0.1', resolve));
}

afterEach(async () => {
  await Promise.all(procs.splice(0).map(killProcess));
});
afterAll(async () => {
  server?.close();
  for (const socket of sockets) socket.destroy();
  await built.close();
  rmSync(dir, { recursive: true, force: true });
});

function episodesByStep(runDir: string): Record<number, number> {
  const store = RunStore.open(runDir, { readonly: true });
  try {
    const out: Record<number, number> = {};
    for (const e of store.episodes({ split: 'train', limit: 10_000 })) {
      expect(e.outcome, `${e.id}: ${e.error}`).not.toBe('error');
      out[e.step] = (out[e.step] ?? 0) + 1;
    }
    return out;
  } finally {
    store.close();
  }
}

describe('a dead environment server or policy endpoint', () => {
  it('fails `train` after the retries with exit 1 naming the step and the server; step 0 is kept and a resume completes the run', async () => {
    const port = await freePort();
    await serve(port, 5);
    const url = `http://127.0.0.1:${port}`;
    const runDir = join(dir, 'train');
    const configFile = join(dir, 'train.json');
    writeFileSync(
      configFile,
      JSON.stringify({
        seed: 3,
        run: { dir, name: 'dead-env' },
        env: { name: 'agentgym', settings: { type: 'babyai', url, levels: ['GoToRedBall'], retries: 2, backoffMs: 50 } },
        algorithm: { tasksPerStep: 2, groupSize: 2 },
        horizon: { schedule: 'fixed', horizon: 3 },
        train: { steps: 2, evalEvery: 0, checkpointEvery: 1 },
      }),
    );
    const failed = spawnCli(procs, ['train', configFile, '--run-dir', runDir]);
    expect(await failed.exit, failed.output()).toBe(1);
    expect(failed.output()).toMatch(/run failed after 1 steps/);
    expect(failed.output()).toContain('error: rollout failed: every episode of step 1 ended in error (4 of 4); the first: ');
    expect(failed.output()).toContain(url);
    expect(episodesByStep(runDir)).toEqual({ 0: 4 });
    expect(existsSync(join(runDir, 'checkpoints', 'step-000001', 'model.safetensors'))).toBe(true);

    await serve(port);
    const resumed = await trainRun({ config: await loadRunConfig(runDir), resumeDir: runDir });
    expect(resumed.status, resumed.error ?? '').toBe('finished');
    expect(episodesByStep(runDir)).toEqual({ 0: 4, 1: 4 });
  });

  it('fails `eval --remote` at a dead port with a non-zero exit naming the policy and the endpoint; its episodes are kept', async () => {
    const port = await freePort();
    const out = join(dir, 'eval');
    const evaluation = spawnCli(procs, ['eval', '--remote', `dead=http://127.0.0.1:${port}/v1,model=m,max-retries=1`, '--env', 'babyai', '--tasks', '2', '--out', out]);
    const code = await evaluation.exit;
    expect(code, evaluation.output()).not.toBe(0);
    expect(evaluation.output()).toContain(`policy 'dead' (http://127.0.0.1:${port}/v1 model m (actions: text)): every episode ended in error (2 of 2) after the client's retries; the first: `);
    expect(evaluation.output()).toContain(`Results so far are in ${out}`);
    const store = RunStore.open(out, { readonly: true });
    try {
      expect(store.run('dead')?.status).toBe('failed');
      expect(store.episodes({ runId: 'dead', split: 'eval' }).map((e) => e.outcome)).toEqual(['error', 'error']);
    } finally {
      store.close();
    }
  });
});
