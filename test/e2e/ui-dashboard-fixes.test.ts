/**
 * The dashboard fixes of issue #22, in real headless Chromium (Debian's /usr/bin/chromium via
 * playwright-core) against a run store written by a real tiny BabyAI training run (12 held-out
 * test episodes per evaluation, so ids run past 9) plus a hand-written run whose KL values are
 * around 1e-8. Screenshots land in `<tmpdir>/turnwise-ui-artifacts/` (paths printed); the ones in
 * bench/ui/ were taken by this test.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, resolveConfig } from '../../src/core/config.js';
import '../../src/envs/index.js';
import { trainRun } from '../../src/runtime/train/train-run.js';
import { RunStore } from '../../src/store/run-store.js';
import { emaSmooth } from '../../src/ui/format/smoothing.js';
import { type RunningUi, startUiServer } from '../../src/ui/server/server.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-ui-fixes-'));
const runsDir = join(dir, 'runs');
const artifacts = join(tmpdir(), 'turnwise-ui-artifacts');

/** KL of the hand-written run: tiny, with a zero and a negative value (left out on a log axis). */
const TINY_KL = [0, 4e-8, 2e-7, 1e-6, -3e-8, 5e-7];

let ui: RunningUi;
let browser: Browser;
let page: Page;
/** HTTP answers of 400 and above seen by the page (the favicon used to be one). */
const failedRequests: string[] = [];

/** Saves a screenshot of the page's top `height` pixels, or of one element. */
async function shot(name: string, what: number | Locator): Promise<void> {
  const path = join(artifacts, `${name}.png`);
  if (typeof what === 'number') await page.screenshot({ path, clip: { x: 0, y: 0, width: page.viewportSize()?.width ?? 1280, height: what } });
  else await what.screenshot({ path });
  console.log(`screenshot: ${path}`);
}

const chart = (metric: string) => page.locator(`[data-testid=chart][data-metric="${metric}"]`);
const dataOf = async (metric: string, key: string): Promise<string | null> => chart(metric).getAttribute(`data-${key}`);
const jsonOf = async <T>(metric: string, key: string): Promise<T> => JSON.parse((await dataOf(metric, key)) ?? 'null') as T;

function writeTinyRun(): void {
  const store = RunStore.open(join(runsDir, 'tiny'));
  store.createRun({ id: 'tiny', name: 'tiny', createdAt: 1_000, config: parseConfig({ run: { name: 'tiny' }, train: { steps: TINY_KL.length } }), backend: 'cpu', seed: 1, status: 'completed' });
  for (const [i, kl] of TINY_KL.entries()) store.logMetrics(i + 1, { 'loss/approxKl': kl, 'rollout/successRate': 0.1 * (i + 1) });
  store.close();
}

/** A stored series as `[step, value]` pairs. */
function series(run: string, metric: string): [number, number][] {
  const store = RunStore.open(join(runsDir, run), { readonly: true });
  try {
    return store.metricsSeries(metric).map((p) => [p.step, p.value]);
  } finally {
    store.close();
  }
}

beforeAll(async () => {
  mkdirSync(artifacts, { recursive: true });
  const result = await trainRun({
    config: resolveConfig(
      parseConfig({
        seed: 11,
        run: { dir: runsDir, name: 'known' },
        env: { name: 'babyai', settings: { levels: ['GoToRedBall'] } },
        tokenizer: { vocabSize: 320, corpusEpisodes: 60 },
        model: { dModel: 32, nLayers: 1, nHeads: 2, ffnHidden: 64 },
        algorithm: { tasksPerStep: 4, groupSize: 4 },
        horizon: { schedule: 'stepwise', horizons: [2, 3], every: 2 },
        train: { steps: 3, evalEvery: 1, evalTasks: 12, checkpointEvery: 0 },
      }),
    ),
    runDir: join(runsDir, 'known'),
  });
  expect(result.status).toBe('finished');
  writeTinyRun();
  ui = await startUiServer({ runsDir, port: 0, pollMs: 250 });
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('response', (r) => {
    if (r.status() >= 400) failedRequests.push(`${r.status()} ${r.url()}`);
  });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await ui?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('dashboard curves (issue #22)', () => {
  it('labels steps as whole numbers and tiny values as exponents, in ticks and in the tooltip', async () => {
    await page.goto(`${ui.url}#/curves?runs=tiny,known&extra=loss/approxKl`);
    await chart('loss/approxKl').locator('canvas').first().waitFor();
    await page.waitForFunction(`document.querySelector('[data-testid=chart][data-metric="loss/approxKl"]')?.dataset.points?.includes('tiny')`);
    const yTicks = await jsonOf<string[]>('loss/approxKl', 'y-ticks');
    expect(yTicks.length).toBeGreaterThan(2);
    expect(yTicks.filter((t) => /0\.000/.test(t))).toEqual([]);
    expect(yTicks.some((t) => /^-?\d(\.\d+)?e-\d+$/.test(t))).toBe(true);
    for (const metric of ['loss/approxKl', 'rollout/successRate']) {
      const xTicks = await jsonOf<string[]>(metric, 'x-ticks');
      expect(xTicks.length, metric).toBeGreaterThan(1);
      for (const t of xTicks) expect(t, metric).toMatch(/^\d+$/);
    }
    // Hover the middle of the plot: the axis tooltip names an integer step and the tiny value.
    await chart('loss/approxKl').scrollIntoViewIfNeeded();
    const box = await chart('loss/approxKl').boundingBox();
    if (box === null) throw new Error('no chart box');
    await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * 0.55);
    const tooltip = chart('loss/approxKl').locator('div', { hasText: /^step \d+/ }).last();
    await tooltip.waitFor();
    const text = (await tooltip.textContent()) ?? '';
    expect(text).toMatch(/^step \d+tiny: /);
    expect(text).not.toMatch(/\d\.00\b/);
    console.log(`tooltip: ${text}`);
    const step = Number(/^step (\d+)/.exec(text)?.[1]);
    const kl = TINY_KL[step - 1] as number;
    if (Math.abs(kl) < 1e-3 && kl !== 0) expect(text).toContain(`tiny: ${kl.toExponential().replace('+', '')}`);
    await shot('curves-ticks', chart('loss/approxKl'));
  });

  it('smooths every curve with the slider and keeps the weight in the URL', async () => {
    await page.goto(`${ui.url}#/curves?runs=known`);
    await chart('rollout/tokenEntropy').locator('canvas').first().waitFor();
    expect(await dataOf('rollout/tokenEntropy', 'smoothing')).toBe('0');
    await page.locator('[data-testid=smoothing]').fill('0.9');
    await page.waitForFunction(`document.querySelector('[data-testid=chart][data-metric="rollout/tokenEntropy"]')?.dataset.smoothing === '0.9'`);
    expect(await page.locator('[data-testid=smoothing-value]').textContent()).toBe('0.90');
    expect(page.url()).toContain('smooth=0.9');
    for (const metric of ['rollout/tokenEntropy', 'rollout/successRate']) {
      const expected = emaSmooth(series('known', metric), 0.9).at(-1)?.[1] as number;
      const drawn = await jsonOf<Record<string, number>>(metric, 'smoothed-last');
      expect(drawn.known, metric).toBeCloseTo(expected, 10);
    }
    // A reload restores the weight from the URL.
    await page.reload();
    await chart('rollout/tokenEntropy').locator('canvas').first().waitFor();
    await page.waitForFunction(`document.querySelector('[data-testid=chart][data-metric="rollout/tokenEntropy"]')?.dataset.smoothing === '0.9'`);
    await shot('curves-smoothing', 720);
  });

  it('switches one chart to a log axis, leaving out values ≤ 0 and saying so', async () => {
    await page.goto(`${ui.url}#/curves?runs=tiny&extra=loss/approxKl`);
    await chart('loss/approxKl').locator('canvas').first().waitFor();
    expect(await dataOf('loss/approxKl', 'log')).toBe('false');
    await chart('loss/approxKl').locator('[data-testid=log-toggle]').click();
    expect(await dataOf('loss/approxKl', 'log')).toBe('true');
    expect(await dataOf('loss/approxKl', 'left-out')).toBe(String(TINY_KL.filter((v) => v <= 0).length));
    expect(await chart('loss/approxKl').locator('[data-testid=log-toggle]').getAttribute('aria-pressed')).toBe('true');
    // Log ticks are powers of ten, printed as exponents.
    const yTicks = await jsonOf<string[]>('loss/approxKl', 'y-ticks');
    expect(yTicks.length).toBeGreaterThan(1);
    for (const t of yTicks) expect(t).toMatch(/^1e-\d+$/);
    // The other chart stays linear; the choice is in the URL.
    expect(await dataOf('rollout/successRate', 'log')).toBe('false');
    expect(decodeURIComponent(page.url())).toContain('log=loss/approxKl');
    await shot('curves-log-scale', chart('loss/approxKl'));
  });

  it("downloads a chart's series as CSV with the stored values and the smoothed ones", async () => {
    await page.goto(`${ui.url}#/curves?runs=tiny&extra=loss/approxKl&smooth=0.5`);
    await chart('loss/approxKl').locator('canvas').first().waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), chart('loss/approxKl').locator('[data-testid=csv-download]').click()]);
    expect(download.suggestedFilename()).toBe('loss_approxKl.csv');
    const path = join(dir, 'download.csv');
    await download.saveAs(path);
    const lines = readFileSync(path, 'utf8').trimEnd().split('\r\n');
    expect(lines[0]).toBe('metric,run,step,value,smoothed');
    const smoothed = emaSmooth(series('tiny', 'loss/approxKl'), 0.5);
    expect(lines.slice(1).map((l) => l.split(','))).toEqual(
      series('tiny', 'loss/approxKl').map(([step, value], i) => ['loss/approxKl', 'tiny', String(step), String(value), String(smoothed[i]?.[1])]),
    );
    expect(lines.slice(1).map((l) => Number(l.split(',')[3]))).toEqual(TINY_KL);
  });
});

describe('trajectory viewer (issue #22)', () => {
  /** Test-split episodes of step 1 in the store, with their outcome counts. */
  function testEpisodes(): { ids: string[]; counts: Record<string, number> } {
    const store = RunStore.open(join(runsDir, 'known'), { readonly: true });
    try {
      const episodes = store.episodes({ split: 'test', step: 1, limit: 1000 });
      const counts: Record<string, number> = {};
      for (const e of episodes) counts[e.outcome] = (counts[e.outcome] ?? 0) + 1;
      return { ids: episodes.map((e) => e.id), counts };
    } finally {
      store.close();
    }
  }

  it('lists test-split episodes in numeric order (2 before 10)', async () => {
    const { ids } = testEpisodes();
    expect(ids.length).toBe(12);
    const byNumber = [...ids].sort((a, b) => Number(/\/(\d+)@/.exec(a)?.[1]) - Number(/\/(\d+)@/.exec(b)?.[1]));
    expect(byNumber).not.toEqual([...ids].sort()); // text order would differ
    await page.goto(`${ui.url}#/trajectories?run=known&split=test&step=1`);
    await page.locator('[data-testid=turn]').first().waitFor();
    expect(await page.locator('[data-testid=episode-row]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-episode')))).toEqual(byNumber);
  });

  it("offers the outcomes the step's episodes have, and says why a failure filter is empty", async () => {
    const { counts } = testEpisodes();
    expect(counts.failure).toBeUndefined(); // BabyAI episodes end success or truncated
    await page.goto(`${ui.url}#/trajectories?run=known&split=test&step=1`);
    await page.locator('[data-testid=turn]').first().waitFor();
    const options = await page.locator('[data-testid=pick-outcome] option').allTextContents();
    const present = ['success', 'failure', 'truncated', 'length', 'error'].filter((o) => (counts[o] ?? 0) > 0);
    expect(options).toEqual(['any (12)', ...present.map((o) => `${o} (${counts[o]})`)]);
    await page.goto(`${ui.url}#/trajectories?run=known&split=test&step=1&outcome=failure`);
    const note = page.locator('[data-testid=empty-outcome]');
    await note.waitFor();
    const text = (await note.textContent()) ?? '';
    expect(text).toContain('No failure episodes at step 1 (test split)');
    for (const o of present) expect(text).toContain(`${o} (${counts[o]})`);
    expect(await page.locator('[data-testid=pick-outcome]').inputValue()).toBe('failure');
    await shot('trajectories-failure-filter', 300);
    // Picking an outcome the step has lists exactly its episodes.
    const truncated = counts.truncated ?? 0;
    await page.locator('[data-testid=pick-outcome]').selectOption('truncated');
    await page.waitForFunction(`document.querySelectorAll('[data-testid=episode-row]').length === ${truncated}`);
    expect(await page.locator('[data-testid=episode-row] [data-outcome]').evaluateAll((els) => [...new Set(els.map((e) => e.getAttribute('data-outcome')))])).toEqual(['truncated']);
  });

  it('captions held-out episodes as never trained on, and train episodes as trained on', async () => {
    await page.goto(`${ui.url}#/trajectories?run=known&split=test&step=1`);
    await page.locator('[data-testid=turn]').first().waitFor();
    const heldOut = await page.locator('[data-testid=mask-caption]').allTextContents();
    expect(heldOut.length).toBeGreaterThan(0);
    for (const caption of heldOut) {
      expect(caption).toContain('test episode: never trained on');
      expect(caption).not.toMatch(/, trained on/);
    }
    expect(await page.locator('[data-testid=loss-mask] [data-credit]').count()).toBe(0);
    await shot('trajectories-held-out-mask', page.locator('[data-testid=turn]').first());
    await page.goto(`${ui.url}#/trajectories?run=known&split=train&step=1`);
    await page.locator('[data-testid=turn]').first().waitFor();
    for (const caption of await page.locator('[data-testid=mask-caption]').allTextContents()) expect(caption).toContain('loss mask 1, trained on');
  });

  it('shows every column of the episode table, on a 760 px wide window as on a wide one', async () => {
    try {
      for (const width of [760, 1100, 1280]) {
        await page.setViewportSize({ width, height: 900 });
        for (const split of ['test', 'train']) {
          await page.goto(`${ui.url}#/trajectories?run=known&split=${split}&step=1`);
          await page.locator('[data-testid=turn]').first().waitFor();
          const list = await page.locator('.episodes').evaluate((el) => ({ client: el.clientWidth, scroll: el.scrollWidth }));
          expect(list.scroll, `${split} at ${width} px`).toBeLessThanOrEqual(list.client);
          const lastHeader = await page.locator('[data-testid=episode-table] th').last().boundingBox();
          expect(lastHeader, `${split} at ${width} px`).not.toBeNull();
          expect((lastHeader?.x ?? 0) + (lastHeader?.width ?? 0), `${split} at ${width} px`).toBeLessThanOrEqual(width);
          if (width === 760 && split === 'test') await shot('trajectories-760px', 620);
        }
      }
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });
});

describe('favicon (issue #22)', () => {
  it('serves /favicon.ico, and no page load met an HTTP error', async () => {
    const res = await fetch(new URL('favicon.ico', ui.url));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/svg+xml');
    expect(failedRequests).toEqual([]);
  });
});
