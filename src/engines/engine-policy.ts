/**
 * The sampler's policy when the model lives on an engine: each act request becomes one sampling
 * request — the context ids exactly as the chat context builder produced them (never text), the
 * episode's per-turn seed, the model's stop ids — and the sampled ids with their log-probs come
 * back as the turn's tokens. Requests of a batch go out side by side (the engine bounds how many
 * are in flight), so thousands of live episodes keep a server busy.
 *
 * Weights: the learner saves every version for sampling; `loadWeights(version)` points the policy
 * at that version's sampler weights (looked up in the shared {@link SamplerWeightsRegistry}; the
 * tensors of the message are empty for an engine run).
 */
import type { ActRequest, ActResult, SamplingOptions } from '../core/policy.js';
import { InvalidArgumentError, TurnwiseError } from '../core/errors.js';
import type { Rng } from '../core/rng.js';
import type { NamedTensors } from '../models/checkpoint.js';
import type { ServingCacheStats, ServingPolicy } from '../models/inference/serving-policy.js';
import type { EngineSampleRequest, ModelEngine, SamplerWeights } from './engine.js';

/** Which sampler weights each policy version is: written by the learner, read by the sampler. */
export class SamplerWeightsRegistry {
  private readonly byVersion = new Map<number, SamplerWeights | 'base'>();

  /** Records the weights of `version` (`'base'`: the untrained adapter, i.e. the base model). */
  set(version: number, weights: SamplerWeights | 'base'): void {
    this.byVersion.set(version, weights);
  }

  /** The weights of `version`; throws naming the version when the learner never saved them. */
  get(version: number): SamplerWeights | 'base' {
    const weights = this.byVersion.get(version);
    if (weights === undefined) throw new TurnwiseError(`no sampler weights were saved for policy version ${version} (known: ${[...this.byVersion.keys()].join(', ') || 'none'})`);
    return weights;
  }

  /** Forgets versions older than `version` (their samples are done). */
  forgetBefore(version: number): void {
    for (const v of this.byVersion.keys()) if (v < version) this.byVersion.delete(v);
  }
}

/** Options of {@link EnginePolicy}. */
export interface EnginePolicyOptions {
  readonly engine: ModelEngine;
  readonly registry: SamplerWeightsRegistry;
  /** Weights version served at start. */
  readonly version: number;
  /** Ids that end a reply (the model's end-of-turn and eos ids); a request's own `stopTokenIds` win. */
  readonly stopTokenIds: readonly number[];
}

const NO_CACHE: ServingCacheStats = { hits: 0, misses: 0, evictions: 0, released: 0, episodes: 0, bytes: 0 };

/** A 31-bit seed for a request that brings none, from the batch's stream. */
function seedOf(request: ActRequest, rng: Rng): number {
  return request.seed ?? rng.int(2 ** 31);
}

/**
 * A {@link ServingPolicy} whose model is an engine.
 * @example const policy = new EnginePolicy({ engine, registry, version: 0, stopTokenIds: [2] });
 */
export class EnginePolicy implements ServingPolicy {
  private currentVersion: number;
  private readonly engine: ModelEngine;
  private readonly registry: SamplerWeightsRegistry;
  private readonly stopTokenIds: readonly number[];
  readonly placement: string;

  constructor(options: EnginePolicyOptions) {
    this.engine = options.engine;
    this.registry = options.registry;
    this.currentVersion = options.version;
    this.stopTokenIds = options.stopTokenIds;
    this.placement = options.engine.description;
  }

  get version(): number {
    return this.currentVersion;
  }

  get cacheStats(): ServingCacheStats {
    return NO_CACHE;
  }

  sampleActions(requests: readonly ActRequest[], options: SamplingOptions, rng: Rng): Promise<ActResult[]> {
    return this.generate(requests, options.maxNewTokens, options.temperature, options.topP, rng);
  }

  greedyActions(requests: readonly ActRequest[], maxNewTokens: number): Promise<ActResult[]> {
    return this.generate(requests, maxNewTokens, 0, 1, null);
  }

  /** Nothing is kept per episode on this side (a server may cache prefixes on its own). */
  releaseEpisodes(_episodeIds: readonly string[]): void {}

  async loadWeights(version: number, _weights: NamedTensors): Promise<void> {
    this.registry.get(version); // fails now, naming the version, rather than at the next sample
    this.currentVersion = version;
  }

  async close(): Promise<void> {}

  private async generate(requests: readonly ActRequest[], maxNewTokens: number, temperature: number, topP: number, rng: Rng | null): Promise<ActResult[]> {
    const version = this.currentVersion;
    const weights = this.registry.get(version);
    const asked = requests.map((request, i): EngineSampleRequest => {
      if (request.actionChoices !== null) {
        throw InvalidArgumentError.format(`requests[${i}].actionChoices`, 'constrained decoding over listed actions is not possible on a model engine; sample free text (sampling.constrained: false)');
      }
      if (request.grammar !== undefined) {
        throw InvalidArgumentError.format(`requests[${i}].grammar`, 'grammar-constrained decoding is not possible on a model engine (it samples whole sequences remotely)');
      }
      const maxTokens = Math.min(maxNewTokens, request.maxNewTokens ?? maxNewTokens);
      return {
        promptTokens: request.contextTokens,
        numSamples: 1,
        maxTokens,
        temperature,
        topP,
        topK: -1,
        stopTokenIds: request.stopTokenIds ?? this.stopTokenIds,
        ...(rng === null ? {} : { seed: seedOf(request, rng) }),
      };
    });
    const results = await this.engine.sample(weights, asked);
    return results.map((result, i) => {
      const sequence = result.sequences[0];
      if (sequence === undefined) throw new TurnwiseError(`${this.engine.description}: sampling request ${i} came back with no sequence`);
      const n = sequence.tokens.length;
      if (sequence.logprobs.length !== n) {
        throw new TurnwiseError(`${this.engine.description}: sampling request ${i} returned ${n} tokens but ${sequence.logprobs.length} log-probs`);
      }
      if (n > (asked[i] as EngineSampleRequest).maxTokens) {
        throw new TurnwiseError(`${this.engine.description}: sampling request ${i} returned ${n} tokens, more than max_tokens ${(asked[i] as EngineSampleRequest).maxTokens}`);
      }
      return {
        tokens: sequence.tokens,
        logprobs: sequence.logprobs,
        lossMask: new Uint8Array(n).fill(1),
        constraint: null,
        policyVersion: version,
        finishReason: sequence.stopReason,
      };
    });
  }
}
