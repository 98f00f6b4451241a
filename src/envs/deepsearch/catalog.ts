/**
 * Deep-search task ids and splits: `deepsearch_<n>` is question `n` (see `questions.ts`); settings
 * narrow the splits to the chosen templates; the category is the template (`hops2/province_capital`).
 * With `testRepeats: r` the test split lists each question r times (ids n + k·bank size, k < r).
 */
import type { Split } from '../../core/types.js';
import type { EnvironmentOptions, TaskCatalog } from '../environment.js';
import { readQaSet } from './qa-dataset.js';
import { searchQuestions } from './questions.js';
import { parseDeepSearchSettings } from './settings.js';

/**
 * The catalog for the given settings.
 * @example createDeepSearchCatalog().indices('test').length // 500
 */
export function createDeepSearchCatalog(options?: EnvironmentOptions): TaskCatalog {
  const settings = parseDeepSearchSettings(options);
  if (settings.qa !== undefined) return fileCatalog(settings.qa, settings.testRepeats);
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

/** Ids over QA files: training rows 0..T-1, held-out rows T..T+H-1, repeat k of held-out row j at T + j + k·(T+H). */
function fileCatalog(qa: { train: string; test: string }, testRepeats: number): TaskCatalog {
  const train = readQaSet(qa.train);
  const test = readQaSet(qa.test);
  const total = train.size + test.size;
  const splits: Record<Split, readonly number[]> = {
    train: Object.freeze(Array.from({ length: train.size }, (_, i) => i)),
    test: Object.freeze(Array.from({ length: testRepeats }, (_, k) => Array.from({ length: test.size }, (__, j) => train.size + j + k * total)).flat()),
  };
  return {
    indices: (split: Split) => splits[split] ?? [],
    category(index: number): string | undefined {
      if (!Number.isInteger(index) || index < 0) return undefined;
      const isTrain = index < train.size;
      const row = isTrain ? index : (index - train.size) % total;
      return (isTrain ? train : test).itemsNow()?.[row]?.source;
    },
  };
}
