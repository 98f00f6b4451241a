/**
 * The learning tests' spread over CPU kernels and seeds, from which their bounds are chosen
 * (docs/testing.md). Float summation order differs between BLAS kernels, so a fixed-seed run takes
 * another path on another CPU; this runs each learning test under several OpenBLAS kernels
 * (`OPENBLAS_CORETYPE`), the wasm matmul path (`TURNWISE_NATIVE_BLAS=off`) and several seeds
 * (`TURNWISE_LEARNING_SEED`, test/learning/figures.ts), one run at a time, and records the figures
 * each run prints:
 *
 *     node --import tsx scripts/learning-spread.ts --tests sokoban-grpo,maze-grpo \
 *       --kernels default,Haswell,SkylakeX,Zen,Sandybridge,wasm --seeds fixed,101,102 --out .scratch/spread.jsonl
 *     node --import tsx scripts/learning-spread.ts --table .scratch/spread.jsonl
 *
 * Results are appended as JSON lines; a (test, kernel, seed) already in `--out` is not run again,
 * so an interrupted study resumes; a run records the hash of its test file, so an edited test runs
 * again. `--table` prints two markdown tables of a results file, counting only runs of the test
 * files as they are now (`--all`: every run): the range of each test's figures, and every run.
 */
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { testHash } from '../test/learning/figures.js';

/** One learning-test file run under one kernel and seed. */
interface SpreadRun {
  readonly file: string;
  /** What the test file trained when it ran ({@link testHash}): a run of an edited setup is a new run. */
  readonly testHash: string;
  readonly kernel: string;
  /** `fixed` (the test's own seed) or the seed set through TURNWISE_LEARNING_SEED. */
  readonly seed: string;
  /** The OpenBLAS core OpenBLAS reported loading (`wasm` when the native path was off). */
  readonly core: string;
  readonly exitCode: number | null;
  readonly seconds: number;
  /** The figures lines the file printed (one per test in it). */
  readonly figures: readonly Record<string, number | string>[];
}

/** A figures line (test/learning/figures.ts), wherever the reporter's colour codes put it. */
const FIGURES_LINE = /learning-figures (\{.*\})$/gm;

const fileHash = (file: string) => testHash(readFileSync(`test/learning/${file}.test.ts`, 'utf8'));

function kernelEnv(kernel: string): Record<string, string> {
  if (kernel === 'wasm') return { TURNWISE_NATIVE_BLAS: 'off' };
  // OPENBLAS_VERBOSE=2 makes OpenBLAS print the core it loaded, recorded as `core`.
  return kernel === 'default' ? { OPENBLAS_VERBOSE: '2' } : { OPENBLAS_CORETYPE: kernel, OPENBLAS_VERBOSE: '2' };
}

function runOnce(file: string, kernel: string, seed: string): Promise<SpreadRun> {
  const env: NodeJS.ProcessEnv = { ...process.env, ...kernelEnv(kernel), NO_COLOR: '1' };
  delete env.TURNWISE_LEARNING_SEED;
  if (kernel === 'default') delete env.OPENBLAS_CORETYPE;
  if (kernel !== 'wasm') delete env.TURNWISE_NATIVE_BLAS;
  if (seed !== 'fixed') env.TURNWISE_LEARNING_SEED = seed;
  const hash = fileHash(file);
  const started = Date.now();
  // Its own process group, so that stopping the study stops vitest's workers too.
  const child = spawn(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', `test/learning/${file}.test.ts`], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const stop = () => {
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    process.exit(130);
  };
  process.once('SIGINT', stop).once('SIGTERM', stop);
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString('utf8')));
  child.stderr.on('data', (d: Buffer) => (output += d.toString('utf8')));
  return new Promise((resolve) =>
    child.once('close', (exitCode) => {
      process.off('SIGINT', stop).off('SIGTERM', stop);
      const figures = [...output.matchAll(FIGURES_LINE)].map((m) => JSON.parse(m[1] as string) as Record<string, number | string>);
      const core = kernel === 'wasm' ? 'wasm' : (/Core: (\w+)/.exec(output)?.[1] ?? 'unknown');
      if (figures.length === 0) console.error(output.slice(-4000));
      resolve({ file, testHash: hash, kernel, seed, core, exitCode, seconds: Math.round((Date.now() - started) / 1000), figures });
    }),
  );
}

function readRuns(path: string): SpreadRun[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as SpreadRun);
}

/** The kernels a study runs unless told otherwise: OpenBLAS's own pick, four forced ones, and the wasm matmul path. */
const KERNELS = ['default', 'Haswell', 'SkylakeX', 'Zen', 'Sandybridge', 'wasm'];

const fmt = (x: number | string | undefined) => (typeof x === 'number' ? x.toFixed(3) : '–');

/** Markdown: one row per (test, seed), one column per kernel, each cell `before → after` (and the invalid-action rate or training success where a test reports them). */
function table(runs: readonly SpreadRun[]): string {
  // Columns in the study's order (default first), then any other kernel named on the command line.
  const rank = (k: string) => (KERNELS.includes(k) ? KERNELS.indexOf(k) : KERNELS.length);
  const kernels = [...new Set(runs.map((r) => r.kernel))].sort((a, b) => rank(a) - rank(b));
  const cells = new Map<string, Map<string, string>>();
  for (const run of runs) {
    for (const f of run.figures) {
      const key = `${f.test} | ${f.seed}`;
      const row = cells.get(key) ?? new Map<string, string>();
      const invalid = typeof f.invalidAfter === 'number' ? ` (invalid ${fmt(f.invalidAfter)})` : '';
      const training = typeof f.trainFirst === 'number' ? ` (training ${fmt(f.trainFirst)} → ${fmt(f.trainLast)})` : '';
      const extra = invalid + training;
      row.set(run.kernel, `${fmt(f.before)} → ${fmt(f.after)}${extra}`);
      cells.set(key, row);
    }
  }
  const lines = [`| test | seed | ${kernels.join(' | ')} |`, `|---|---|${kernels.map(() => '---').join('|')}|`];
  for (const [key, row] of [...cells].sort(([a], [b]) => a.localeCompare(b))) lines.push(`| ${key} | ${kernels.map((k) => row.get(k) ?? '').join(' | ')} |`);
  return lines.join('\n');
}

/** Markdown: per test, its runs and the range of before, after and gain (after − before) over them. */
function summary(runs: readonly SpreadRun[]): string {
  const byTest = new Map<string, { before: number; after: number }[]>();
  for (const f of runs.flatMap((r) => r.figures)) {
    if (typeof f.before !== 'number' || typeof f.after !== 'number') continue;
    const list = byTest.get(String(f.test)) ?? [];
    list.push({ before: f.before, after: f.after });
    byTest.set(String(f.test), list);
  }
  const range = (xs: number[]) => `${fmt(Math.min(...xs))} – ${fmt(Math.max(...xs))}`;
  const lines = ['| test | runs | before | after | gain (after − before) |', '|---|---|---|---|---|'];
  for (const [test, list] of [...byTest].sort(([a], [b]) => a.localeCompare(b))) {
    const gains = list.map((x) => x.after - x.before);
    lines.push(`| ${test} | ${list.length} | ${range(list.map((x) => x.before))} | ${range(list.map((x) => x.after))} | ${range(gains)} |`);
  }
  return lines.join('\n');
}

const { values } = parseArgs({
  options: {
    tests: { type: 'string' },
    kernels: { type: 'string', default: KERNELS.join(',') },
    seeds: { type: 'string', default: 'fixed' },
    out: { type: 'string', default: '.scratch/learning-spread.jsonl' },
    table: { type: 'string' },
    all: { type: 'boolean', default: false },
  },
});

if (values.table !== undefined) {
  // Only runs of the test files as they are now (unless --all).
  const runs = readRuns(values.table).filter((r) => values.all || (existsSync(`test/learning/${r.file}.test.ts`) && r.testHash === fileHash(r.file)));
  console.log(`${summary(runs)}\n\n${table(runs)}`);
} else {
  if (values.tests === undefined) throw new Error('--tests: name the learning test files to run (e.g. sokoban-grpo,maze-grpo)');
  const done = new Set(readRuns(values.out).map((r) => `${r.file}/${r.testHash}/${r.kernel}/${r.seed}`));
  for (const file of values.tests.split(',')) {
    for (const seed of values.seeds.split(',')) {
      for (const kernel of values.kernels.split(',')) {
        if (done.has(`${file}/${fileHash(file)}/${kernel}/${seed}`)) continue;
        const run = await runOnce(file, kernel, seed);
        appendFileSync(values.out, `${JSON.stringify(run)}\n`);
        const figures = run.figures.map((f) => `${f.test} ${fmt(f.before)} → ${fmt(f.after)}`).join(', ');
        console.log(`${file} kernel=${kernel} (core ${run.core}) seed=${seed}: exit ${run.exitCode}, ${run.seconds} s: ${figures}`);
      }
    }
  }
}
