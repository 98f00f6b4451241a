/**
 * Environment pools: in-process or piscina worker threads (`env.workers`).
 */
import type { EnvironmentSpec } from '../../envs/environment.js';
import { type EnvPool, InProcessEnvPool } from './env-pool.js';
import { WorkerEnvPool } from './worker-pool.js';

export type { EnvHandle, EnvPool } from './env-pool.js';
export { InProcessEnvPool } from './env-pool.js';
export { WorkerEnvPool } from './worker-pool.js';

/**
 * The pool a config asks for: in this thread when `workers` is 0, else that many worker threads.
 * @example const pool = createEnvPool(spec, settings, config.env.workers);
 */
export function createEnvPool(spec: EnvironmentSpec, settings: Readonly<Record<string, unknown>>, workers: number): EnvPool {
  return workers === 0 ? new InProcessEnvPool(spec, settings) : new WorkerEnvPool({ envName: spec.name, settings, workers });
}
