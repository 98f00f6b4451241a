import { describe, expect, it } from 'vitest';
import { Rng } from '../../../src/core/rng.js';
import { toolCallText } from '../../../src/envs/tools.js';
import { guessVocabulary } from '../../../src/envs/wordle/vocabulary.js';
import { randomWordleAction, WORDLE_GREEN_BONUS, WordleEnvironment } from '../../../src/envs/wordle/env.js';
import { wordleSpec } from '../../../src/envs/wordle/index.js';

describe('Wordle free mode (candidates: 0)', () => {
  it('lists no actions and takes any vocabulary word, as text or as a guess call', () => {
    const env = new WordleEnvironment({ settings: { candidates: 0 } });
    const first = env.reset(0); // answer 'about'
    expect(first.availableActions).toEqual([]);
    expect(first.text).not.toMatch(/Available actions/);
    const typed = env.step('Thought: a common opener.\nAction: crane');
    expect(typed.info).toMatchObject({ invalid: false, action: 'crane', marks: 'bbybb' });
    const called = env.step(toolCallText({ name: 'guess', arguments: { word: 'About' } }));
    expect(called).toMatchObject({ reward: 1, done: true, success: true });
    expect(env.tools().map((t) => t.name)).toEqual(['guess']);
  });

  it('answers a malformed call or a non-word without using a guess', () => {
    const env = new WordleEnvironment({ settings: { candidates: 0 } });
    env.reset(0);
    expect(env.step('{"name":"guess","arguments":{"w":"crane"}}').observation.text).toMatch(/The tool "guess" needs the argument "word"/);
    expect(env.step('{"name":"spell","arguments":{}}').observation.text).toMatch(/There is no tool "spell"; the tools are "guess"/);
    expect(env.step(toolCallText({ name: 'guess', arguments: { word: 'xqzzv' } })).observation.text).toMatch(/not in the word list/);
    expect(env.step('crane').info).toMatchObject({ guesses: 1 });
  });

  it('random vocabulary guesses almost never win (the random baseline of the free mode)', () => {
    const env = new WordleEnvironment({ settings: { candidates: 0 } });
    const rng = Rng.fromSeed(11);
    let wins = 0;
    for (let game = 0; game < 200; game++) {
      const first = env.reset(game);
      let done = false;
      while (!done) {
        const action = randomWordleAction({ observation: first, first, rng, form: game % 2 === 0 ? 'text' : 'tools' });
        const result = env.step(action);
        expect(result.info?.invalid).toBe(false);
        done = result.done;
        if (result.success) wins++;
      }
    }
    // 6 guesses among 12.5k words: about 0.05 % of games.
    expect(wins).toBeLessThanOrEqual(2);
    expect(guessVocabulary().size).toBeGreaterThan(10_000);
  });

  it('pays a shaped reward for new greens with turnRewards, and only then', () => {
    const shaped = new WordleEnvironment({ settings: { candidates: 0, turnRewards: true } });
    shaped.reset(0); // about
    const step = shaped.step('abide'); // a, b green
    expect(step.reward).toBeCloseTo((2 * WORDLE_GREEN_BONUS) / 5, 12);
    expect(shaped.step('abbey').reward).toBe(0); // no new green
    expect(shaped.step('about').reward).toBeCloseTo(1 + (3 * WORDLE_GREEN_BONUS) / 5, 12);
    const plain = new WordleEnvironment({ settings: { candidates: 0 } });
    plain.reset(0);
    expect(plain.step('abide').reward).toBe(0);
    expect(wordleSpec.paysTurnRewards?.({ settings: { turnRewards: true } })).toBe(true);
    expect(wordleSpec.paysTurnRewards?.({})).toBe(false);
  });
});
