/**
 * SQL task ids and splits: `sql_<n>` is bank item `n`; the bank's first items are the test split
 * (see `bank.ts`). Settings narrow both splits to the chosen databases and families; the category
 * of a task is its template family. With `testRepeats: r` the test split lists each question r
 * times (ids n + k·bank size, k < r).
 */
import type { Split } from '../../core/types.js';
import type { EnvironmentOptions, TaskCatalog } from '../environment.js';
import { sqlBank } from './bank.js';
import { parseSqlSettings } from './settings.js';

/**
 * The catalog for the given settings.
 * @example createSqlCatalog({ settings: { databases: ['cars'] } }).indices('test').length > 0 // true
 */
export function createSqlCatalog(options?: EnvironmentOptions): TaskCatalog {
  const settings = parseSqlSettings(options);
  const bank = sqlBank();
  const dbs = new Set<string>(settings.databases);
  const families = new Set<string>(settings.families);
  const chosen = bank.items.filter((it) => dbs.has(it.db) && families.has(it.family));
  const test = chosen.filter((it) => it.split === 'test').map((it) => it.index);
  const n = bank.items.length;
  // Repeat k of question i is id i + k·n; the environment reads it as question i.
  const splits: Record<Split, readonly number[]> = {
    train: Object.freeze(chosen.filter((it) => it.split === 'train').map((it) => it.index)),
    test: Object.freeze(Array.from({ length: settings.testRepeats }, (_, k) => test.map((i) => i + k * n)).flat()),
  };
  return {
    indices: (split: Split) => splits[split] ?? [],
    category: (index: number) => (Number.isInteger(index) && index >= 0 ? bank.items[index % n]?.family : undefined),
  };
}
