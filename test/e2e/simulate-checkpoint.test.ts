/**
 * `turnwise simulate --policy checkpoint:<run>`: a trained model plays the concurrent episodes
 * through the eval harness's checkpoint agent (sampler actor, dynamic batching), and a checkpoint
 * of another environment is refused naming `--policy`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { parseConfig, resolveConfig } from '../../src/core/config.js';
import '../../src/envs/index.js';
import { getEnvironmentSpec } from '../../src/envs/registry.js';
import { simulate } from '../../src/runtime/simulate/simulate.js';
import { trainRun } from '../../src/runtime/train/train-run.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-simulate-checkpoint-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('turnwise simulate with a checkpoint policy', () => {
  it('plays N concurrent episodes with the trained model; a checkpoint of another environment is refused', async () => {
    const trained = resolveConfig(
      parseConfig({
        seed: 11,
        run: { dir, name: 'tiny' },
        env: { name: 'babyai', settings: { levels: ['GoToRedBall'] } },
        algorithm: { tasksPerStep: 2, groupSize: 4 },
        horizon: { schedule: 'fixed', horizon: 4 },
        train: { steps: 1, evalEvery: 0, checkpointEvery: 1 },
      }),
    );
    const runDir = join(dir, 'tiny');
    expect((await trainRun({ config: trained, runDir })).status).toBe('finished');

    const agents = 12;
    const report = await simulate({
      config: trained,
      spec: getEnvironmentSpec('babyai'),
      agents,
      policy: { kind: 'checkpoint', location: runDir },
      budget: { turns: 40 },
      clock: systemClock,
    });
    expect(report.policy).toMatch(/^checkpoint .*tiny.*step 1/);
    const o = report.outcomes;
    expect(o.error).toBe(0);
    expect(o.success + o.failure + o.truncated).toBe(report.episodes);
    // The budget, plus at most the rest of the wave that reached it; the episodes in flight are cut.
    expect(report.turns).toBeGreaterThanOrEqual(40);
    expect(report.turns).toBeLessThan(40 + agents);
    expect(report.turns).toBeLessThanOrEqual((report.episodes + report.cutAtBudget) * 4);

    const other = resolveConfig(parseConfig({ seed: 1, env: { name: 'maze' } }));
    await expect(
      simulate({ config: other, spec: getEnvironmentSpec('maze'), agents: 2, policy: { kind: 'checkpoint', location: runDir }, budget: { turns: 4 }, clock: systemClock }),
    ).rejects.toThrow(/--policy.*trained on 'babyai', the simulation runs 'maze'/);
  });
});
