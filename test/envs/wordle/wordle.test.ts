import { describe, expect, it } from 'vitest';
import { InvalidConfigError } from '../../../src/core/errors.js';
import {
  createWordleCatalog,
  guessVocabulary,
  isConsistent,
  readGuess,
  scoreGuess,
  WORDLE_ANSWERS,
  WordleEnvironment,
  wordleAnswer,
  wordleSettings,
} from '../../../src/envs/wordle/index.js';
import { fuzzEnvironment } from '../fuzz.js';

describe('Wordle feedback', () => {
  it.each([
    ['crane', 'crane', 'ggggg'],
    ['crane', 'about', 'bbybb'],
    // One e in the answer: only the first unmatched e of the guess is yellow.
    ['speed', 'abide', 'bbyby'],
    // The green e uses the answer's only e: the other e's are grey, not yellow.
    ['geese', 'those', 'bbbgg'],
    ['eerie', 'ether', 'gyybb'],
    // Two l's in the answer: both l's of the guess are yellow.
    ['llama', 'hello', 'yybbb'],
    // Three r's guessed, one in the answer, not where any is green: exactly one yellow, the first.
    ['error', 'robot', 'bybgb'],
    // brass has two s: the green s takes one, the other goes to the first s of the guess only.
    ['sassy', 'brass', 'yybgb'],
    ['crane', 'geese', 'bbbbg'],
  ])('marks %s against %s as %s', (guess, answer, marks) => {
    expect(scoreGuess(guess, answer)).toBe(marks);
  });

  it('keeps exactly the words that would have given the same marks', () => {
    const history = [{ guess: 'crane', marks: scoreGuess('crane', 'about') }];
    expect(isConsistent('about', history)).toBe(true);
    expect(isConsistent('crane', history)).toBe(false);
    expect(isConsistent('along', history)).toBe(false); // n would be yellow
  });
});

describe('Wordle words', () => {
  it('has a 12.5k-word guess vocabulary of five lower-case letters from word-list', () => {
    const vocabulary = guessVocabulary();
    expect(vocabulary.size).toBe(12578);
    expect([...vocabulary].every((w) => /^[a-z]{5}$/.test(w))).toBe(true);
  });

  it('ships a distinct, alphabetical answer pool inside the vocabulary', () => {
    expect(WORDLE_ANSWERS.length).toBe(559);
    expect(new Set(WORDLE_ANSWERS).size).toBe(WORDLE_ANSWERS.length);
    expect([...WORDLE_ANSWERS].sort()).toEqual([...WORDLE_ANSWERS]);
    expect(WORDLE_ANSWERS.every((w) => guessVocabulary().has(w))).toBe(true);
  });

  it('reads words, spaced letters and "guess <word>"', () => {
    expect(readGuess('s h i r e')).toBe('shire');
    expect(readGuess('crane')).toBe('crane');
    expect(readGuess('guess crane')).toBe('crane');
    expect(readGuess('c r a n')).toBeNull();
    expect(readGuess('two words')).toBeNull();
  });

  it('splits the default pool 140 test / 419 train with no shared answer; tiny pools repeat answers under distinct ids', () => {
    const c = createWordleCatalog();
    const answersOf = (ids: readonly number[]) => new Set(ids.map((i) => wordleAnswer(wordleSettings(), i)));
    expect(c.indices('test')).toHaveLength(140);
    expect(c.indices('train')).toHaveLength(419);
    const test = answersOf(c.indices('test'));
    expect([...answersOf(c.indices('train'))].some((w) => test.has(w))).toBe(false);
    const tiny = createWordleCatalog({ settings: { answers: ['bound', 'shrub', 'hound', 'round', 'sound', 'found'] } });
    expect(tiny.indices('test')).toHaveLength(68); // ids 0..203 whose pool position is 0 or 4
    expect(new Set(tiny.indices('test').map((i) => i % 6))).toEqual(new Set([0, 4]));
  });

  it('names bad settings', () => {
    expect(() => wordleSettings({ settings: { answers: ['zzzzz'] } })).toThrow(InvalidConfigError);
    expect(() => wordleSettings({ settings: { answers: ['zzzzz'] } })).toThrow(/env\.settings\.answers\.0/);
    expect(() => wordleSettings({ settings: { answers: ['toolong'] } })).toThrow(/env\.settings\.answers\.0/);
    expect(() => wordleSettings({ settings: { maxGuesses: 0 } })).toThrow(/env\.settings\.maxGuesses/);
  });
});

describe('WordleEnvironment', () => {
  it('marks a guess, keeps the board, and pays 1 for the answer', () => {
    const env = new WordleEnvironment();
    env.reset(0); // about
    const first = env.step('Thought:\nA common opener.\n\nAction:\nc r a n e');
    expect(first).toMatchObject({ reward: 0, done: false, success: false });
    expect(first.observation.text).toContain('crane -> b b y b b');
    expect(first.observation.text).toContain('Guess 1: c r a n e | b b y b b');
    expect(first.observation.text).toContain('Guesses left: 5.');
    const win = env.step('about');
    expect(win).toMatchObject({ reward: 1, done: true, success: true });
    expect(win.observation.text).toContain('You found the word in 2 guesses.');
  });

  it('does not count invalid words as guesses', () => {
    const env = new WordleEnvironment({ settings: { maxGuesses: 2 } });
    env.reset(0);
    const notWord = env.step('xyzzy');
    expect(notWord.info).toMatchObject({ invalid: true, error: 'not-a-word' });
    expect(notWord.observation.text).toContain('"xyzzy" is not in the word list. This does not count as a guess.');
    const short = env.step('c r a n');
    expect(short.info).toMatchObject({ invalid: true, error: 'not-five-letters' });
    expect(short.observation.text).toContain('Guesses left: 2.');
    env.step('crane');
    const lost = env.step('slate');
    expect(lost).toMatchObject({ done: true, reward: 0, success: false });
    expect(lost.observation.text).toContain('No guesses left. The word was about.');
  });

  it('ends after maxTurns turns even if every reply is invalid', () => {
    const env = new WordleEnvironment({ settings: { maxTurns: 3 } });
    env.reset(0);
    expect(env.step('xyzzy').done).toBe(false);
    expect(env.step('xyzzy').done).toBe(false);
    expect(env.step('xyzzy')).toMatchObject({ done: true, reward: 0 });
  });

  it('lists at most `candidates` pool words, all consistent with the marks, and never chosen by the answer', () => {
    const a = new WordleEnvironment();
    const b = new WordleEnvironment();
    const listA = a.reset(0).availableActions;
    const listB = b.reset(5).availableActions;
    expect(listA).toHaveLength(20);
    expect(listA).toEqual(listB); // the first list does not depend on the answer
    const after = a.step('crane');
    for (const word of after.observation.availableActions ?? []) expect(isConsistent(word, [{ guess: 'crane', marks: 'bbybb' }])).toBe(true);
  });

  it('solves every test item within 6 guesses by always playing the first listed candidate', () => {
    const env = new WordleEnvironment();
    let worst = 0;
    for (const index of createWordleCatalog().indices('test')) {
      let obs = env.reset(index);
      let result = null;
      for (let guess = 0; guess < 6; guess++) {
        result = env.step(obs.availableActions?.[0] ?? '');
        obs = result.observation;
        if (result.done) {
          worst = Math.max(worst, guess + 1);
          break;
        }
      }
      expect(result?.success).toBe(true);
    }
    expect(worst).toBeLessThanOrEqual(6);
  });

  it('never throws on random or malformed replies (parser fuzz)', () => {
    fuzzEnvironment(new WordleEnvironment(), 8);
  });
});
