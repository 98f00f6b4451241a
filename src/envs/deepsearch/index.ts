/**
 * The deep-search environment: its registry spec and public pieces (`register.ts` registers it).
 */
import type { EnvironmentSpec } from '../environment.js';
import { createDeepSearchCatalog } from './catalog.js';
import { deepSearchCorpus } from './corpus.js';
import { DeepSearchEnvironment } from './env.js';

/**
 * Registry entry for `deepsearch` (task ids `deepsearch_<index>`).
 * @example deepsearchSpec.catalog().indices('test').length // 500
 */
export const deepsearchSpec: EnvironmentSpec = {
  name: 'deepsearch',
  description: 'AgentGym SearchQA protocol (<search>/<answer>) over a local BM25 corpus of countries, provinces and US airports; multi-hop questions',
  create: (options) => new DeepSearchEnvironment(options),
  catalog: (options) => createDeepSearchCatalog(options),
  corpus: (options, episodes, seed) => deepSearchCorpus(options, episodes, seed),
};

export { searchCandidates } from './candidates.js';
export { createDeepSearchCatalog } from './catalog.js';
export { type SearchDocument, searchDocuments } from './documents.js';
export { DEEPSEARCH_INSTRUCTION, DeepSearchEnvironment } from './env.js';
export { exactMatch, INVALID_ACTION_MESSAGE, normalizeAnswer, parseSearchAction, type SearchAction } from './protocol.js';
export { SEARCH_TEMPLATES, type SearchQuestion, searchQuestions, type SearchTemplate } from './questions.js';
export { formatInformation, type SearchHit, searchCorpus } from './search-index.js';
export { parseDeepSearchSettings, type DeepSearchSettings, deepSearchSettingsSchema } from './settings.js';
export { solveSearchQuestion } from './solver.js';
