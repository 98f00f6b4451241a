import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-examples-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('examples/', () => {
  it('custom-env.ts registers its environment, trains and evaluates it (kept runnable by CI)', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'examples/custom-env.ts', '4', dir], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^step 0: success [\d.]+$/m);
    expect(run.stdout).toMatch(/^step 4: success [\d.]+$/m);
    expect(run.stdout).toMatch(/^finished: /m);
  });

  it('imports only from turnwise (the package self-reference), as a user outside the repository would', () => {
    for (const file of readdirSync('examples').filter((f) => f.endsWith('.ts'))) {
      const specifiers = [...readFileSync(join('examples', file), 'utf8').matchAll(/^import .* from '([^']+)';$/gm)].map((m) => m[1]);
      expect(specifiers.length, file).toBeGreaterThan(0);
      expect(specifiers.filter((s) => s !== 'turnwise' && !s?.startsWith('turnwise/')), file).toEqual([]);
    }
  });

  it('custom-estimator.ts registers an estimator from outside src/ and trains with it (the held-out success rises)', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'examples/custom-estimator.ts', '10', dir], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const before = Number(/^step 0: held-out success ([\d.]+)$/m.exec(run.stdout)?.[1]);
    const after = Number(/^step 10: held-out success ([\d.]+)$/m.exec(run.stdout)?.[1]);
    expect(after).toBeGreaterThan(before + 0.05);
    expect(run.stdout).toMatch(/^finished with algorithm median-baseline: /m);
    const saved = JSON.parse(readFileSync(join(dir, 'example-median-baseline', 'config.json'), 'utf8')) as { algorithm: { name: string; settings: unknown } };
    expect(saved.algorithm).toMatchObject({ name: 'median-baseline', settings: { scale: 1 } });
  });

  it('process-reward.ts registers its shaper and trains on outcome + shaped rewards (kept runnable by CI)', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'examples/process-reward.ts', '3', dir], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^step 3: success [\d.]+ shaped return -?[\d.]+$/m);
    expect(run.stdout).toMatch(/^last step, .*: shaped rewards per turn -?[\d.]+/m);
    expect(run.stdout).toMatch(/^finished: /m);
  });
});
