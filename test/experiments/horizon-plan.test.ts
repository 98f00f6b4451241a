import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.js';
import { planExperiment } from '../../src/experiments/horizon/runner.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-horizon-plan-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('horizon experiment plan', () => {
  it('writes one valid config per (variant, seed), seed-major, with equal step budgets and no experiment section', () => {
    const base = join(dir, 'base.yaml');
    writeFileSync(
      base,
      'seed: 5\nrun: { dir: runs, name: x }\nhorizon: { schedule: stepwise, horizons: [2, 4], every: 3 }\ntrain: { steps: 9 }\nexperiment: { seeds: 2, steps: 6 }\n',
    );
    const plan = planExperiment({ configPath: base, outDir: join(dir, 'out') });
    expect(plan.seeds).toEqual([5, 6]);
    expect(plan.runs.map((r) => r.name)).toEqual(['fixed-2-s5', 'fixed-4-s5', 'stepwise-s5', 'adaptive-s5', 'fixed-2-s6', 'fixed-4-s6', 'stepwise-s6', 'adaptive-s6']);
    const adaptive = loadConfig(plan.runs[7]?.configPath as string);
    expect(adaptive.seed).toBe(6);
    expect(adaptive.train.steps).toBe(6);
    expect(adaptive.run.name).toBe('adaptive-s6');
    expect(adaptive.horizon).toMatchObject({ schedule: 'adaptive', start: 2, step: 2, max: 4, evalHorizon: 4 });
    expect(readFileSync(plan.runs[0]?.configPath as string, 'utf8')).not.toMatch(/^experiment:/m);
    // CLI flags override the section.
    expect(planExperiment({ configPath: base, outDir: join(dir, 'out2'), seeds: 1, steps: 2 }).runs.map((r) => r.name)).toHaveLength(4);
  });

  it('names the field at fault in the experiment section and in a variant', () => {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'horizon: { schedule: stepwise, horizons: [2, 4], every: 3 }\nexperiment: { seeds: 0 }\n');
    expect(() => planExperiment({ configPath: bad, outDir: join(dir, 'bad') })).toThrow(/experiment\.seeds/);
    const badVariant = join(dir, 'bad-variant.yaml');
    writeFileSync(badVariant, 'experiment: { variants: { short: { schedule: fixed, horizon: -1 } } }\n');
    expect(() => planExperiment({ configPath: badVariant, outDir: join(dir, 'bad2') })).toThrow(/horizon\.horizon/);
  });
});
