import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
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
});
