/**
 * The Wordle text environment (LMRL-Gym's Wordle as AgentGym serves it, with a shipped word list):
 * guess the hidden five-letter word in `maxGuesses` tries; each guess gets one mark per letter.
 *
 * - Guesses are a word (`crane`) or its letters spaced out as AgentGym writes them (`c r a n e`),
 *   optionally after `guess`.
 * - A guess that is not five letters or not in the vocabulary is answered with an observation
 *   saying so and does NOT use up a guess (the rule of the NYT game); such turns still count
 *   toward `maxTurns`, so an episode always ends.
 * - Reward 1 when the answer is guessed, else 0.
 * - Available actions (listed mode, `candidates` > 0): the vocabulary (12.5 k words) is too large
 *   to list, so the observation lists up to `candidates` answer-pool words still consistent with
 *   every mark so far, in a fixed order that does not depend on the answer. Constrained decoding
 *   chooses among these, so a constrained policy only ever plays consistent pool words (and a
 *   random pick among them nearly always wins: this mode is for the small from-scratch model).
 * - Free mode (`candidates: 0`): nothing is listed; the agent writes any vocabulary word, as text
 *   or as a call of the `guess` tool (`{"name":"guess","arguments":{"word":"crane"}}`). A random
 *   vocabulary word wins about once in two thousand games.
 * - `turnRewards: true` adds a shaped reward to every valid guess (see {@link WORDLE_GREEN_BONUS}).
 */
import { EnvironmentError } from '../../core/errors.js';
import { Rng } from '../../core/rng.js';
import type { Observation, StepResult } from '../../core/types.js';
import { formatAvailableActions } from '../action-list.js';
import type { Environment, EnvironmentOptions } from '../environment.js';
import { parseAction } from '../parse-action.js';
import type { RandomActionRequest } from '../random-action.js';
import { readToolAction, stringTool } from '../tool-action.js';
import { type ToolSpec, toolCallText } from '../tools.js';
import { type WordleSettings, wordleAnswer, wordleSettings } from './catalog.js';
import { type Marks, scoreGuess } from './feedback.js';
import { guessVocabulary } from './vocabulary.js';

/** The instruction shown before the first observation. */
export const WORDLE_INSTRUCTION = [
  'You are playing Wordle: find the hidden five-letter English word.',
  'After each guess you get one mark per letter: g = right letter in the right spot, y = the letter is in the word but elsewhere, b = the letter is not in the word (or not that many times).',
  'A guess that is not a five-letter word from the word list does not count.',
  '',
  'Action: a five-letter word, e.g. crane, or its letters separated by spaces, e.g. c r a n e',
  '',
  'Reply in this format:',
  'Thought:',
  '<your thought>',
  '',
  'Action:',
  '<your guess>',
].join('\n');

const NAME = 'wordle';

/** Shaped reward of a guess (`turnRewards`): this much for marking all five positions green for the first time, in proportion for fewer. */
export const WORDLE_GREEN_BONUS = 0.1;

/** The one tool of Wordle. */
export const WORDLE_TOOLS: readonly ToolSpec[] = Object.freeze([
  stringTool('guess', 'Guess the hidden word. The reply gives one mark per letter: g (right spot), y (elsewhere in the word), b (not in the word).', {
    word: 'A five-letter English word, e.g. crane.',
  }),
]);

let sortedVocabulary: readonly string[] | null = null;

/**
 * A random guess for the random baseline: a uniform vocabulary word, as `Action: word` text or as
 * a `guess` call.
 * @example randomWordleAction({ observation, first: observation, rng: Rng.fromSeed(1), form: 'text' }) // 'Action: ...'
 */
export function randomWordleAction(request: RandomActionRequest): string {
  sortedVocabulary ??= [...guessVocabulary()].sort();
  const word = request.rng.pick(sortedVocabulary);
  return request.form === 'tools' ? toolCallText({ name: 'guess', arguments: { word } }) : `Action: ${word}`;
}

/**
 * Reads a guess from a normalised action: `crane`, `c r a n e`, `guess crane`. Null when it is not
 * five letters.
 * @example readGuess('s h i r e') // 'shire'
 */
export function readGuess(action: string): string | null {
  const words = action.toLowerCase().split(' ').filter((w) => w.length > 0);
  if (words[0] === 'guess' && words.length > 1) words.shift();
  const joined = words.every((w) => w.length === 1) ? words.join('') : words.length === 1 ? (words[0] as string) : '';
  return /^[a-z]{5}$/.test(joined) ? joined : null;
}

/**
 * One Wordle game at a time.
 * @example
 * const env = new WordleEnvironment();
 * env.reset(0); // answer 'about'
 * env.step('Action: c r a n e').observation.text; // 'crane -> b b y b b ...'
 */
export class WordleEnvironment implements Environment {
  readonly name = NAME;
  private readonly settings: WordleSettings;
  /** The answer pool in the fixed, answer-independent order used to list candidates. */
  private readonly listingOrder: readonly string[];
  private answer: string | null = null;
  private history: { guess: string; marks: Marks }[] = [];
  /** Pool words consistent with `history`, in listing order; narrowed after every guess. */
  private consistent: string[] = [];
  private turns = 0;
  /** Positions marked green at least once this game (for the shaped reward). */
  private greens = new Set<number>();
  private done = false;
  private closed = false;

  constructor(options: EnvironmentOptions = {}) {
    this.settings = wordleSettings(options);
    // Alphabetical listing would show only a- words first; a fixed shuffle spreads the letters.
    this.listingOrder = Rng.fromSeed(0).fork('wordle/listing').shuffle([...this.settings.answers]);
  }

  instruction(): string {
    return WORDLE_INSTRUCTION;
  }

  tools(): readonly ToolSpec[] {
    return WORDLE_TOOLS;
  }

  reset(index: number): Observation {
    if (this.closed) throw new EnvironmentError(NAME, 'reset called after close');
    if (!Number.isInteger(index) || index < 0) throw new EnvironmentError(NAME, `reset: task index must be a non-negative integer, got ${index}`);
    this.answer = wordleAnswer(this.settings, index);
    this.history = [];
    this.consistent = [...this.listingOrder];
    this.turns = 0;
    this.greens = new Set();
    this.done = false;
    return this.observation(`Guess the hidden five-letter word. You have ${this.settings.maxGuesses} guesses.`);
  }

  step(actionText: string): StepResult {
    if (this.closed) throw new EnvironmentError(NAME, 'step called after close');
    const answer = this.answer;
    if (answer === null) throw new EnvironmentError(NAME, 'step called before reset');
    if (this.done) return this.reject('The game is over. Reset the environment to start a new one.', 'episode-over', true);
    this.turns++;
    const text = typeof actionText === 'string' ? actionText : '';
    const call = readToolAction(text, WORDLE_TOOLS);
    if (call.kind === 'invalid') return this.rejectTurn(call.message, 'bad-tool-call');
    const parsed = call.kind === 'call' ? parseAction(call.args.word ?? '') : parseAction(text);
    if (!parsed.ok) return this.rejectTurn(parsed.message, parsed.reason);
    const guess = readGuess(parsed.action);
    if (guess === null) return this.rejectTurn(`"${parsed.action}" is not a five-letter word. This does not count as a guess.`, 'not-five-letters');
    if (!guessVocabulary().has(guess)) return this.rejectTurn(`"${guess}" is not in the word list. This does not count as a guess.`, 'not-a-word');

    const marks = scoreGuess(guess, answer);
    this.history.push({ guess, marks });
    this.consistent = this.consistent.filter((w) => scoreGuess(guess, w) === marks);
    const success = guess === answer;
    const outOfGuesses = !success && this.history.length >= this.settings.maxGuesses;
    const truncated = !success && !outOfGuesses && this.turns >= this.settings.maxTurns;
    this.done = success || outOfGuesses || truncated;
    let reply = `${guess} -> ${spaced(marks)}`;
    if (success) reply += `\nYou found the word in ${this.history.length} guesses. Task completed.`;
    else if (outOfGuesses) reply += `\nNo guesses left. The word was ${answer}.`;
    else if (truncated) reply += `\nYou have used all ${this.settings.maxTurns} turns.`;
    const shaped = this.settings.turnRewards ? this.newGreens(marks) * (WORDLE_GREEN_BONUS / 5) : 0;
    return {
      observation: this.observation(reply),
      reward: (success ? 1 : 0) + shaped,
      done: this.done,
      success,
      info: { invalid: false, action: guess, marks, guesses: this.history.length, truncated },
    };
  }

  close(): void {
    this.closed = true;
    this.answer = null;
  }

  /** The board and the hidden answer (for viewers; never shown to the agent). */
  render(): string {
    if (this.answer === null) return '(no episode)';
    const rows = this.history.map((h) => `${spaced(h.guess)} | ${spaced(h.marks)}`);
    return [`answer: ${this.answer}`, ...rows, `${this.settings.maxGuesses - this.history.length} guesses left`].join('\n');
  }

  /** Counts the positions marked green for the first time by `marks`, and remembers them. */
  private newGreens(marks: Marks): number {
    let fresh = 0;
    for (let i = 0; i < marks.length; i++) {
      if (marks[i] === 'g' && !this.greens.has(i)) {
        this.greens.add(i);
        fresh++;
      }
    }
    return fresh;
  }

  /** Answer-pool words consistent with the marks so far, in listing order (all of them). */
  consistentWords(): string[] {
    return [...this.consistent];
  }

  private rejectTurn(message: string, error: string): StepResult {
    if (this.turns >= this.settings.maxTurns) {
      this.done = true;
      return { observation: this.observation(`${message}\nYou have used all ${this.settings.maxTurns} turns.`), reward: 0, done: true, success: false, info: { invalid: true, error, truncated: true } };
    }
    return this.reject(message, error);
  }

  private reject(message: string, error: string, done = false): StepResult {
    return { observation: this.observation(message), reward: 0, done, success: false, info: { invalid: true, error } };
  }

  private observation(text: string): Observation {
    const board = this.history.map((h, i) => `Guess ${i + 1}: ${spaced(h.guess)} | ${spaced(h.marks)}`);
    const left = `Guesses left: ${this.settings.maxGuesses - this.history.length}.`;
    const actions = this.done ? [] : this.consistent.slice(0, this.settings.candidates);
    const parts = [text, ...(board.length > 0 ? ['Board:', ...board] : []), left];
    if (actions.length > 0) parts.push(formatAvailableActions(actions));
    return { text: parts.join('\n'), availableActions: actions };
  }
}

function spaced(word: string): string {
  return word.split('').join(' ');
}
