/**
 * The default engine factory of `model.engine: tinker`: a {@link TinkerClient} at
 * `model.tinker.url` (the key read from the environment variable `model.tinker.apiKeyEnv` names),
 * and a {@link TinkerEngine} bound to a new LoRA model on it, resumed from a saved state when asked.
 */
import type { ResolvedConfig } from '../core/config.js';
import { InvalidConfigError } from '../core/errors.js';
import type { EngineFactory } from '../engines/engine.js';
import { TinkerClient } from '../engines/tinker/client.js';
import { TinkerEngine } from '../engines/tinker/tinker-engine.js';

/**
 * The factory that opens the run's model on its Tinker server.
 * @example const engine = await openTinkerEngineFactory(config)({ baseModel, loraRank: 32, seed: 1, resumeFrom: null });
 */
export function openTinkerEngineFactory(config: ResolvedConfig): EngineFactory {
  const t = config.model.tinker;
  if (t === null) throw new InvalidConfigError('model.tinker', 'is required with model.engine: tinker');
  return async (request) => {
    const client = new TinkerClient({
      url: t.url,
      ...(t.apiKeyEnv !== null ? { apiKeyEnv: t.apiKeyEnv } : {}),
      concurrency: t.concurrency,
      requestTimeoutMs: t.requestTimeoutMs,
      pollTimeoutMs: t.pollTimeoutMs,
      futureTimeoutMs: t.futureTimeoutMs,
      heartbeatIntervalMs: t.heartbeatMs,
      retry: { maxRetries: t.retries },
    });
    try {
      return await TinkerEngine.open(client, {
        baseModel: request.baseModel,
        lora: { rank: request.loraRank, seed: request.seed },
        server: t.server,
        ...(t.reduction !== null ? { reduction: t.reduction } : {}),
        ...(request.resumeFrom !== null ? { resumeFrom: request.resumeFrom } : {}),
      });
    } catch (err) {
      await client.close();
      throw err;
    }
  };
}
