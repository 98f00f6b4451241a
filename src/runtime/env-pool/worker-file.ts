/**
 * Finds the compiled worker script. Workers always run compiled JS (platform notes: a `.ts` worker
 * needs the tsx loader in every thread, 4x the start-up): from `dist/` this is the sibling file; from
 * the TypeScript sources (tsx, vitest) it is the same path under `dist/`, built by `npm run build`.
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TurnwiseError } from '../../core/errors.js';

/**
 * Absolute path of `dist/src/runtime/env-pool/<name>.js`.
 * @example new Piscina({ filename: compiledWorkerFile('env-worker') })
 */
export function compiledWorkerFile(name: string): string {
  const here = fileURLToPath(import.meta.url);
  const file = here.endsWith('.ts') ? join(resolve(dirname(here), '../../..'), 'dist/src/runtime/env-pool', `${name}.js`) : join(dirname(here), `${name}.js`);
  if (!existsSync(file)) {
    throw new TurnwiseError(`env.workers: the compiled worker ${file} is missing; run \`npm run build\` first (workers load compiled JS)`);
  }
  return file;
}
