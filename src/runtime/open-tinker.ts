/**
 * The default engine factory of `model.engine: tinker`: the Tinker client at `model.tinker.url`.
 */
import type { ResolvedConfig } from '../core/config.js';
import { InvalidConfigError } from '../core/errors.js';
import type { EngineFactory } from '../engines/engine.js';

/**
 * The factory that opens the run's model on its Tinker server.
 * @example const engine = await openTinkerEngineFactory(config)({ baseModel, loraRank: 32, seed: 1, resumeFrom: null });
 */
export function openTinkerEngineFactory(_config: ResolvedConfig): EngineFactory {
  return async () => {
    throw new InvalidConfigError('model.engine', 'the Tinker client is not wired yet (issue #27, in progress)');
  };
}
