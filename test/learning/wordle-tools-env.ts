/**
 * Wordle's listed mode with its action declared as a tool, for the tool-calling learning test (not
 * a test file itself): `guess(word)`, the word one of the answer pool (an `enum`: the pool is small
 * here). A call reaches the Wordle environment as the word; the observation is Wordle's own (the
 * marks, the board, the pool words still consistent with them). Registered as `wordle_tools`.
 *
 * Its games favour the first pool word, as real Wordle favours common words: task id n plays the
 * first word when n % 8 < 5, else word 1, 2 or 3 (n % 8 = 5, 6, 7); every fifth id is held out, so
 * held-out games follow the same odds and are new games of the words trained on, as BabyAI's
 * held-out seeds are new layouts of a level (Wordle's own catalog holds whole words out instead).
 *
 * A thin wrapper over Wordle's own rules: Wordle's own `guess` tool takes any word (a string); here
 * the word is an `enum` of the pool, as a listed mode's tool would be, and the games are skewed.
 */
import { checkToolCall, parseToolCallText, type ToolSpec } from '../../src/core/tools.js';
import type { StepResult } from '../../src/core/types.js';
import type { Environment, EnvironmentOptions, EnvironmentSpec } from '../../src/envs/environment.js';
import '../../src/envs/index.js';
import { getEnvironmentSpec, listEnvironments, registerEnvironment } from '../../src/envs/registry.js';
import { wordleSettings } from '../../src/envs/wordle/catalog.js';

export const WORDLE_TOOLS_INSTRUCTION = [
  'You are playing Wordle: find the hidden five-letter English word.',
  'After each guess you get one mark per letter: g = right letter in the right spot, y = the letter is in the word but elsewhere, b = the letter is not in the word.',
  'Call the guess tool with one word per turn.',
].join('\n');

/** The `guess` tool over an answer pool. */
export function guessTool(pool: readonly string[]): ToolSpec {
  return {
    name: 'guess',
    description: 'Guess the hidden word.',
    parameters: { type: 'object', properties: { word: { type: 'string', description: 'A five-letter word.', enum: [...pool] } }, required: ['word'] },
  };
}

function create(options: EnvironmentOptions | undefined, game: (n: number) => number): Environment {
  const wordle = getEnvironmentSpec('wordle').create(options);
  const tools = [guessTool(wordleSettings(options ?? {}).answers)];
  const invalid = (message: string): StepResult => ({ observation: { text: message }, reward: 0, done: false, info: { invalid: true } });
  return {
    name: 'wordle_tools',
    instruction: () => WORDLE_TOOLS_INSTRUCTION,
    reset: (index) => wordle.reset(game(index)),
    step: (actionText) => {
      const parsed = parseToolCallText(actionText);
      if (!parsed.ok) return invalid(parsed.message);
      const error = checkToolCall(parsed.call, tools);
      return error === null ? wordle.step(String(parsed.call.arguments.word)) : invalid(error);
    },
    close: () => wordle.close(),
    tools: () => tools,
  };
}

/** Task ids 0..599 (480 train, 120 test). */
const IDS = Array.from({ length: 600 }, (_, n) => n);

/** The Wordle task index (whose answer is pool[index % P]) that task id `n` plays: the first word 5 times in 8. */
export function gameOf(n: number): number {
  const slot = n % 8;
  return 4 * Math.floor(n / 8) + (slot < 5 ? 0 : slot - 4);
}

/**
 * Registers, once per process, `wordle_tools` (the first word favoured, as above) and
 * `wordle_tools_uniform` (task id n plays pool[n % P]: every word alike), the game a stand-in
 * pretrains on when it should know the tool but not which words are common.
 */
export function registerWordleTools(): void {
  if (listEnvironments().some((s) => s.name === 'wordle_tools')) return;
  const wordle = getEnvironmentSpec('wordle');
  const variant = (name: string, description: string, game: (n: number) => number): EnvironmentSpec => ({
    name,
    description,
    create: (options) => create(options, game),
    catalog: () => ({ indices: (split) => IDS.filter((n) => (n % 5 === 0) === (split === 'test')) }),
    corpus: (options, episodes, seed) => wordle.corpus(options, episodes, seed),
  });
  registerEnvironment(variant('wordle_tools', "Wordle's listed mode with guess(word) declared as a tool, the first pool word the answer 5 games in 8 (tests)", gameOf));
  registerEnvironment(variant('wordle_tools_uniform', "Wordle's listed mode with guess(word) declared as a tool, every pool word alike (tests)", (n) => n));
}
