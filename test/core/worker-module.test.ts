/** Which worker script a pool starts: the parent's own kind of code (compiled `.js` or `.ts` through tsx). */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError, TurnwiseError } from '../../src/core/errors.js';
import { workerModule } from '../../src/core/worker-module.js';

// A fake package: a parent folder with both the compiled and the source worker next to each other.
const root = mkdtempSync(join(tmpdir(), 'worker-module-'));
mkdirSync(join(root, 'lib'));
for (const file of ['lib/worker.js', 'lib/worker.ts', 'lib/only-source.ts']) writeFileSync(join(root, file), '');
const parent = (ext: string) => pathToFileURL(join(root, 'lib', `parent.${ext}`)).href;

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('workerModule', () => {
  it('starts the sibling compiled .js with no Node flags (not even the parent’s) when the parent is compiled', () => {
    expect(workerModule(parent('js'), './worker')).toEqual({ filename: join(root, 'lib', 'worker.js'), execArgv: [] });
  });

  it('starts the .ts source through the tsx loader when the parent runs from source', () => {
    const script = workerModule(parent('ts'), './worker');
    expect(script.filename).toBe(join(root, 'lib', 'worker.ts'));
    expect(script.execArgv).toHaveLength(2);
    expect(script.execArgv?.[0]).toBe('--import');
    // An absolute file URL of tsx's loader (a bare 'tsx' is not resolvable from every worker's cwd).
    const loader = fileURLToPath(script.execArgv?.[1] ?? '');
    expect(loader).toMatch(/node_modules[\\/]tsx[\\/]/);
  });

  it('resolves paths relative to the parent module, like an import', () => {
    expect(workerModule(pathToFileURL(join(root, 'lib', 'sub', 'parent.js')).href, '../worker').filename).toBe(join(root, 'lib', 'worker.js'));
  });

  it('this repository’s own workers resolve from the sources under test (no dist/ needed)', () => {
    const here = new URL('../../src/runtime/env-pool/worker-pool.ts', import.meta.url).href;
    expect(workerModule(here, './env-worker').filename).toMatch(/src[\\/]runtime[\\/]env-pool[\\/]env-worker\.ts$/);
    const grad = new URL('../../src/learner/data-parallel/gradient-pool.ts', import.meta.url).href;
    expect(workerModule(grad, './grad-worker').filename).toMatch(/grad-worker\.ts$/);
  });

  it('names the missing script and says to build when a compiled worker is absent', () => {
    expect(() => workerModule(parent('js'), './only-source')).toThrow(TurnwiseError);
    expect(() => workerModule(parent('js'), './only-source')).toThrow(/only-source\.js is missing \(the build is incomplete; run `npm run build`\)/);
  });

  it('rejects a name with an extension or that is not relative', () => {
    expect(() => workerModule(parent('ts'), './worker.js')).toThrow(InvalidArgumentError);
    expect(() => workerModule(parent('ts'), 'worker')).toThrow(/invalid 'name': expected a relative path without extension/);
  });
});
