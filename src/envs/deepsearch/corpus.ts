/**
 * Tokenizer text for deep search: the instruction, and episodes of a random candidate policy
 * (with an occasional untagged reply so that the invalid-action message appears too).
 */
import type { EnvironmentOptions } from '../environment.js';
import { randomPlayCorpus } from '../random-play.js';
import { createDeepSearchCatalog } from './catalog.js';
import { DeepSearchEnvironment } from './env.js';

/**
 * Random-play corpus, deterministic in `seed`.
 * @example deepSearchCorpus(undefined, 5, 0).length > 5 // true
 */
export function deepSearchCorpus(options: EnvironmentOptions | undefined, episodes: number, seed: number): string[] {
  // Built-in questions and corpus always (the tokenizer text of a from-scratch model); file-backed settings are dropped.
  const { qa: _qa, corpus: _corpus, retriever: _retriever, candidates: _candidates, wrongAnswer: _wrong, ...rest } = (options?.settings ?? {}) as Record<string, unknown>;
  const settings = { ...rest, candidates: true, maxTurns: 6 };
  return randomPlayCorpus({
    env: new DeepSearchEnvironment({ settings }),
    tasks: createDeepSearchCatalog({ settings }).indices('train'),
    episodes,
    seed,
    invalidSamples: ['search France', 'Paris', '<answer></answer>', 'I do not know'],
    turnsPerEpisode: 6,
  });
}
