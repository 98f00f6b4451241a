/**
 * Where a worker thread's script is: one rule for every pool (environment workers, gradient
 * workers). A parent running compiled JS (`dist/`) starts the compiled `.js` next to it; a parent
 * running from the TypeScript sources (vitest, `node --import tsx`) starts the `.ts` source through
 * the tsx loader. A worker therefore always runs the same code as the thread that started it, never
 * a stale `dist/`, and tests need no build first. The price of the source path is start-up: each tsx
 * worker compiles its imports on first load (see bench/RESULTS.md, "Worker start-up"); production
 * runs from `dist/` and pays nothing.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { InvalidArgumentError, TurnwiseError } from './errors.js';

/** The two worker options that depend on how the parent runs (spread them into piscina's options). */
export interface WorkerModule {
  /** Absolute path of the worker script. */
  readonly filename: string;
  /**
   * The worker's Node flags: `--import <tsx>` from source; none for compiled JS, not even the
   * parent's (a tsx loader inherited from a parent started with `node --import tsx` makes a
   * compiled worker start about 3x slower: 2.0 s against 0.4–0.7 s, measured).
   */
  readonly execArgv: string[];
}

/** Whether a module URL is a TypeScript source (run by vitest or tsx) rather than compiled JS. */
function isSource(url: string): boolean {
  return /\.[cm]?ts$/.test(new URL(url).pathname);
}

/** The tsx loader by absolute URL: a bare `--import tsx` is not found from every parent (vitest's forks run elsewhere). */
function tsxLoader(): string {
  try {
    return pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  } catch (error) {
    throw new TurnwiseError('worker threads started from the TypeScript sources need the tsx loader (a dev dependency); install dev dependencies or run the compiled `dist/` build', { cause: error });
  }
}

/**
 * The worker script `name` (a path relative to the module at `parentUrl`, without extension), as
 * the parent runs: `<name>.js` with no Node flags when the parent is compiled, `<name>.ts` with
 * `--import <tsx>` when it runs from source. Throws when the script is missing.
 * @example
 * const pool = new Piscina({ ...workerModule(import.meta.url, './env-worker'), workerData });
 */
export function workerModule(parentUrl: string, name: string): WorkerModule {
  if (!/^\.\.?\//.test(name) || /\.[cm]?[jt]s$/.test(name)) {
    throw InvalidArgumentError.format('name', `expected a relative path without extension such as './env-worker', got ${JSON.stringify(name)}`);
  }
  const fromSource = isSource(parentUrl);
  const filename = fileURLToPath(new URL(`${name}.${fromSource ? 'ts' : 'js'}`, parentUrl));
  if (!existsSync(filename)) {
    const hint = fromSource ? 'the source tree is incomplete' : 'the build is incomplete; run `npm run build`';
    throw new TurnwiseError(`worker script ${filename} is missing (${hint})`);
  }
  return { filename, execArgv: fromSource ? ['--import', tsxLoader()] : [] };
}
