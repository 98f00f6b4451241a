/**
 * Settings of the deep-search environment (`env.settings` in a run config).
 */
import { z } from 'zod';
import type { EnvironmentOptions } from '../environment.js';
import { parseEnvSettings } from '../settings.js';
import { QA_METRICS } from './qa-scoring.js';
import { SEARCH_TEMPLATES } from './questions.js';

/** Schema of `env.settings` for `deepsearch`. */
export const deepSearchSettingsSchema = z
  .object({
    templates: z.array(z.enum(SEARCH_TEMPLATES)).min(1).default([...SEARCH_TEMPLATES]).describe('Question templates used (hops1/..., hops2/...).'),
    topK: z.number().int().min(1).max(10).default(3).describe('Documents returned per search (AgentGym SearchQA: 3).'),
    candidates: z
      .boolean()
      .optional()
      .describe('List candidate <search>/<answer> actions (for constrained decoding; built-in questions only); free text and tool calls are accepted either way. Default: true for the built-in questions, false with qa.'),
    qa: z
      .object({
        train: z.string().min(1).describe('Training questions: JSONL or Parquet with question and golden_answers (Search-R1 / FlashRAG layout).'),
        test: z.string().min(1).describe('Held-out questions, same layout.'),
      })
      .strict()
      .optional()
      .describe("Questions from files in Search-R1's layout instead of the built-in bank; needs corpus or retriever."),
    corpus: z.string().min(1).optional().describe('JSONL corpus ({"id", "contents"}, Search-R1 format) searched with a local BM25 index (built once, cached on disk).'),
    retriever: z
      .object({
        url: z.string().url().describe("Search-R1 retrieval server endpoint, e.g. http://127.0.0.1:8000/retrieve (POST queries, topk, return_scores)."),
        timeoutMs: z.number().int().positive().default(30_000).describe('Per-request time limit.'),
        retries: z.number().int().min(0).max(10).default(3).describe('Retries of a failed request (with back-off).'),
      })
      .strict()
      .optional()
      .describe('A remote retriever speaking Search-R1’s protocol, instead of corpus.'),
    metric: z.enum(QA_METRICS).default('em').describe('Answer score: em (exact match, Search-R1), subem (gold answer contained in the answer) or f1 (token F1); all after SQuAD normalisation.'),
    wrongAnswer: z
      .enum(['retry', 'end'])
      .optional()
      .describe("After a wrong answer: 'retry' (AgentGym SearchQA: told so, the episode goes on) or 'end' (Search-R1: the answer ends the episode). Default: retry for the built-in questions, end with qa."),
    turnRewards: z
      .boolean()
      .default(false)
      .describe('Pay 0.1 on the first search whose passages contain a gold answer (a shaped per-turn reward, for reward.mode sum); the answer still pays its score.'),
    maxTurns: z.number().int().min(1).max(100).default(30).describe('Turns per episode before it ends as failed (AgentGym evaluates SearchQA with 30 rounds).'),
    testRepeats: z
      .number()
      .int()
      .min(1)
      .max(50)
      .default(1)
      .describe('List each test question this many times (ids n + k·bank size: same question, same text), so evaluation samples small test sets repeatedly.'),
  })
  .strict()
  .superRefine((s, ctx) => {
    const sources = (s.corpus === undefined ? 0 : 1) + (s.retriever === undefined ? 0 : 1);
    if (s.qa !== undefined && sources !== 1) ctx.addIssue({ code: 'custom', path: [sources === 0 ? 'corpus' : 'retriever'], message: sources === 0 ? 'qa needs a corpus (JSONL path) or a retriever (url)' : 'give corpus or retriever, not both' });
    if (s.qa === undefined && sources > 0) ctx.addIssue({ code: 'custom', path: ['qa'], message: 'a corpus or retriever needs questions from files: set qa.train and qa.test' });
    if (s.qa !== undefined && s.candidates === true) ctx.addIssue({ code: 'custom', path: ['candidates'], message: 'candidates are built from the built-in corpus only; remove it (or set false) with qa' });
  })
  .transform((s) => ({ ...s, candidates: s.candidates ?? s.qa === undefined, wrongAnswer: s.wrongAnswer ?? (s.qa === undefined ? ('retry' as const) : ('end' as const)) }));

/** Parsed settings. */
export type DeepSearchSettings = z.output<typeof deepSearchSettingsSchema>;

/**
 * Parses `options.settings`; errors name the field.
 * @example parseDeepSearchSettings({ settings: { topK: 5 } }).topK // 5
 */
export function parseDeepSearchSettings(options?: EnvironmentOptions): DeepSearchSettings {
  return parseEnvSettings(deepSearchSettingsSchema, options);
}
