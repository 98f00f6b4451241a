/**
 * Wordle settings, task ids and splits. Task `wordle_<n>` plays answer `pool[n % P]` (P = pool
 * size). A pool position p is a test answer when p % 4 === 0, so train and test never share an
 * answer. Ids run to R = P * ceil(200 / P): the default pool (559 words) gives 140 test and 419
 * train ids, one per answer; a tiny custom pool repeats its answers under distinct ids so that an
 * evaluation still has about 200 episodes.
 */
import { z } from 'zod';
import { InvalidConfigError } from '../../core/errors.js';
import type { Split } from '../../core/types.js';
import type { EnvironmentOptions, TaskCatalog } from '../environment.js';
import { parseEnvSettings } from '../settings.js';
import { WORDLE_ANSWERS } from './answers.js';
import { guessVocabulary } from './vocabulary.js';

/** `env.settings` of Wordle. */
export const wordleSettingsSchema = z
  .object({
    answers: z
      .array(z.string().regex(/^[a-z]{5}$/, 'expected five lower-case letters'))
      .min(1)
      .optional()
      .describe('Answer pool in a fixed order (default: the shipped 559 common words); each must be in the guess vocabulary.'),
    maxGuesses: z.number().int().min(1).max(12).default(6).describe('Valid guesses allowed (Wordle: 6).'),
    candidates: z
      .number()
      .int()
      .min(0)
      .max(200)
      .default(20)
      .describe('Most answer-pool words still consistent with the feedback listed as available actions; 0 = free mode: nothing is listed and the agent writes any vocabulary word (or calls the guess tool).'),
    turnRewards: z
      .boolean()
      .default(false)
      .describe('Pay a shaped reward on every valid guess: 0.1 × the share of the five positions newly marked green (the win still pays 1); what reward.mode sum trains on.'),
    maxTurns: z.number().int().positive().default(30).describe('Turns (invalid guesses included) before the episode ends unsolved.'),
  })
  .strict();

/** Parsed Wordle settings, with the answer pool resolved. */
export type WordleSettings = Omit<z.output<typeof wordleSettingsSchema>, 'answers'> & { readonly answers: readonly string[] };

/** Evaluation size the id range is stretched to for small pools. */
const MIN_IDS = 200;

/**
 * Reads and checks `env.settings`; every custom answer must be a vocabulary word.
 * @example wordleSettings({ settings: { answers: ['crane', 'slate'] } }).answers.length // 2
 */
export function wordleSettings(options?: EnvironmentOptions): WordleSettings {
  const parsed = parseEnvSettings(wordleSettingsSchema, options);
  const answers = parsed.answers ?? WORDLE_ANSWERS;
  const vocabulary = guessVocabulary();
  answers.forEach((word, i) => {
    if (!vocabulary.has(word)) throw new InvalidConfigError(`env.settings.answers.${i}`, `${JSON.stringify(word)} is not in the guess vocabulary (word-list)`);
  });
  if (new Set(answers).size !== answers.length) throw new InvalidConfigError('env.settings.answers', 'answers must be distinct');
  return { ...parsed, answers };
}

/**
 * The answer of task `index`.
 * @example wordleAnswer(wordleSettings(), 0) // 'about'
 */
export function wordleAnswer(settings: WordleSettings, index: number): string {
  return settings.answers[index % settings.answers.length] as string;
}

/** Ids run over [0, idRange). */
export function wordleIdRange(poolSize: number): number {
  return poolSize * Math.ceil(MIN_IDS / poolSize);
}

/**
 * @example createWordleCatalog().indices('test').length // 140
 */
export function createWordleCatalog(options?: EnvironmentOptions): TaskCatalog {
  const settings = wordleSettings(options);
  const pool = settings.answers.length;
  const test: number[] = [];
  const train: number[] = [];
  for (let n = 0; n < wordleIdRange(pool); n++) ((n % pool) % 4 === 0 ? test : train).push(n);
  Object.freeze(test);
  Object.freeze(train);
  return { indices: (split: Split) => (split === 'test' ? test : train), category: () => (settings.answers === WORDLE_ANSWERS ? 'default-pool' : `custom-pool-${pool}`) };
}
