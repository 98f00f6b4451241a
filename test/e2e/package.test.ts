/**
 * What `npm pack` would publish: only the built library (dist/src), the dashboard's built front
 * end, the native addon's sources and build script (it is compiled at install), the configs, the
 * README, the LICENSE and package.json — no tests, benches, CI or sources.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const ALLOWED = [/^dist\/src\/.+\.(js|d\.ts|json)$/, /^src\/ui\/dist\//, /^native\/[a-z_]+\.[ch]$/, /^scripts\/build-native\.mjs$/, /^configs\/[^/]+\.yaml$/, /^(README\.md|LICENSE|package\.json)$/];

describe('npm pack', () => {
  it('lists only the whitelisted files, including everything a run needs', () => {
    const run = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    const [pack] = JSON.parse(run.stdout) as { files: { path: string }[] }[];
    const files = (pack?.files ?? []).map((f) => f.path);
    expect(files.filter((f) => !ALLOWED.some((pattern) => pattern.test(f)))).toEqual([]);
    for (const needed of [
      'LICENSE',
      'README.md',
      'package.json',
      'dist/src/index.js',
      'dist/src/index.d.ts',
      'dist/src/cli/main.js',
      'dist/src/algorithms/index.js',
      'dist/src/envs/index.js',
      'dist/src/learner/data-parallel/grad-worker.js',
      'dist/src/envs/textcraft/data/recipes.json',
      'src/ui/dist/index.html',
      'native/blas.c',
      'scripts/build-native.mjs',
      'configs/babyai-grpo.yaml',
    ]) {
      expect(files, needed).toContain(needed);
    }
  });

  it('declares the entry points the README uses, the bin, the license and an install step for the addon', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { name: string; license: string; bin: Record<string, string>; exports: Record<string, unknown>; scripts: Record<string, string> };
    expect(pkg.name).toBe('turnwise');
    expect(pkg.license).toBe('MIT');
    expect(readFileSync('LICENSE', 'utf8')).toMatch(/^MIT License/);
    expect(pkg.bin.turnwise).toBe('dist/src/cli/main.js');
    expect(Object.keys(pkg.exports).sort()).toEqual(['.', './algorithms', './envs', './package.json']);
    expect(pkg.scripts.install).toBe('node scripts/build-native.mjs');
  });
});
