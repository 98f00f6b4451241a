/**
 * Starts a plain `node:worker_threads` Worker on a script found by `workerModule` (the compiled
 * `.js` beside a compiled parent, the `.ts` source beside a parent run from source). Why not just
 * `new Worker(filename, { execArgv })`: a `.ts` entry given to a Worker is resolved by Node's ESM
 * loader before the `--import tsx` hooks are in place in that thread, and fails with "Unknown file
 * extension". From source, the worker therefore starts on a one-line bootstrap that registers
 * tsx's ESM hooks (`tsx/esm/api`) and then imports the entry. (piscina pools load their scripts
 * through `require`, which tsx's CommonJS hook serves, so they need none of this.)
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { TurnwiseError } from '../../core/errors.js';
import { workerModule } from '../../core/worker-module.js';

/** The ESM entry of tsx's registration API (its `exports` resolve to the CommonJS one from here). */
function tsxEsmApi(): string {
  try {
    const cjs = createRequire(import.meta.url).resolve('tsx/esm/api');
    return pathToFileURL(cjs.replace(/\.cjs$/, '.mjs')).href;
  } catch (error) {
    throw new TurnwiseError('worker threads started from the TypeScript sources need the tsx loader (a dev dependency); install dev dependencies or run the compiled `dist/` build', { cause: error });
  }
}

/**
 * A worker running script `name` (relative to `parentUrl`, no extension), as the parent runs.
 * @example const worker = startWorker(import.meta.url, './inference-worker', { workerData });
 */
export function startWorker(parentUrl: string, name: string, options: { readonly workerData: unknown }): Worker {
  const script = workerModule(parentUrl, name);
  // `execArgv: []`: a Worker otherwise inherits the parent's flags, among them a user's
  // `--import ./plugins.ts`, which fails in the worker ("Unknown file extension") and which the
  // model's worker does not need (plug-ins run on the main thread).
  if (script.execArgv.length === 0) return new Worker(script.filename, { workerData: options.workerData, execArgv: [] });
  const entry = JSON.stringify(pathToFileURL(script.filename).href);
  const bootstrap = `import(${JSON.stringify(tsxEsmApi())}).then((tsx) => { tsx.register(); return import(${entry}); });`;
  return new Worker(bootstrap, { eval: true, workerData: options.workerData, execArgv: [] });
}
