import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../src/core/clock.js';
import type { Trajectory, Turn } from '../../src/core/types.js';
import { acquireRunLock, type RunLock } from '../../src/runtime/run-lock.js';
import { RunStore } from '../../src/store/run-store.js';
import { createUiApp } from '../../src/ui/server/app.js';
import { defaultAssetsDir } from '../../src/ui/server/server.js';

const root = mkdtempSync(join(tmpdir(), 'turnwise-ui-api-'));
const runDir = join(root, 'alpha');
// The run is live: this process holds its writer lock (without one, a `running` run shows as `stale`).
let writerLock: RunLock;
afterAll(() => {
  writerLock.release();
  rmSync(root, { recursive: true, force: true });
});

function turn(index: number, policyVersion: number, mask: number[]): Turn {
  return {
    index,
    observationText: `obs ${index}`,
    promptTokens: Int32Array.from([1, 2, 3]),
    actionText: `go forward ${index}`,
    actionTokens: Int32Array.from(mask.map((_, i) => 10 + i)),
    actionLogprobs: Float32Array.from(mask.map((m) => (m ? -0.5 : 0))),
    actionLossMask: Uint8Array.from(mask),
    constraint: null,
    policyVersion,
    reward: index === 1 ? 1 : 0,
    invalidAction: false,
  };
}

const trajectory = (id: string, step: number, turns: Turn[], outcome: Trajectory['outcome']): Trajectory => ({
  trajectoryId: id,
  taskId: `babyai_${step}`,
  groupId: `s${step}/t0`,
  step,
  turns,
  reward: outcome === 'success' ? 1 : 0,
  outcome,
  horizon: 3,
  finalObservationText: 'done',
});

const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

beforeAll(async () => {
  writerLock = await acquireRunLock(runDir, 'test writer');
  // A hand-made store: two steps, a horizon stage change at step 2, one trained episode per step.
  const store = RunStore.open(runDir);
  store.createRun({ id: 'alpha', name: 'alpha', createdAt: 1_000, config: { env: { name: 'babyai' }, algorithm: { name: 'grpo' }, train: { steps: 4 } }, backend: 'cpu', seed: 7 });
  store.logMetrics(1, { 'rollout/successRate': 0.25, 'policy/version': 1 });
  store.logMetrics(2, { 'rollout/successRate': 0.5, 'policy/version': 2 });
  store.logEvent(2, 'horizon/stage', 'horizon 0 -> 1', { horizon: 3 });
  store.recordTrajectories('alpha', 'train', [
    trajectory('s0/t0/g0', 0, [turn(0, 0, [1, 0])], 'failure'),
    // Produced by versions 0 and 1, trained on at step 2 by version 2: staleness 2 and 1.
    trajectory('s2/t0/g0', 2, [turn(0, 0, [1, 1, 0]), turn(1, 1, [0, 1])], 'success'),
  ]);
  store.close();
});

const json = async (res: Response) => ({ status: res.status, body: (await res.json()) as Record<string, unknown> });

describe('turnwise ui API', () => {
  it('lists runs with status, backend and latest metrics, and serves series and events', async () => {
    const ui = createUiApp({ runsDir: root });
    try {
      const runs = await json(await ui.app.request('/api/runs'));
      expect(runs.status).toBe(200);
      const [run] = runs.body.runs as { id: string; status: string; backend: string; kind: string; env: string; latest: Record<string, [number, number]> }[];
      expect(run).toMatchObject({ id: 'alpha', status: 'running', backend: 'cpu', kind: 'train', env: 'babyai' });
      expect(run?.latest['rollout/successRate']).toEqual([2, 0.5]);

      const metrics = await json(await ui.app.request('/api/runs/alpha/metrics?names=rollout/successRate'));
      expect(metrics.body.series).toEqual({ 'rollout/successRate': [[1, 0.25], [2, 0.5]] });
      const events = await json(await ui.app.request('/api/runs/alpha/events?kind=horizon/stage'));
      expect(events.body.events).toEqual([{ step: 2, kind: 'horizon/stage', message: 'horizon 0 -> 1', data: { horizon: 3 } }]);
    } finally {
      ui.close();
    }
  });

  it("shows an episode's turns with policy versions, staleness and loss masks", async () => {
    const ui = createUiApp({ runsDir: root });
    try {
      const list = await json(await ui.app.request('/api/runs/alpha/episodes?split=train&outcome=success'));
      expect((list.body.episodes as { id: string }[]).map((e) => e.id)).toEqual(['s2/t0/g0']);
      const res = await json(await ui.app.request(`/api/episodes/${encodeURIComponent('s2/t0/g0')}/turns?run=alpha`));
      expect(res.status).toBe(200);
      const turns = res.body.turns as { policyVersion: number; staleness: number; lossMask: number[]; actionTokens: number[]; promptTokenCount: number }[];
      expect(turns.map((t) => [t.policyVersion, t.staleness])).toEqual([
        [0, 2],
        [1, 1],
      ]);
      expect(turns[0]).toMatchObject({ lossMask: [1, 1, 0], actionTokens: [10, 11, 12], promptTokenCount: 3 });
      const steps = await json(await ui.app.request('/api/runs/alpha/episode-steps?split=train'));
      // The curves' steps: rollouts 0 and 2 made the metrics logged at steps 1 and 3.
      expect(steps.body.steps).toEqual([
        { step: 1, total: 1, failure: 1 },
        { step: 3, total: 1, success: 1 },
      ]);
    } finally {
      ui.close();
    }
  });

  it("numbers training episodes by the curves' step: rollout 0's episodes are behind the point at step 1", async () => {
    const ui = createUiApp({ runsDir: root });
    try {
      // rollout/successRate at step 1 (0.25) is the rate of the episodes stored at rollout step 0.
      const atOne = await json(await ui.app.request('/api/runs/alpha/episodes?step=1&split=train'));
      expect((atOne.body.episodes as { id: string; step: number }[]).map((e) => [e.id, e.step])).toEqual([['s0/t0/g0', 1]]);
      const atZero = await json(await ui.app.request('/api/runs/alpha/episodes?step=0&split=train'));
      expect(atZero.body.episodes).toEqual([]);
      const all = await json(await ui.app.request('/api/runs/alpha/episodes?split=train'));
      expect((all.body.episodes as { step: number }[]).map((e) => e.step)).toEqual([1, 3]);
      const turns = await json(await ui.app.request(`/api/episodes/${encodeURIComponent('s0/t0/g0')}/turns?run=alpha&step=1`));
      expect(turns.status).toBe(200);
      expect((turns.body.episode as { step: number }).step).toBe(1);
      const wrongStep = await json(await ui.app.request(`/api/episodes/${encodeURIComponent('s0/t0/g0')}/turns?run=alpha&step=0`));
      expect(wrongStep.status).toBe(404);
    } finally {
      ui.close();
    }
  });

  it("reports the run's AgentGym server health in the run list: how many reports, and the newest", async () => {
    const writer = RunStore.open(runDir);
    try {
      writer.useRun('alpha');
      writer.logEvent(1, 'agentgym/health', 'agentgym: babyai server http://127.0.0.1:1 failed 3 requests in a row', { kind: 'failing', consecutiveFailures: 3 });
      writer.logEvent(2, 'agentgym/health', 'agentgym: babyai server http://127.0.0.1:1 answers again (3 failed requests so far)', { kind: 'recovered', consecutiveFailures: 0 });
    } finally {
      writer.close();
    }
    const ui = createUiApp({ runsDir: root });
    try {
      const runs = await json(await ui.app.request('/api/runs'));
      const [run] = runs.body.runs as { health: unknown }[];
      expect(run?.health).toEqual({ reports: 2, latest: { step: 2, kind: 'recovered', message: 'agentgym: babyai server http://127.0.0.1:1 answers again (3 failed requests so far)' } });
    } finally {
      ui.close();
    }
  });

  it('refuses path traversal with 400 and unknown ids with 404, as JSON naming the input', async () => {
    const ui = createUiApp({ runsDir: root, assetsDir: join(root, 'alpha') });
    try {
      for (const path of ['/api/runs/..%2F..%2Fetc/metrics', '/api/runs/%2e%2e%2Falpha/events', '/..%2f..%2fpackage.json', '/checkpoints/..%2F..%2Falpha/run.db']) {
        const res = await json(await ui.app.request(path));
        expect(res.status, path).toBe(400);
        expect((res.body.error as { type: string }).type, path).toBe('path_traversal');
      }
      const unknown = await json(await ui.app.request('/api/runs/nope/metrics'));
      expect(unknown.status).toBe(404);
      expect((unknown.body.error as { message: string }).message).toContain("no run 'nope'");
      const noEpisode = await json(await ui.app.request('/api/episodes/zzz/turns?run=alpha'));
      expect(noEpisode.status).toBe(404);
      const badSplit = await json(await ui.app.request('/api/runs/alpha/episodes?split=bogus'));
      expect(badSplit.status).toBe(400);
      expect((badSplit.body.error as { message: string }).message).toContain("'split'");
      const noRun = await json(await ui.app.request('/api/episodes/s0%2Ft0%2Fg0/turns'));
      expect(noRun.status).toBe(400);
    } finally {
      ui.close();
    }
  });

  it('streams a snapshot, then only new points as the run logs them (simulated clock)', async () => {
    const clock = new SimulatedClock();
    const ui = createUiApp({ runsDir: root, clock, pollMs: 500 });
    const writer = RunStore.open(runDir);
    try {
      const res = await ui.app.request('/api/runs/alpha/stream?names=rollout/successRate');
      expect(res.headers.get('content-type')).toContain('text/event-stream');
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      const decoder = new TextDecoder();
      const next = async () => {
        const { value } = await reader.read();
        const text = decoder.decode(value);
        return { event: /event: (\w+)/.exec(text)?.[1], data: JSON.parse(/data: (.*)/.exec(text)?.[1] ?? 'null') };
      };
      const snapshot = await next();
      expect(snapshot.event).toBe('snapshot');
      expect(snapshot.data.metrics).toEqual({ 'rollout/successRate': [[1, 0.25], [2, 0.5]] });
      expect(snapshot.data.status).toBe('running');

      writer.logMetrics(3, { 'rollout/successRate': 0.75, 'policy/version': 3 });
      writer.setRunStatus('completed');
      // The poll timer is armed once the server has flushed the snapshot: advance until it fires.
      let delta: Awaited<ReturnType<typeof next>> | undefined;
      const pending = next().then((d) => {
        delta = d;
      });
      for (let i = 0; i < 100 && delta === undefined; i++) {
        clock.advance(500);
        await new Promise((resolve) => setImmediate(resolve));
      }
      await pending;
      if (delta === undefined) throw new Error('no delta after 100 polls');
      expect(delta.event).toBe('delta');
      expect(delta.data).toEqual({ metrics: { 'rollout/successRate': [[3, 0.75]] }, events: [], status: 'completed' });
      await reader.cancel();
    } finally {
      writer.close();
      ui.close();
    }
  });

  it('reads a `turnwise eval` folder back as per-category tables, one run per policy', async () => {
    const evalDir = join(root, 'eval-babyai');
    const store = RunStore.open(evalDir);
    for (const [policy, goTo, open] of [['ckpt', 0.5, 0.25], ['remote', 1, 0]] as const) {
      store.createRun({ id: policy, name: policy, createdAt: 5, config: { eval: { env: 'babyai', split: 'test', tasks: 8, samples: 2 }, policy: {} }, backend: 'cpu', seed: 0 });
      store.logMetrics(0, { 'eval/successRate': (goTo + open) / 2, 'eval/samples': 16, 'eval/GoTo/successRate': goTo, 'eval/GoTo/samples': 8, 'eval/Open/successRate': open });
    }
    store.close();
    const ui = createUiApp({ runsDir: root });
    try {
      const ids = ((await json(await ui.app.request('/api/runs'))).body.runs as { id: string; kind: string }[]).filter((r) => r.kind === 'eval').map((r) => r.id);
      expect(ids).toEqual(['eval-babyai:ckpt', 'eval-babyai:remote']);
      const tables = await json(await ui.app.request(`/api/runs/${encodeURIComponent('eval-babyai:remote')}/eval`));
      expect(tables.body).toMatchObject({
        kind: 'harness',
        setup: { env: 'babyai', samples: 2 },
        tables: [{ step: 0, overall: { successRate: 0.5, samples: 16 }, categories: { GoTo: { successRate: 1, samples: 8 }, Open: { successRate: 0 } } }],
      });
    } finally {
      ui.close();
    }
  });

  it('answers /favicon.ico with the shipped SVG icon, not a 404', async () => {
    const ui = createUiApp({ runsDir: root, assetsDir: defaultAssetsDir() });
    try {
      const res = await ui.app.request('/favicon.ico');
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/svg+xml');
      expect(await res.text()).toBe(readFileSync(join(defaultAssetsDir(), 'favicon.svg'), 'utf8'));
      expect((await ui.app.request('/favicon.svg')).status).toBe(200);
      expect(await (await ui.app.request('/')).text()).toContain('rel="icon"');
    } finally {
      ui.close();
    }
  });

  it('never writes to a run store: run.db is byte-identical after every endpoint', async () => {
    const db = join(runDir, 'run.db');
    const before = sha(db);
    const clock = new SimulatedClock();
    const ui = createUiApp({ runsDir: root, clock });
    try {
      for (const path of ['/api/runs', '/api/runs/alpha', '/api/runs/alpha/metrics', '/api/runs/alpha/episodes', '/api/runs/alpha/episode-steps', '/api/runs/alpha/events', '/api/runs/alpha/eval', '/api/episodes/s2%2Ft0%2Fg0/turns?run=alpha']) {
        expect((await ui.app.request(path)).status, path).toBe(200);
      }
      const stream = await ui.app.request('/api/runs/alpha/stream');
      const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
      await reader.read();
      clock.advance(3000);
      await reader.cancel();
    } finally {
      ui.close();
    }
    expect(sha(db)).toBe(before);
    // A WAL reader may leave SQLite's sidecar files, but nothing was appended to the log.
    const wal = `${db}-wal`;
    if (existsSync(wal)) expect(statSync(wal).size).toBe(0);
  });
});
