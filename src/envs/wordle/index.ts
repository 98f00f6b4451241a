/**
 * The Wordle environment (LMRL-Gym's game, `word-list` vocabulary, shipped answer pool): registry
 * spec and public pieces.
 */
import type { EnvironmentSpec } from '../environment.js';
import { randomPlayCorpus } from '../random-play.js';
import { createWordleCatalog, wordleSettings } from './catalog.js';
import { randomWordleAction, WordleEnvironment } from './env.js';

/**
 * Registry entry for `wordle` (task ids `wordle_<n>`).
 * @example wordleSpec.create().reset(0).text.startsWith('Guess the hidden') // true
 */
export const wordleSpec: EnvironmentSpec = {
  name: 'wordle',
  description: 'Wordle: 12.5k-word guess vocabulary (word-list), 559-word answer pool, g/y/b feedback, 6 guesses',
  create: (options) => new WordleEnvironment(options),
  catalog: (options) => createWordleCatalog(options),
  corpus: (options, episodes, seed) =>
    randomPlayCorpus({
      env: new WordleEnvironment(options),
      tasks: createWordleCatalog(options).indices('train'),
      episodes,
      seed,
      invalidSamples: ['xyzzy', 'c r a n', 'hello world', 'aaaaa'],
      randomAction: randomWordleAction,
    }),
  randomAction: randomWordleAction,
  paysTurnRewards: (options) => wordleSettings(options).turnRewards,
};

export { WORDLE_ANSWERS } from './answers.js';
export { createWordleCatalog, wordleAnswer, wordleIdRange, wordleSettings, wordleSettingsSchema } from './catalog.js';
export type { WordleSettings } from './catalog.js';
export { randomWordleAction, readGuess, WORDLE_GREEN_BONUS, WORDLE_INSTRUCTION, WORDLE_TOOLS, WordleEnvironment } from './env.js';
export { isConsistent, scoreGuess } from './feedback.js';
export type { Marks } from './feedback.js';
export { guessVocabulary } from './vocabulary.js';
