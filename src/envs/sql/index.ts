/**
 * The text-to-SQL environment: its registry spec and public pieces (`register.ts` registers it).
 */
import type { EnvironmentSpec } from '../environment.js';
import { createSqlCatalog } from './catalog.js';
import { sqlCorpus } from './corpus.js';
import { SqlEnvironment } from './env.js';
import { randomSqlAction } from './random-action.js';

/**
 * Registry entry for `sql` (task ids `sql_<index>`).
 * @example sqlSpec.catalog().indices('test').length // 500
 */
export const sqlSpec: EnvironmentSpec = {
  name: 'sql',
  description: 'Text-to-SQL over SQLite databases built from vega-datasets tables; read-only, time-limited, reward by result-set equivalence',
  create: (options) => new SqlEnvironment(options),
  catalog: (options) => createSqlCatalog(options),
  corpus: (options, episodes, seed) => sqlCorpus(options, episodes, seed),
  randomAction: randomSqlAction,
  // Rewards come only with the submitted answer: reward.mode sum would train on the outcome alone.
  paysTurnRewards: () => false,
};

export { type SqlBank, type SqlItem, sqlBank } from './bank.js';
export { ensureSqlDatabases, sqlCacheDir } from './build.js';
export { createSqlCatalog } from './catalog.js';
export { cellsEqual, type ResultSet, resultsEquivalent } from './equivalence.js';
export { candidateQueries, SQL_TOOLS, SqlEnvironment, sqlInstruction } from './env.js';
export { randomSqlAction } from './random-action.js';
export { type ParsedSql, parseSqlAction } from './parse.js';
export { acquireSandbox, type SandboxOutcome, SqlSandbox } from './sandbox.js';
export { parseSqlSettings, type SqlSettings, sqlSettingsSchema } from './settings.js';
export { SQL_FAMILIES, type SqlFamily } from './templates.js';
