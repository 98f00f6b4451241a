/**
 * Deep-search task ids and splits: `deepsearch_<n>` is question `n` (see `questions.ts`); settings
 * narrow the splits to the chosen templates; the category is the template (`hops2/province_capital`).
 * With `testRepeats: r` the test split lists each question r times (ids n + k·bank size, k < r).
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
  const of = (split: Split) => items.filter((q) => q.split === split && chosen.has(q.template)).map((q) => q.index);
  const test = of('test');
  // Repeat k of question n is id n + k·items.length; the environment reads it as question n.
  const repeated = Array.from({ length: settings.testRepeats }, (_, k) => test.map((n) => n + k * items.length)).flat();
  const splits: Record<Split, readonly number[]> = { train: Object.freeze(of('train')), test: Object.freeze(repeated) };
  return {
    indices: (split: Split) => splits[split] ?? [],
    category: (index: number) => (Number.isInteger(index) && index >= 0 ? items[index % items.length]?.template : undefined),
  };
}
