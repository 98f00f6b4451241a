/**
 * `npm run bench -- worker-startup [--rounds N]`: what starting environment worker threads costs
 * when the parent runs from source (each worker loads the `.ts` sources through tsx, see
 * `src/core/worker-module.ts`) vs from the compiled `dist/` (plain JS). `npm run build` first.
 *
 * One measurement: a `WorkerEnvPool` for BabyAI is constructed and the first `reset` of each of its
 * workers is answered (thread start, module load, environment registry, first world), then the pool
 * is closed. Rounds alternate between the two builds so that load changes hit both alike; the
 * median is reported. tsx caches its transforms on disk, so these are warm-cache figures.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { WorkerEnvPool as Pool, WorkerEnvPoolOptions } from '../src/runtime/env-pool/worker-pool.js';

type PoolClass = new (options: WorkerEnvPoolOptions) => Pool;

function flag(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : fallback;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

/** Milliseconds from constructing the pool to every worker having answered one reset. */
async function startOnce(WorkerEnvPool: PoolClass, workers: number): Promise<number> {
  const t0 = performance.now();
  const pool = new WorkerEnvPool({ envName: 'babyai', settings: { levels: ['GoToRedBall'] }, workers });
  const envs = Array.from({ length: workers }, () => pool.open()); // slot i lands on worker i
  await Promise.all(envs.map((env, i) => env.reset(1000 + i)));
  const ms = performance.now() - t0;
  await pool.close();
  return ms;
}

export async function main(args: string[]): Promise<void> {
  const rounds = flag(args, '--rounds', 7);
  const root = join(fileURLToPath(import.meta.url), '../..');
  const compiledPath = join(root, 'dist/src/runtime/env-pool/worker-pool.js');
  if (!existsSync(compiledPath)) throw new Error(`${compiledPath} is missing: run \`npm run build\` first`);
  const source = (await import('../src/runtime/env-pool/worker-pool.js')).WorkerEnvPool as PoolClass;
  const compiled = (await import(pathToFileURL(compiledPath).href)).WorkerEnvPool as PoolClass;
  console.log(`worker start-up to the first reset, median of ${rounds} alternating rounds (BabyAI GoToRedBall)\n`);
  console.log('| workers | compiled dist/ ms | source via tsx ms | tsx / compiled |');
  console.log('|---|---|---|---|');
  for (const workers of [1, 2]) {
    await startOnce(compiled, workers); // warm-up: file system caches, tsx's transform cache
    await startOnce(source, workers);
    const times = { compiled: [] as number[], source: [] as number[] };
    for (let r = 0; r < rounds; r++) {
      times.compiled.push(await startOnce(compiled, workers));
      times.source.push(await startOnce(source, workers));
    }
    const c = median(times.compiled);
    const s = median(times.source);
    console.log(`| ${workers} | ${c.toFixed(0)} | ${s.toFixed(0)} | ${(s / c).toFixed(2)}x |`);
  }
}
