/**
 * A collapse alarm on the dashboard, in real headless Chromium (Debian's /usr/bin/chromium via
 * playwright-core). The run store is written the way a training run writes it: metrics per step,
 * and the alarm event produced by the real detector (RunAlarms) on those metrics — an entropy that
 * collapses after step 10. The entropy chart must carry the alarm (its data attribute) and draw
 * it: red marker pixels on that chart's canvas, none on a chart without an alarm. The screenshot
 * is saved as `<tmpdir>/turnwise-ui-artifacts/alarm-marker.png` (the path is printed).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/core/config.js';
import { RunAlarms } from '../../src/runtime/alarms/run-alarms.js';
import { RunStore } from '../../src/store/run-store.js';
import { type RunningUi, startUiServer } from '../../src/ui/server/server.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-ui-alarms-'));
const runsDir = join(dir, 'runs');
const artifacts = join(tmpdir(), 'turnwise-ui-artifacts');
let ui: RunningUi;
let browser: Browser;
let page: Page;

/** Steps 1..20: entropy 1.6 until step 10, then decaying to 0.05; success rising. */
function writeRun(): number[] {
  const store = RunStore.open(join(runsDir, 'alarmed'));
  const config = parseConfig({ run: { name: 'alarmed' }, train: { steps: 20 } });
  store.createRun({ id: 'alarmed', name: 'alarmed', createdAt: 1_700_000_000_000, config, backend: 'cpu', seed: 1, status: 'completed' });
  const fired: number[] = [];
  const alarms = new RunAlarms(config.alarms, {
    logEvent: (step, kind, message, data) => store.logEvent(step, kind, message, data),
    report: (alarm) => fired.push(alarm.step),
    stop: () => {},
  });
  for (let step = 1; step <= 20; step++) {
    const metrics = {
      'rollout/successRate': Math.min(0.9, 0.2 + step * 0.04),
      'rollout/tokenEntropy': step <= 10 ? 1.6 : Math.max(0.05, 1.6 * 0.55 ** (step - 10)),
      'horizon/current': 6,
    };
    store.logMetrics(step, metrics);
    alarms.observe(step, metrics, 6);
  }
  store.close();
  return fired;
}

/** The part of a canvas element the pixel count needs (the Node typings have no DOM). */
interface Canvas2d {
  readonly width: number;
  readonly height: number;
  getContext(kind: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } } | null;
}

/** Pixels of a chart's canvas close to the alarm red (#d62728). */
async function redPixels(metric: string): Promise<number> {
  return page.locator(`[data-testid=chart][data-metric="${metric}"] canvas`).first().evaluate((el) => {
    const canvas = el as unknown as Canvas2d;
    const ctx = canvas.getContext('2d');
    if (ctx === null) return -1;
    const { data } = ctx.getImageData(0, 0, canvas.width, canvas.height);
    let n = 0;
    for (let i = 0; i < data.length; i += 4) {
      if (Math.abs((data[i] as number) - 214) < 24 && Math.abs((data[i + 1] as number) - 39) < 24 && Math.abs((data[i + 2] as number) - 40) < 24) n++;
    }
    return n;
  });
}

beforeAll(async () => {
  mkdirSync(artifacts, { recursive: true });
  mkdirSync(runsDir, { recursive: true });
  ui = await startUiServer({ runsDir, port: 0, pollMs: 250 });
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await ui?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('collapse alarms on the dashboard', () => {
  it('marks the entropy-collapse alarm on the entropy curve', async () => {
    const fired = writeRun();
    // Entropy 0.88, 0.484, 0.266, 0.146, 0.080, 0.05 at steps 11-16: the 3-step mean first falls below
    // 0.1 x 1.6 = 0.16 at step 16 ((0.146 + 0.080 + 0.05) / 3 = 0.092; step 15: 0.164); the cooldown keeps it at one.
    expect(fired).toEqual([16]);
    const alarmStep = 16;
    await page.goto(`${ui.url}#/curves?runs=alarmed`);
    const chart = page.locator('[data-testid=chart][data-metric="rollout/tokenEntropy"][data-alarms="1"]');
    await chart.waitFor();
    expect(await page.locator('[data-testid=chart][data-metric="rollout/successRate"]').getAttribute('data-alarms')).toBe('0');
    // The marker is drawn: red pixels on the alarmed chart, none on the other.
    expect(await redPixels('rollout/tokenEntropy')).toBeGreaterThan(200);
    expect(await redPixels('rollout/successRate')).toBe(0);
    const path = join(artifacts, 'alarm-marker.png');
    await chart.screenshot({ path });
    console.log(`screenshot: ${path} (entropy-collapse alarm at step ${alarmStep})`);
  });
});
