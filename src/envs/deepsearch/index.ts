/**
 * The deep-search environment: its registry spec and public pieces (`register.ts` registers it).
 */
import type { EnvironmentSpec } from '../environment.js';
import { createDeepSearchCatalog } from './catalog.js';
import { deepSearchCorpus } from './corpus.js';
import { DeepSearchEnvironment } from './env.js';
import { randomSearchAction } from './random-action.js';
import { SearchR1Environment } from './searchr1-env.js';
import { parseDeepSearchSettings } from './settings.js';

/**
 * Registry entry for `deepsearch` (task ids `deepsearch_<index>`).
 * @example deepsearchSpec.catalog().indices('test').length // 500
 */
export const deepsearchSpec: EnvironmentSpec = {
  name: 'deepsearch',
  description: 'AgentGym SearchQA protocol (<search>/<answer>) over a local BM25 corpus of countries, provinces and US airports; multi-hop questions',
  create: (options) => (parseDeepSearchSettings(options).qa === undefined ? new DeepSearchEnvironment(options) : new SearchR1Environment(options)),
  catalog: (options) => createDeepSearchCatalog(options),
  corpus: (options, episodes, seed) => deepSearchCorpus(options, episodes, seed),
  randomAction: randomSearchAction,
  paysTurnRewards: (options) => parseDeepSearchSettings(options).turnRewards,
};

export { searchCandidates } from './candidates.js';
export { createDeepSearchCatalog } from './catalog.js';
export { type SearchDocument, searchDocuments } from './documents.js';
export { DEEPSEARCH_INSTRUCTION, DeepSearchEnvironment } from './env.js';
export { DEEPSEARCH_TOOLS, exactMatch, INVALID_ACTION_MESSAGE, normalizeAnswer, parseSearchAction, type SearchAction } from './protocol.js';
export { SEARCH_TEMPLATES, type SearchQuestion, searchQuestions, type SearchTemplate } from './questions.js';
export { formatInformation, type SearchHit, searchCorpus } from './search-index.js';
export { parseDeepSearchSettings, type DeepSearchSettings, deepSearchSettingsSchema } from './settings.js';
export { Bm25Index, type Bm25Hit, type Bm25Parameters, bm25Terms, PYSERINI_BM25 } from './bm25.js';
export { LocalBm25Retriever } from './local-bm25.js';
export { type Passage, parsePassages, passageTitleAndText, readPassages } from './passages.js';
export { type QaItem, qaItemOf, type QaSet, readQaSet } from './qa-dataset.js';
export { exactMatchScore, f1Score, QA_METRICS, type QaMetric, qaScore, substringMatchScore } from './qa-scoring.js';
export { parseRetrieveBody, RemoteRetriever, type RemoteRetrieverOptions } from './remote-retriever.js';
export type { RetrievedPassage, Retriever } from './retriever.js';
export { randomSearchAction } from './random-action.js';
export { informationBlock, SEARCHR1_INSTRUCTION, SearchR1Environment } from './searchr1-env.js';
export { solveSearchQuestion } from './solver.js';
