/**
 * `turnwise tinker serve <model folder>`: turnwise's local LoRA engine behind the Tinker training
 * API (src/serve/tinker/), until Ctrl-C or SIGTERM. Prints one line with the API's base URL once
 * it listens.
 */
import { LOSS_REDUCTIONS, type LossReduction } from '../engines/engine.js';
import type { BackendPreference } from '../backend/select.js';
import type { TinkerDialect } from '../serve/tinker/state.js';
import { serveTinker } from '../serve/tinker/server.js';
import { exitCodeForSignal, UsageError } from './exit-codes.js';
import { nextStopSignal } from './signals.js';

const BACKENDS: readonly BackendPreference[] = ['auto', 'tensorflow', 'wasm', 'cpu'];
const DIALECTS: readonly TinkerDialect[] = ['tinker', 'skyrl'];

/** The command's options. */
export interface TinkerServeCommandOptions {
  readonly port: number;
  readonly host: string;
  readonly maxLoraRank?: number;
  readonly reduction: string;
  readonly checkpointsDir?: string;
  readonly tieLoraA?: boolean;
  readonly dialect: string;
  readonly baseModelName?: string;
  readonly retrieveTimeoutMs?: number;
  readonly sessionTimeoutMs?: number;
  readonly backend?: string;
  readonly seed?: number;
}

/**
 * Starts the server and stops on a signal.
 * @example await tinkerServeCommand('models/qwen3-tiny', { port: 8000, host: '127.0.0.1', reduction: 'sum', dialect: 'tinker' });
 */
export async function tinkerServeCommand(folder: string, o: TinkerServeCommandOptions): Promise<void> {
  if (!LOSS_REDUCTIONS.includes(o.reduction as LossReduction)) throw new UsageError(`--reduction must be one of ${LOSS_REDUCTIONS.join(', ')}, got '${o.reduction}'`);
  if (!DIALECTS.includes(o.dialect as TinkerDialect)) throw new UsageError(`--dialect must be one of ${DIALECTS.join(', ')}, got '${o.dialect}'`);
  if (o.backend !== undefined && !BACKENDS.includes(o.backend as BackendPreference)) throw new UsageError(`--backend must be one of ${BACKENDS.join(', ')}, got '${o.backend}'`);
  const server = await serveTinker(folder, {
    port: o.port,
    host: o.host,
    reduction: o.reduction as LossReduction,
    dialect: o.dialect as TinkerDialect,
    sharedA: o.tieLoraA === true,
    ...(o.maxLoraRank !== undefined ? { maxLoraRank: o.maxLoraRank } : {}),
    ...(o.checkpointsDir !== undefined ? { checkpointsDir: o.checkpointsDir } : {}),
    ...(o.baseModelName !== undefined ? { baseModelName: o.baseModelName } : {}),
    ...(o.retrieveTimeoutMs !== undefined ? { retrieveTimeoutMs: o.retrieveTimeoutMs } : {}),
    ...(o.sessionTimeoutMs !== undefined ? { sessionTimeoutMs: o.sessionTimeoutMs } : {}),
    ...(o.backend !== undefined ? { backend: o.backend as BackendPreference } : {}),
    ...(o.seed !== undefined ? { seed: o.seed } : {}),
  });
  const stopped = nextStopSignal();
  console.log(`serving ${server.description}`);
  console.log(`  base_model '${server.baseModel}', checkpoints in ${server.checkpointsDir}`);
  console.log(`tinker API at ${server.baseURL}/api/v1 (point the Tinker SDK's base_url at ${server.baseURL}); Ctrl-C stops`);
  const signal = await stopped;
  await server.close();
  process.exitCode = exitCodeForSignal(signal);
}
