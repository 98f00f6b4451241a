/**
 * Real piscina threads started through `workerModule`: the worker runs the same kind of code as its
 * parent, so a stale compiled copy next to the source is never what a test from source runs.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Piscina } from 'piscina';
import { afterAll, describe, expect, it } from 'vitest';
import { workerModule } from '../../src/core/worker-module.js';

const root = mkdtempSync(join(tmpdir(), 'worker-module-e2e-'));
writeFileSync(join(root, 'package.json'), '{ "type": "module" }');
// The "stale build": a compiled worker that answers differently from the source next to it.
writeFileSync(join(root, 'echo.js'), "export default function echo(x) { return 'compiled ' + x; }\n");
// Type annotations: only a TypeScript loader can run this file.
writeFileSync(join(root, 'echo.ts'), "export default function echo(x: string): string { return 'source ' + x; }\n");

afterAll(() => rmSync(root, { recursive: true, force: true }));

async function runOnce(parentExt: 'js' | 'ts'): Promise<string> {
  const pool = new Piscina({ ...workerModule(pathToFileURL(join(root, `parent.${parentExt}`)).href, './echo'), minThreads: 1, maxThreads: 1 });
  try {
    return (await pool.run('hi')) as string;
  } finally {
    await pool.destroy();
  }
}

describe('worker scripts in real threads', () => {
  it('a parent running from source starts the .ts source through tsx, not the compiled copy', async () => {
    expect(await runOnce('ts')).toBe('source hi');
  });

  it('a compiled parent starts the compiled .js', async () => {
    expect(await runOnce('js')).toBe('compiled hi');
  });
});
