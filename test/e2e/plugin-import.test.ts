/**
 * A TypeScript plug-in loaded the way docs/algorithms.md says — `node --import tsx --import
 * ./plugins.ts node_modules/turnwise/dist/src/cli/main.js train …` — from a user's own package
 * folder (turnwise and tsx linked into its node_modules, as npm would install them):
 * - with `"type": "module"`, its estimator trains a run whose model samples in an inference worker
 *   thread (a Worker used to inherit `--import ./plugins.ts` and fail on the ".ts" extension);
 * - without it, tsx compiles the plug-in to CommonJS, which loads a second copy of turnwise: the
 *   command fails naming that cause and the fix, instead of a bare "unknown algorithm".
 * Runs the compiled CLI (`npm run build`), as a user of the package does.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'turnwise-plugin-import-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PLUGIN = `import { registerAdvantageEstimator } from 'turnwise';

let calls = 0;
registerAdvantageEstimator({
  name: 'plugin-rewards',
  description: 'test: the reward minus 0.5 on every token',
  estimate(input) {
    if (calls++ === 0) console.error('plugin estimator called');
    const advantages = input.rewards.map((r: number) => r - 0.5);
    return { advantages, returns: input.rewards.slice() };
  },
});
`;

const CONFIG = `seed: 2
run: { dir: runs, name: plugged }
algorithm: { name: plugin-rewards, tasksPerStep: 2, groupSize: 2 }
horizon: { schedule: fixed, horizon: 3 }
train: { steps: 1, evalEvery: 0, checkpointEvery: 0 }
runtime: { inferenceWorkers: 1 }
`;

/** A package folder with the plug-in, the config, and turnwise + tsx in its node_modules. */
function userPackage(name: string, packageJson: Record<string, unknown>): string {
  const folder = join(dir, name);
  mkdirSync(join(folder, 'node_modules'), { recursive: true });
  symlinkSync(root, join(folder, 'node_modules', 'turnwise'), 'dir');
  symlinkSync(join(root, 'node_modules', 'tsx'), join(folder, 'node_modules', 'tsx'), 'dir');
  writeFileSync(join(folder, 'package.json'), JSON.stringify(packageJson));
  writeFileSync(join(folder, 'plugins.ts'), PLUGIN);
  writeFileSync(join(folder, 'plugged.yaml'), CONFIG);
  return folder;
}

function train(folder: string): { status: number | null; output: string } {
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--import', './plugins.ts', 'node_modules/turnwise/dist/src/cli/main.js', 'train', 'plugged.yaml'], {
    cwd: folder,
    encoding: 'utf8',
    timeout: 240_000,
  });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('a TypeScript plug-in loaded with --import', () => {
  it('trains with its estimator, sampling in an inference worker, from a package with "type": "module"', () => {
    const folder = userPackage('esm', { name: 'my-plugins', private: true, type: 'module' });
    const { status, output } = train(folder);
    expect(status, output).toBe(0);
    expect(output).toContain('sampling: 1 inference worker');
    expect(output).toContain('plugin estimator called');
    expect(output).toContain('run finished after 1 steps');
    expect(output).not.toContain('Unknown file extension');
    const config = JSON.parse(readFileSync(join(folder, 'runs', 'plugged', 'config.json'), 'utf8')) as { algorithm: { name: string } };
    expect(config.algorithm.name).toBe('plugin-rewards');
  });

  it('fails naming the cause and the fix from a package without "type": "module"', () => {
    const folder = userPackage('cjs', { name: 'my-plugins', private: true });
    const { status, output } = train(folder);
    expect(status, output).toBe(2);
    expect(output).toContain("unknown algorithm 'plugin-rewards'");
    expect(output).toContain("'plugin-rewards' was registered with another copy of turnwise loaded in this process");
    expect(output).toContain('Add "type": "module" to the package.json beside the plug-in');
  });
});
