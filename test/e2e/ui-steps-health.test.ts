/**
 * Two things a newcomer hit on the dashboard, in real headless Chromium (Debian's /usr/bin/chromium
 * via playwright-core), on a run store written as a training run writes it (issue 28):
 * - the trajectory viewer's steps are the curves' steps: the run store keeps training episodes at
 *   their rollout's index (0, 1) while their metrics are logged at the steps completed (1, 2);
 * - a run's AgentGym server health reports (`agentgym/health` events) show in the run list.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/core/config.js';
import type { Trajectory } from '../../src/core/types.js';
import { RunStore } from '../../src/store/run-store.js';
import { type RunningUi, startUiServer } from '../../src/ui/server/server.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-ui-steps-health-'));
const runsDir = join(dir, 'runs');
let ui: RunningUi;
let browser: Browser;
let page: Page;

const episode = (step: number, g: number, outcome: 'success' | 'failure'): Trajectory => ({
  trajectoryId: `s${step}/t0/g${g}`,
  taskId: 'babyai_1000',
  groupId: `s${step}/t0`,
  step,
  turns: [
    {
      index: 0,
      observationText: 'You see a red ball.',
      promptTokens: Int32Array.from([1, 2]),
      actionText: 'go to red ball 1',
      actionTokens: Int32Array.from([5]),
      actionLogprobs: Float32Array.from([-0.7]),
      actionLossMask: Uint8Array.from([1]),
      constraint: null,
      policyVersion: step,
      reward: outcome === 'success' ? 1 : 0,
      invalidAction: false,
    },
  ],
  reward: outcome === 'success' ? 1 : 0,
  outcome,
  horizon: 5,
  finalObservationText: 'done',
});

/** Two steps: rollout 0 (1 of 2 won) logged at step 1, rollout 1 (2 of 2 won) at step 2; a health report at step 2. */
function writeRun(): void {
  const store = RunStore.open(join(runsDir, 'health'));
  const config = parseConfig({ run: { name: 'health' }, env: { name: 'agentgym', settings: { type: 'babyai', url: 'http://127.0.0.1:36002' } }, train: { steps: 2 } });
  store.createRun({ id: 'health', name: 'health', createdAt: 1_700_000_000_000, config, backend: 'cpu', seed: 1, status: 'completed' });
  store.recordTrajectories('health', 'train', [episode(0, 0, 'success'), episode(0, 1, 'failure')]);
  store.logMetrics(1, { 'rollout/successRate': 0.5, 'policy/version': 1 });
  store.recordTrajectories('health', 'train', [episode(1, 0, 'success'), episode(1, 1, 'success')]);
  store.logMetrics(2, { 'rollout/successRate': 1, 'policy/version': 2 });
  store.logEvent(2, 'agentgym/health', 'agentgym: babyai server http://127.0.0.1:36002 failed 3 requests in a row (3 in all; last: ECONNRESET)', { kind: 'failing' });
  store.close();
}

beforeAll(async () => {
  mkdirSync(runsDir, { recursive: true });
  writeRun();
  ui = await startUiServer({ runsDir, port: 0, pollMs: 250 });
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await ui?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the dashboard', () => {
  it("offers the training episodes at the curves' steps, with the success the curve shows there", async () => {
    await page.goto(`${ui.url}#/trajectories?run=health&split=train`);
    const picker = page.locator('[data-testid=pick-step]');
    await picker.locator('option').first().waitFor({ state: 'attached' });
    expect(await picker.locator('option').evaluateAll((els) => els.map((e) => (e as unknown as { value: string }).value))).toEqual(['1', '2']);
    await picker.selectOption('1');
    // rollout/successRate at step 1 is 0.5: one of the two episodes listed there won. Polled: until
    // step 1's episodes arrive the list still shows the default step's two (both won).
    const outcomes = () => page.locator('[data-testid=episode-row] [data-outcome]').evaluateAll((els) => els.map((e) => e.getAttribute('data-outcome')).sort());
    await expect.poll(outcomes, { timeout: 15_000 }).toEqual(['failure', 'success']);
  });

  it("shows the run's newest AgentGym server health report in the run list", async () => {
    await page.goto(`${ui.url}#/runs`);
    const note = page.locator('[data-testid=run-row][data-run=health] [data-testid=run-health]');
    await note.waitFor();
    expect(await note.getAttribute('data-kind')).toBe('failing');
    expect(await note.textContent()).toBe('step 2: agentgym: babyai server http://127.0.0.1:36002 failed 3 requests in a row (3 in all; last: ECONNRESET)');
  });
});
