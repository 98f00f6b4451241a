/**
 * The dashboard in real headless Chromium (Debian's /usr/bin/chromium via playwright-core, never a
 * downloaded browser) against run stores written by real (tiny) training runs. Screenshots of
 * every page land in `<tmpdir>/turnwise-ui-artifacts/` (the path is printed).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { parseConfig, resolveConfig } from '../../src/core/config.js';
import '../../src/envs/index.js';
import { getEnvironmentSpec } from '../../src/envs/registry.js';
import { trainRun, type TrainRunResult } from '../../src/runtime/train/train-run.js';
import { RunStore } from '../../src/store/run-store.js';
import { catalogCategoryResolver } from '../../src/ui/server/eval-tables.js';
import { type RunningUi, startUiServer } from '../../src/ui/server/server.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-ui-e2e-'));
const runsDir = join(dir, 'runs');
const artifacts = join(tmpdir(), 'turnwise-ui-artifacts');

/** A tiny run: small model and tokenizer, 4 tasks x 4 samples per step, a horizon stage change after 2 steps. */
const tinyInput = (name: string, steps: number, evalEvery: number) => ({
  seed: 11,
  run: { dir: runsDir, name },
  env: { name: 'babyai', settings: { levels: ['GoToRedBall'] } },
  tokenizer: { vocabSize: 320, corpusEpisodes: 60 },
  model: { dModel: 32, nLayers: 1, nHeads: 2, ffnHidden: 64 },
  algorithm: { tasksPerStep: 4, groupSize: 4 },
  horizon: { schedule: 'stepwise', horizons: [2, 3], every: 2 },
  train: { steps, evalEvery, evalTasks: 8, checkpointEvery: 0 },
});
const LIVE_STEPS = 4;
const liveYaml = tinyInput('live', LIVE_STEPS, 0);

let ui: RunningUi;
let browser: Browser;
let page: Page;
let known: TrainRunResult;
let trainer: ChildProcess | undefined;

async function shot(name: string): Promise<void> {
  const path = join(artifacts, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  console.log(`screenshot: ${path}`);
}

/** Points per run that the chart of `metric` currently draws (from its data-points attribute). */
async function chartPoints(metric: string): Promise<Record<string, number>> {
  const raw = await page.locator(`[data-testid=chart][data-metric="${metric}"]`).getAttribute('data-points');
  return JSON.parse(raw ?? '{}');
}

beforeAll(async () => {
  mkdirSync(artifacts, { recursive: true });
  known = await trainRun({ config: resolveConfig(parseConfig(tinyInput('known', 3, 1))), runDir: join(runsDir, 'known') });
  expect(known.status).toBe('finished');
  ui = await startUiServer({ runsDir, port: 0, pollMs: 250, resolveCategory: catalogCategoryResolver(getEnvironmentSpec) });
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
}, 120_000);

afterAll(async () => {
  if (trainer && trainer.exitCode === null) trainer.kill('SIGKILL'); // also ends a trainer still held by SIGSTOP
  await browser?.close();
  await ui?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('turnwise ui in headless Chromium', () => {
  it('lists the trained run with its status and backend', async () => {
    await page.goto(`${ui.url}#/runs`);
    const row = page.locator('[data-testid=run-row][data-run=known]');
    await row.waitFor();
    const text = (await row.textContent()) ?? '';
    expect(text).toContain('completed');
    expect(text).toContain('babyai · grpo');
    await shot('runs');
  });

  it('draws one point per logged step, with the horizon stage change marked', async () => {
    const store = RunStore.open(join(runsDir, 'known'), { readonly: true });
    const expected = {
      'rollout/successRate': store.metricsSeries('rollout/successRate').length,
      'eval/successRate': store.metricsSeries('eval/successRate').length,
      'horizon/current': store.metricsSeries('horizon/current').length,
    };
    store.close();
    expect(expected).toEqual({ 'rollout/successRate': 3, 'eval/successRate': 4, 'horizon/current': 3 });
    await page.goto(`${ui.url}#/curves?runs=known`);
    await page.locator('[data-testid=chart][data-metric="eval/successRate"][data-points]').waitFor();
    for (const [metric, n] of Object.entries(expected)) expect(await chartPoints(metric), metric).toEqual({ known: n });
    expect(await page.locator('[data-testid=chart][data-metric="horizon/current"]').getAttribute('data-stages')).toBe('1');
    await shot('curves');
  });

  it("shows a known trajectory's turns with the policy versions stored for them", async () => {
    const store = RunStore.open(join(runsDir, 'known'), { readonly: true });
    const episode = store.episodes({ step: 2, split: 'train', limit: 1 })[0];
    if (episode === undefined) throw new Error('no train episode at step 2');
    const versions = store.episodeTurns(episode.id).map((t) => String(t.policyVersion));
    store.close();
    // The viewer numbers episodes by the curves' step: rollout 2's episodes are behind the point at step 3.
    await page.goto(`${ui.url}#/trajectories?run=known&split=train&step=${episode.step + 1}&episode=${encodeURIComponent(episode.id)}`);
    await page.locator(`[data-testid=episode-row][data-episode="${episode.id}"]`).waitFor();
    await page.locator('[data-testid=turn]').first().waitFor();
    expect(await page.locator('[data-testid=turn]').evaluateAll((els) => els.map((e) => e.getAttribute('data-policy-version')))).toEqual(versions);
    expect(await page.locator('[data-testid=episode-detail] [data-outcome]').first().getAttribute('data-outcome')).toBe(episode.outcome);
    expect(await page.locator('[data-testid=loss-mask]').count()).toBe(versions.length);
    await shot('trajectories');
  });

  it('tabulates the held-out evaluations per step', async () => {
    await page.goto(`${ui.url}#/eval`);
    const rows = page.locator('[data-testid=eval-table] tbody tr');
    await rows.first().waitFor();
    expect(await rows.count()).toBe(known.evals.length);
    const firstEval = known.evals[0];
    expect(await rows.first().textContent()).toContain(`${((firstEval?.successRate ?? Number.NaN) * 100).toFixed(1)}%`);
    await shot('eval');
  });

  it("grows a live run's curve from server-sent events while another process trains it", async () => {
    // The trainer runs as `turnwise train` in its own process, as a user would run it next to `turnwise ui`.
    const config = join(dir, 'live.yaml');
    writeFileSync(config, stringify(liveYaml));
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'train', config, '--run-dir', join(runsDir, 'live')], { stdio: ['ignore', 'pipe', 'pipe'] });
    trainer = child;
    let output = '';
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    // Its first log line comes right after it created the run in its store.
    // It is held there (SIGSTOP, once) until the page follows the run's stream.
    let held = false;
    await new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (!held && output.includes('run folder')) {
          held = child.kill('SIGSTOP');
          resolve();
        }
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      void exited.then((code) => reject(new Error(`turnwise train exited (${code}) before creating its run:\n${output}`)));
    });
    // Without the hold a tiny run can finish all its steps before the page has loaded, and then
    // nothing would be seen to grow.
    await page.goto(`${ui.url}#/curves?runs=live`);
    await page.locator('[data-testid=curves-status]', { hasText: 'live: running (live)' }).waitFor();
    // Page-side expression (a string: this file is type-checked without DOM types).
    const livePoints = `(JSON.parse(document.querySelector('[data-testid=chart][data-metric="rollout/successRate"]')?.getAttribute('data-points') ?? '{}').live ?? 0)`;
    const count = async () => Number(await page.evaluate(livePoints));
    const first = await count();
    expect(first).toBeLessThan(LIVE_STEPS);
    child.kill('SIGCONT');
    await page.waitForFunction(`${livePoints} > ${first}`, undefined, { timeout: 60_000 });
    expect(await count()).toBeGreaterThan(first);
    await shot('live');
    expect(await exited, output).toBe(0);
    await page.waitForFunction(`${livePoints} === ${LIVE_STEPS}`, undefined, { timeout: 30_000 });
  });
});
