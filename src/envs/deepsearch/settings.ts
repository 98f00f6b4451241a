/**
 * Settings of the deep-search environment (`env.settings` in a run config).
 */
import { z } from 'zod';
import type { EnvironmentOptions } from '../environment.js';
import { parseEnvSettings } from '../settings.js';
import { SEARCH_TEMPLATES } from './questions.js';

/** Schema of `env.settings` for `deepsearch`. */
export const deepSearchSettingsSchema = z
  .object({
    templates: z.array(z.enum(SEARCH_TEMPLATES)).min(1).default([...SEARCH_TEMPLATES]).describe('Question templates used (hops1/..., hops2/...).'),
    topK: z.number().int().min(1).max(10).default(3).describe('Documents returned per search (AgentGym SearchQA: 3).'),
    candidates: z.boolean().default(true).describe('List candidate <search>/<answer> actions (for constrained decoding); free text is accepted either way.'),
    maxTurns: z.number().int().min(1).max(100).default(30).describe('Turns per episode before it ends as failed (AgentGym evaluates SearchQA with 30 rounds).'),
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
export type DeepSearchSettings = z.output<typeof deepSearchSettingsSchema>;

/**
 * Parses `options.settings`; errors name the field.
 * @example parseDeepSearchSettings({ settings: { topK: 5 } }).topK // 5
 */
export function parseDeepSearchSettings(options?: EnvironmentOptions): DeepSearchSettings {
  return parseEnvSettings(deepSearchSettingsSchema, options);
}
