/**
 * The two routes that used to read every episode of a run (`/api/runs/:id/episode-steps` and
 * `/api/episodes/:id/turns`) on a 50,000-episode run, over a real HTTP server: a page of steps is
 * bounded by `limit` and the same bytes whatever the run's size; paging through the whole run
 * gives exactly the counts of what was stored; an episode's turns are found by id.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Trajectory, Turn } from '../../src/core/types.js';
import { RunStore } from '../../src/store/run-store.js';
import { EPISODES_PER_PAGE } from '../../src/ui/server/episode-steps.js';
import { type RunningUi, startUiServer } from '../../src/ui/server/server.js';

const root = mkdtempSync(join(tmpdir(), 'turnwise-ui-large-'));
const EPISODES_PER_STEP = 10;
const OUTCOMES: Trajectory['outcome'][] = ['success', 'failure', 'truncated'];
/** Held-out episodes every this many stored steps (a few per such step). */
const TEST_EVERY = 10;

const turn: Turn = {
  index: 0,
  observationText: 'a room',
  promptTokens: Int32Array.from([1, 2]),
  actionText: 'go forward',
  actionTokens: Int32Array.from([5]),
  actionLogprobs: Float32Array.from([-0.25]),
  actionLossMask: Uint8Array.from([1]),
  constraint: null,
  policyVersion: 0,
  reward: 1,
  invalidAction: false,
};

const episode = (step: number, i: number, outcome: Trajectory['outcome'], withTurn: boolean): Trajectory => ({
  trajectoryId: `s${step}/t${i}/g0`,
  taskId: `task-${i}`,
  groupId: `s${step}/t${i}`,
  step,
  turns: withTurn ? [turn] : [],
  reward: outcome === 'success' ? 1 : 0,
  outcome,
  horizon: 4,
  finalObservationText: `the end of step ${step}, task ${i}`,
});

/** Outcome of episode `i` at `step`: a pattern that varies the counts from step to step. */
const outcomeOf = (step: number, i: number) => OUTCOMES[(step + i * i) % OUTCOMES.length] as Trajectory['outcome'];

/** Writes a run of `steps` training steps in one transaction; the first episode of each step has a turn. */
function writeRun(name: string, steps: number): void {
  const store = RunStore.open(join(root, name));
  store.createRun({ id: name, name, createdAt: 1, config: {}, backend: 'cpu', seed: 1 });
  const train: Trajectory[] = [];
  const test: Trajectory[] = [];
  for (let step = 0; step < steps; step++) {
    for (let i = 0; i < EPISODES_PER_STEP; i++) train.push(episode(step, i, outcomeOf(step, i), i === 0));
    if (step % TEST_EVERY === 0) for (let i = 0; i < 3; i++) test.push(episode(step, 100 + i, outcomeOf(step, i + 1), false));
  }
  store.recordTrajectories(name, 'train', train);
  store.recordTrajectories(name, 'test', test);
  store.close();
}

/** The per-curve-step counts the routes should report, computed from what `writeRun` stored. */
function expectedSteps(steps: number, split?: 'train' | 'test'): Record<string, number>[] {
  const byStep = new Map<number, Record<string, number>>();
  const add = (curveStep: number, outcome: string) => {
    const counts = byStep.get(curveStep) ?? { step: curveStep, total: 0 };
    counts.total = (counts.total ?? 0) + 1;
    counts[outcome] = (counts[outcome] ?? 0) + 1;
    byStep.set(curveStep, counts);
  };
  for (let step = 0; step < steps; step++) {
    // Training episodes of rollout s make the curves' point s + 1; held-out ones stay at s.
    if (split !== 'test') for (let i = 0; i < EPISODES_PER_STEP; i++) add(step + 1, outcomeOf(step, i));
    if (split !== 'train' && step % TEST_EVERY === 0) for (let i = 0; i < 3; i++) add(step, outcomeOf(step, i + 1));
  }
  return [...byStep.values()].sort((a, b) => (a.step ?? 0) - (b.step ?? 0));
}

let ui: RunningUi;
beforeAll(async () => {
  writeRun('small', 100); // 1,030 episodes
  writeRun('large', 5_000); // 51,500 episodes
  ui = await startUiServer({ runsDir: root, port: 0 });
}, 120_000);
afterAll(async () => {
  await ui?.close();
  rmSync(root, { recursive: true, force: true });
});

async function get(path: string): Promise<{ status: number; text: string; body: Record<string, unknown> }> {
  const res = await fetch(new URL(path, ui.url));
  const text = await res.text();
  return { status: res.status, text, body: JSON.parse(text) as Record<string, unknown> };
}

describe('turnwise ui on a 50,000-episode run', () => {
  it('lists episode steps a bounded page at a time, the same page whatever the run size', async () => {
    const small = await get('api/runs/small/episode-steps?split=train&limit=20');
    const large = await get('api/runs/large/episode-steps?split=train&limit=20');
    expect(large.status).toBe(200);
    expect((large.body.steps as unknown[]).length).toBe(20);
    expect(large.body.steps).toEqual(expectedSteps(20, 'train').slice(0, 20));
    expect(large.body.next).toBe(21);
    expect(large.text.replace('"large"', '"small"')).toBe(small.text);

    const defaultPage = await get('api/runs/large/episode-steps?split=train');
    expect(defaultPage.body.steps).toEqual(expectedSteps(500, 'train'));
    expect(defaultPage.body.next).toBe(501);
    const tooMany = await get('api/runs/large/episode-steps?limit=1001');
    expect(tooMany.status).toBe(400);
    expect((tooMany.body.error as { message: string }).message).toMatch(/'limit'.*\[1, 1000\]/);
  });

  it('pages through every step of the run with the stored counts, one split or all', async () => {
    for (const split of ['train', 'test', undefined] as const) {
      const seen: unknown[] = [];
      let pages = 0;
      for (let from: number | null = 0; from !== null; pages++) {
        const page = await get(`api/runs/large/episode-steps?from=${from}&limit=700${split ? `&split=${split}` : ''}`);
        const steps = page.body.steps as { total: number }[];
        expect(steps.length).toBeLessThanOrEqual(700);
        // Each split's counting stops at the step boundary after EPISODES_PER_PAGE episodes.
        const counted = steps.reduce((a, s) => a + s.total, 0);
        expect(counted).toBeLessThanOrEqual((split ? 1 : 2) * (EPISODES_PER_PAGE + EPISODES_PER_STEP));
        seen.push(...steps);
        expect(page.body.next === null || typeof page.body.next === 'number').toBe(true);
        expect(pages).toBeLessThan(40);
        from = page.body.next as number | null;
      }
      expect(seen).toEqual(expectedSteps(5_000, split));
    }
  });

  it('ends a page at the step boundary after EPISODES_PER_PAGE episodes, before `limit` steps', async () => {
    const page = await get('api/runs/large/episode-steps?split=train&from=1&limit=1000');
    const steps = page.body.steps as { step: number; total: number }[];
    expect(steps.length).toBe(EPISODES_PER_PAGE / EPISODES_PER_STEP);
    expect(page.body.next).toBe((steps.at(-1)?.step ?? 0) + 1);
    const rest = await get(`api/runs/large/episode-steps?split=train&from=${page.body.next}&limit=1000`);
    expect((rest.body.steps as { step: number }[])[0]?.step).toBe(page.body.next);
  });

  it("finds an episode's turns by id, early or late in the run, and 404s a wrong id or step", async () => {
    const first = await get(`api/episodes/${encodeURIComponent('s0/t0/g0')}/turns?run=large&step=1`);
    const firstSmall = await get(`api/episodes/${encodeURIComponent('s0/t0/g0')}/turns?run=small&step=1`);
    expect(first.status).toBe(200);
    expect(first.text.replaceAll('"large"', '"small"')).toBe(firstSmall.text);
    const last = await get(`api/episodes/${encodeURIComponent('s4999/t0/g0')}/turns?run=large`);
    expect(last.body).toMatchObject({ run: 'large', episode: { id: 's4999/t0/g0', step: 5000 }, turns: [{ action: 'go forward', lossMask: [1] }] });
    expect((await get(`api/episodes/${encodeURIComponent('s4999/t0/g0')}/turns?run=small`)).status).toBe(404);
    expect((await get(`api/episodes/${encodeURIComponent('s4999/t0/g0')}/turns?run=large&step=4999`)).status).toBe(404);
  });
});
