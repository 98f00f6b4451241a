/**
 * The piscina worker of an environment pool (compiled JS from `dist/`, or this source through tsx
 * when the parent runs from source: see `src/core/worker-module.ts`).
 * It hosts one {@link EnvShard} for the environment named in `workerData` and answers each batch
 * with one transferred buffer.
 */
import { move, workerData } from 'piscina';
// Registers every built-in environment in this thread.
import '../../envs/index.js';
import { getEnvironmentSpec } from '../../envs/registry.js';
import { decodeOps, encodeReplies } from './batch-codec.js';
import { EnvShard } from './env-shard.js';

/** What the pool passes to each worker. */
export interface EnvWorkerData {
  readonly envName: string;
  readonly settings: Readonly<Record<string, unknown>>;
}

const data = workerData as EnvWorkerData;
const shard = new EnvShard(getEnvironmentSpec(data.envName), data.settings);

/**
 * Applies one batch: `ops` is an {@link encodeOps} buffer; the answer an {@link encodeReplies} buffer, moved back.
 * @example await pool.run(encodeOps(ops), { transferList: [buffer] })
 */
export default async function applyBatch(ops: ArrayBuffer): Promise<ArrayBuffer> {
  const replies = await shard.apply(decodeOps(ops));
  return move(encodeReplies(replies)) as ArrayBuffer;
}
