/**
 * AgentGym health reports reach the run store: a training run against `turnwise env serve` whose
 * connection drops under one `/step` records the failed session and the fresh instance that
 * replaced it as `agentgym/health` events (what `turnwise ui` lists), and the run goes on.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getRequestListener } from '@hono/node-server';
import { afterAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { parseConfig, resolveConfig } from '../../src/core/config.js';
import { babyaiSpec } from '../../src/envs/babyai/index.js';
import { createAgentGymApp } from '../../src/envs/agentgym/server/app.js';
import { createFastListener } from '../../src/envs/agentgym/server/fast-listener.js';
import { trainRun } from '../../src/runtime/train/train-run.js';
import { RunStore } from '../../src/store/run-store.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-agentgym-health-'));
const built = createAgentGymApp({ spec: babyaiSpec, settings: { levels: ['GoToRedBall'] }, maxSessions: 64, idleMs: 0, maxBodyBytes: 1 << 20, cors: false, clock: systemClock });
let steps = 0;
const fast = createFastListener({ protocol: built.protocol, maxBodyBytes: 1 << 20, cors: false, fallback: getRequestListener(built.app.fetch) });
// The third /step of the run loses its connection before it reaches the environment.
const server: Server = createServer((req, res) => {
  if (req.url === '/step' && ++steps === 3) {
    req.socket.destroy();
    return;
  }
  fast(req, res);
});

afterAll(async () => {
  await new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
  await built.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('AgentGym health in the run store', () => {
  it('records a failed session and its replacement as agentgym/health events, and finishes the run', async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const config = resolveConfig(
      parseConfig({
        seed: 3,
        run: { dir, name: 'agentgym-health' },
        env: { name: 'agentgym', settings: { type: 'babyai', url, levels: ['GoToRedBall'] } },
        algorithm: { tasksPerStep: 2, groupSize: 2 },
        horizon: { schedule: 'fixed', horizon: 3 },
        train: { steps: 2, evalEvery: 0, checkpointEvery: 0 },
      }),
    );
    const infos: string[] = [];
    const result = await trainRun({ config, runDir: join(dir, 'run'), onEvent: (e) => e.type === 'info' && infos.push(e.message) });
    expect(result.status).toBe('finished');
    expect(result.completedSteps).toBe(2);

    const store = RunStore.open(result.runDir);
    store.useRun(result.runId);
    const events = store.events('agentgym/health');
    store.close();
    const data = events.map((e) => e.data as { kind: string; instanceId: number; replaces?: number; url: string });
    expect(data.map((d) => d.kind)).toEqual(['session-failed', 'session-recreated']);
    expect(data[1]?.replaces).toBe(data[0]?.instanceId);
    expect(data.every((d) => d.url === url)).toBe(true);
    // Failed during step 1's rollout (0 steps completed); replaced when step 2's episodes leased instances.
    expect(events.map((e) => e.step)).toEqual([0, 1]);
    expect(events[0]?.message).toContain(`instance ${data[0]?.instanceId} on ${url} failed`);
    expect(infos).toContain(events[1]?.message);
  });
});
