/**
 * A run folder replaced under the open dashboard (`train --run-dir runs/x --force` deletes run.db
 * and starts a new run there) answers from the new run, and a deleted one answers 404 — over a
 * real HTTP server, with the old store still open when the folder changes.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Trajectory } from '../../src/core/types.js';
import { claimRunFolder } from '../../src/runtime/run-folder.js';
import { RunStore } from '../../src/store/run-store.js';
import { startUiServer } from '../../src/ui/server/server.js';

const root = mkdtempSync(join(tmpdir(), 'turnwise-ui-replaced-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const episode = (id: string, outcome: Trajectory['outcome']): Trajectory => ({
  trajectoryId: id,
  taskId: 'task-1',
  groupId: 's0/t0',
  step: 0,
  turns: [],
  reward: outcome === 'success' ? 1 : 0,
  outcome,
  horizon: 3,
  finalObservationText: `end of ${id}`,
});

/** Writes a run with one metric point and one training episode, as `train` would. */
function writeRun(runDir: string, runId: string, successRate: number, episodeId: string): void {
  const store = RunStore.open(runDir);
  store.createRun({ id: runId, name: 'x', createdAt: 1_000, config: { env: { name: 'babyai' } }, backend: 'cpu', seed: 1 });
  store.logMetrics(1, { 'rollout/successRate': successRate });
  store.recordTrajectories(runId, 'train', [episode(episodeId, successRate > 0.5 ? 'success' : 'failure')]);
  store.close();
}

async function get(base: string, path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(new URL(path, base));
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Reads server-sent events from a response; `until` returns the events read up to one that satisfies `done`. */
function eventReader(res: Response) {
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  return {
    async until(done: (event: string, data: string) => boolean): Promise<{ event: string; data: string }[]> {
      const events: { event: string; data: string }[] = [];
      for (;;) {
        let cut = buffer.indexOf('\n\n');
        while (cut >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const field = (name: string) => block.split('\n').find((l) => l.startsWith(`${name}:`))?.slice(name.length + 1).trim() ?? '';
          events.push({ event: field('event'), data: field('data') });
          if (done(field('event'), field('data'))) return events;
          cut = buffer.indexOf('\n\n');
        }
        const { value, done: ended } = await reader.read();
        if (ended) throw new Error(`stream ended after ${JSON.stringify(events)}`);
        buffer += decoder.decode(value, { stream: true });
      }
    },
    close: () => reader.cancel(),
  };
}

describe('turnwise ui: a run folder replaced or deleted under the open server', () => {
  it('answers from the new run after `train --force` replaced it, and 404 once it is deleted', async () => {
    const runDir = join(root, 'x');
    mkdirSync(runDir);
    writeRun(runDir, 'x-old', 0.25, 'old/e0');
    const ui = await startUiServer({ runsDir: root, port: 0, pollMs: 20 });
    try {
      const before = await get(ui.url, 'api/runs/x');
      expect(before.body).toMatchObject({ runId: 'x-old', latest: { 'rollout/successRate': [1, 0.25] } });
      expect((await get(ui.url, `api/episodes/${encodeURIComponent('old/e0')}/turns?run=x`)).status).toBe(200);
      const stream = eventReader(await fetch(new URL('api/runs/x/stream', ui.url)));
      const first = await stream.until((event) => event === 'snapshot');
      expect(JSON.parse(first.at(-1)?.data ?? '{}').metrics).toEqual({ 'rollout/successRate': [[1, 0.25]] });

      // What `train --run-dir x --force` does: claim the folder (deleting run.db), write a new run.
      const claimed = await claimRunFolder({ runDir, force: true }, { name: 'x', dir: root });
      writeRun(runDir, 'x-new', 0.75, 'new/e0');
      claimed.lock.release();

      const after = await get(ui.url, 'api/runs/x');
      expect(after.status).toBe(200);
      expect(after.body).toMatchObject({ runId: 'x-new', latest: { 'rollout/successRate': [1, 0.75] } });
      const metrics = await get(ui.url, 'api/runs/x/metrics');
      expect(metrics.body.series).toEqual({ 'rollout/successRate': [[1, 0.75]] });
      const episodes = await get(ui.url, 'api/runs/x/episodes');
      expect((episodes.body.episodes as { id: string }[]).map((e) => e.id)).toEqual(['new/e0']);
      expect((await get(ui.url, `api/episodes/${encodeURIComponent('old/e0')}/turns?run=x`)).status).toBe(404);
      expect((await get(ui.url, `api/episodes/${encodeURIComponent('new/e0')}/turns?run=x`)).status).toBe(200);
      const steps = await get(ui.url, 'api/runs/x/episode-steps?split=train');
      expect(steps.body.steps).toEqual([{ step: 1, total: 1, success: 1 }]);
      // The open live stream starts over with a snapshot of the new run.
      const later = await stream.until((event) => event === 'snapshot');
      expect(JSON.parse(later.at(-1)?.data ?? '{}').metrics).toEqual({ 'rollout/successRate': [[1, 0.75]] });
      await stream.close();
      const listed = await get(ui.url, 'api/runs');
      expect((listed.body.runs as { id: string; runId: string }[]).map((r) => [r.id, r.runId])).toEqual([['x', 'x-new']]);

      rmSync(runDir, { recursive: true, force: true });
      const gone = await get(ui.url, 'api/runs/x');
      expect(gone.status).toBe(404);
      expect((gone.body.error as { message: string }).message).toMatch(/no run 'x'/);
      expect((await get(ui.url, 'api/runs')).body.runs).toEqual([]);
    } finally {
      await ui.close();
    }
  });

  it('answers 404 for a run whose run.db alone was deleted, and serves it again once a run is written there', async () => {
    const runDir = join(root, 'y');
    mkdirSync(runDir);
    writeRun(runDir, 'y-1', 0.5, 'y1/e0');
    const ui = await startUiServer({ runsDir: root, port: 0 });
    try {
      expect((await get(ui.url, 'api/runs/y')).body).toMatchObject({ runId: 'y-1' });
      for (const file of ['run.db', 'run.db-wal', 'run.db-shm']) rmSync(join(runDir, file), { force: true });
      expect((await get(ui.url, 'api/runs/y')).status).toBe(404);
      writeRun(runDir, 'y-2', 1, 'y2/e0');
      expect((await get(ui.url, 'api/runs/y')).body).toMatchObject({ runId: 'y-2', latest: { 'rollout/successRate': [1, 1] } });
    } finally {
      await ui.close();
    }
  });
});
