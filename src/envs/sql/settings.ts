/**
 * Settings of the SQL environment (`env.settings` in a run config).
 */
import { z } from 'zod';
import type { EnvironmentOptions } from '../environment.js';
import { parseEnvSettings } from '../settings.js';
import { DATABASES } from './schema.js';
import { SQL_FAMILIES } from './templates.js';

const DB_NAMES = DATABASES.map((d) => d.name) as [string, ...string[]];

/** Schema of `env.settings` for `sql`. */
export const sqlSettingsSchema = z
  .object({
    databases: z.array(z.enum(DB_NAMES)).min(1).default([...DB_NAMES]).describe('Databases whose questions are used (cars, movies, penguins, weather, flights).'),
    families: z.array(z.enum(SQL_FAMILIES)).min(1).default([...SQL_FAMILIES]).describe('Question template families used (count, aggregate, filter, group_by, top_k, join).'),
    candidates: z
      .number()
      .int()
      .min(0)
      .max(8)
      .default(4)
      .describe('Candidate queries listed as available actions (the gold among near misses), for constrained decoding; 0 lists none.'),
    submit: z
      .enum(['explicit', 'first-query'])
      .default('explicit')
      .describe("'explicit': queries run and show their result until one is sent as `submit <SQL>`; 'first-query': the first query that runs is the answer (AgentGym SQLGym's single round)."),
    timeoutMs: z.number().int().min(10).max(60_000).default(2000).describe('Time limit of one query, in milliseconds.'),
    maxRows: z.number().int().min(1).max(200).default(10).describe('Result rows shown in an observation.'),
    maxTurns: z.number().int().min(1).max(100).default(10).describe('Queries per episode before it ends as failed.'),
    testRepeats: z
      .number()
      .int()
      .min(1)
      .max(50)
      .default(1)
      .describe('List each test question this many times (ids n + k·bank size: same question, same text), so evaluation samples small test sets repeatedly.'),
  })
  .strict();

/** Parsed settings. */
export type SqlSettings = z.output<typeof sqlSettingsSchema>;

/**
 * Parses `options.settings`; errors name the field (`env.settings.candidates`).
 * @example parseSqlSettings({ settings: { candidates: 2 } }).submit // 'explicit'
 */
export function parseSqlSettings(options?: EnvironmentOptions): SqlSettings {
  return parseEnvSettings(sqlSettingsSchema, options);
}
