/**
 * The unit tier starts no processes or servers: those tests live in test/e2e/ (docs/testing.md).
 * Two checks: a static scan of every unit-tier test file (and the test helpers it imports) for what
 * starts one, naming the file and the line; and the tier's setup guard
 * (test/helpers/unit-tier-guard.ts), which makes a spawn or a listen throw at run time.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import config from '../../vitest.config.js';
import { UNIT_TIER_GUARD, UnitTierProcessError } from '../helpers/unit-tier-guard.js';
import { importSpecifiers } from './import-graph.js';

const ROOT = resolve(import.meta.dirname, '../..');

/** What starts a process or a server, as it reads in a test file. */
const STARTERS: readonly (readonly [RegExp, string])[] = [
  [/['"]node:child_process['"]/, 'imports node:child_process'],
  [/\bstartNatsServer\b|helpers\/nats-server\.js/, 'starts nats-server'],
  [/\bspawnCli\b|helpers\/nats-run\.js/, 'spawns turnwise CLI processes'],
  [/\bpython3\b/, 'runs python3 (PyTorch)'],
  [/\.listen\(/, 'listens on a socket'],
  [/\b(startUiServer|serveModel|startAgentGymServer|startFixtureServer)\(/, 'starts an HTTP server'],
  [/\b(trainRun|natsTrainRun)\(/, 'runs a whole training run'],
  [/\b(SqlEnvironment|SqlSandbox|acquireSandbox)\b/, "starts the SQL sandbox's child process"],
];

interface ProjectConfig {
  readonly test: { readonly name: string; readonly include: readonly string[]; readonly exclude?: readonly string[] };
}

/** The folders under test/ that the unit project leaves to the other tiers (`test/<folder>/**`). */
function nonUnitFolders(): string[] {
  const projects = (config as { test: { projects: ProjectConfig[] } }).test.projects;
  const unit = projects.find((p) => p.test.name === 'unit');
  if (unit === undefined) throw new Error('vitest.config.ts has no unit project');
  expect(unit.test.include).toEqual(['test/**/*.test.ts']);
  return (unit.test.exclude ?? []).map((pattern) => {
    const m = /^test\/([\w-]+)\/\*\*$/.exec(pattern);
    if (m === null) throw new Error(`unit project exclude ${JSON.stringify(pattern)}: this test reads only test/<folder>/** patterns`);
    return m[1] as string;
  });
}

function testFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) testFiles(path, out);
    else if (name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

/** Code lines only: doc comments may name what a test does not do. */
function codeLines(text: string): string[] {
  return text.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, '')).split('\n').map((l) => (/^\s*\/\//.test(l) ? '' : l));
}

/** `file` and the files under test/ it imports, transitively. */
function withTestImports(file: string, seen = new Set<string>()): string[] {
  if (seen.has(file)) return [];
  seen.add(file);
  const out = [file];
  for (const specifier of importSpecifiers(readFileSync(file, 'utf8'))) {
    const target = resolve(dirname(file), specifier.replace(/\.js$/, '.ts'));
    if (target.startsWith(join(ROOT, 'test')) && existsSync(target)) out.push(...withTestImports(target, seen));
  }
  return out;
}

/** Every `file:line what` in the unit tier that starts a process or a server. */
function unitTierStarters(): string[] {
  const skipped = nonUnitFolders().map((f) => join(ROOT, 'test', f));
  const found: string[] = [];
  // This file spawns and listens on purpose, to check the guard; it is the one exception.
  const scanned = testFiles(join(ROOT, 'test')).filter((f) => f !== import.meta.filename && !skipped.some((s) => f.startsWith(`${s}/`)));
  for (const file of scanned) {
    for (const source of withTestImports(file)) {
      codeLines(readFileSync(source, 'utf8')).forEach((line, i) => {
        for (const [pattern, what] of STARTERS) {
          if (pattern.test(line)) {
            const via = source === file ? '' : ` (through ${relative(ROOT, source)})`;
            found.push(`${relative(ROOT, file)}${via}:${i + 1} ${what}: move it to test/e2e/`);
          }
        }
      });
    }
  }
  return found;
}

describe('the unit tier', () => {
  it('holds no test file that starts a process or a server', () => {
    expect(unitTierStarters()).toEqual([]);
  });

  it('throws on a spawn or a listen (its setup guard is in place)', () => {
    expect((globalThis as Record<symbol, unknown>)[UNIT_TIER_GUARD]).toBe(true);
    expect(() => spawn('true')).toThrow(UnitTierProcessError);
    expect(() => spawnSync('true')).toThrow(/unit-tier\.test\.ts called child_process\.spawnSync\("true"\): the unit tier starts no processes or servers; move this test to test\/e2e\//);
    const server = createServer();
    expect(() => server.listen(0, '127.0.0.1')).toThrow(/listened on a socket/);
  });
});
