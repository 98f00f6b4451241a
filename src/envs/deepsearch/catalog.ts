/**
 * Deep-search task ids and splits: `deepsearch_<n>` is question `n` (see `questions.ts`); settings
 * narrow the splits to the chosen templates; the category is the template (`hops2/province_capital`).
 */
import type { Split } from '../../core/types.js';
import type { EnvironmentOptions, TaskCatalog } from '../environment.js';
import { searchQuestions } from './questions.js';
import { parseDeepSearchSettings } from './settings.js';

/**
 * The catalog for the given settings.
 * @example createDeepSearchCatalog().indices('test').length // 500
 */
export function createDeepSearchCatalog(options?: EnvironmentOptions): TaskCatalog {
  const settings = parseDeepSearchSettings(options);
  const { items } = searchQuestions();
  const chosen = new Set<string>(settings.templates);
  const of = (split: Split) => Object.freeze(items.filter((q) => q.split === split && chosen.has(q.template)).map((q) => q.index));
  const splits: Record<Split, readonly number[]> = { train: of('train'), test: of('test') };
  return { indices: (split: Split) => splits[split] ?? [], category: (index: number) => items[index]?.template };
}
