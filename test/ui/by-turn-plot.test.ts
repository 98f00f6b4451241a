/**
 * Per-turn-index families offline: profiles over step windows (pure), and `turnwise plot` drawing
 * a family by turn index from a real run store, with a clear error for a run that has none.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { plotCommand } from '../../src/cli/plot-command.js';
import { RunStore } from '../../src/store/run-store.js';
import { familyProfile, readFamilySeries } from '../../src/ui/by-turn.js';

const root = mkdtempSync(join(tmpdir(), 'turnwise-by-turn-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Steps 1..10: entropy at turn k = (10 - step) / (k + 1); turn 2 logged from step 6 on only. */
function makeRun(name: string): string {
  const dir = join(root, name);
  const store = RunStore.open(dir);
  store.createRun({ id: name, name, createdAt: 0, config: {}, backend: 'cpu', seed: 1 });
  for (let step = 1; step <= 10; step++) {
    const m: Record<string, number> = { 'rollout/successRate': step / 10, 'episodeLength/1': 0.5, 'episodeLength/2': 0.5 };
    for (let k = 0; k < (step > 5 ? 3 : 2); k++) m[`byTurn/tokenEntropy/${k}`] = (10 - step) / (k + 1);
    store.logMetrics(step, m);
  }
  store.close();
  return dir;
}

describe('metric families by turn index', () => {
  it('averages each turn index over a window of steps, leaving out indices not logged there', () => {
    const dir = makeRun('profile');
    const store = RunStore.open(dir, { readonly: true });
    const series = readFamilySeries(store, 'byTurn/tokenEntropy');
    store.close();
    expect(series.map((s) => s.index)).toEqual([0, 1, 2]);
    // Steps 1..5: turn 0 mean of 9..5 = 7, turn 1 = 3.5; turn 2 not logged yet.
    expect(familyProfile(series, 1, 5)).toEqual([
      { x: 0, y: 7 },
      { x: 1, y: 3.5 },
    ]);
    // Steps 6..10: turn 0 mean of 4..0 = 2, turn 1 = 1, turn 2 = 2/3.
    const late = familyProfile(series, 6, 10);
    expect(late.map((p) => p.x)).toEqual([0, 1, 2]);
    expect(late[2]?.y).toBeCloseTo(2 / 3, 12);
  });

  it('turnwise plot draws a family by turn index for the first and last windows', async () => {
    const dir = makeRun('plotted');
    const out = await plotCommand([dir], { metric: 'turn-entropy', out: join(root, 'entropy-by-turn.svg') });
    const svg = readFileSync(out, 'utf8');
    expect(svg).toContain('plotted · steps 1–5');
    expect(svg).toContain('plotted · steps 6–10');
    expect(svg).toContain('turn index');
    const lengths = readFileSync(await plotCommand([dir], { metric: 'lengths', at: [10], window: 2, out: join(root, 'lengths.svg') }), 'utf8');
    expect(lengths).toContain('plotted · steps 9–10');
    expect(lengths).toContain('episode length');
  });

  it('names the run when it logged no member of the family', async () => {
    const dir = join(root, 'old');
    const store = RunStore.open(dir);
    store.createRun({ id: 'old', name: 'old', createdAt: 0, config: {}, backend: 'cpu', seed: 1 });
    store.logMetrics(1, { 'rollout/successRate': 0.5 });
    store.close();
    await expect(plotCommand([dir], { metric: 'byTurn/repeatedActionRate', out: join(root, 'x.svg') })).rejects.toThrow(/run 'old'.*logged no byTurn\/repeatedActionRate/);
  });
});
