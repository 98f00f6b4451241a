/**
 * The policy a sampler serves (issue #20): a {@link Policy} that also takes new weights and says
 * where it runs. Two implementations: {@link localServingPolicy} (the model on the calling thread,
 * as before) and `InferencePool` (`inference-pool.ts`: the model in worker threads, the calling
 * thread only routes). The sampler actor's effects call one of them; nothing else changes.
 */
import type { Policy } from '../../core/policy.js';
import type { NamedTensors } from '../checkpoint.js';
import type { EpisodeCacheCounters } from '../episode-caches.js';
import type { TransformerModel } from '../transformer/model.js';
import type { TransformerPolicy } from '../transformer-policy.js';

/** Per-episode KV-cache counters and size, summed over wherever the model runs. */
export type ServingCacheStats = Readonly<EpisodeCacheCounters> & { readonly episodes: number; readonly bytes: number };

/** A policy a sampler serves. */
export interface ServingPolicy extends Policy {
  /** Installs weights `version` (HF layout, as `TransformerModel.namedWeights()` gives them); resolves once they serve. */
  loadWeights(version: number, weights: NamedTensors): Promise<void>;
  releaseEpisodes(episodeIds: readonly string[]): void;
  /** Cache counters as of the last answer. */
  readonly cacheStats: ServingCacheStats;
  /** Where the model runs, e.g. `in-thread` or `2 inference workers`. */
  readonly placement: string;
  /** Frees the model(s); resolves once worker threads (if any) have exited. */
  close(): Promise<void>;
}

/**
 * The model on this thread: `sampleActions` blocks it while it decodes.
 * @example const serving = localServingPolicy(model, new TransformerPolicy(model, { endTokenId }));
 */
export function localServingPolicy(model: TransformerModel, policy: TransformerPolicy): ServingPolicy {
  return {
    get version() {
      return policy.version;
    },
    sampleActions: (requests, options, rng) => policy.sampleActions(requests, options, rng),
    greedyActions: (requests, maxNewTokens) => policy.greedyActions(requests, maxNewTokens),
    releaseEpisodes: (episodeIds) => policy.releaseEpisodes(episodeIds),
    async loadWeights(version, weights) {
      model.loadNamedWeights(weights);
      policy.setVersion(version);
    },
    get cacheStats() {
      return policy.cacheStats;
    },
    placement: 'in-thread',
    async close() {
      model.dispose();
    },
  };
}
