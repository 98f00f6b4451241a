import { describe, expect, it } from 'vitest';
import { Rng } from '../../../src/core/rng.js';
import { createDeepSearchCatalog } from '../../../src/envs/deepsearch/catalog.js';
import { DeepSearchEnvironment } from '../../../src/envs/deepsearch/env.js';
import { exactMatch, INVALID_ACTION_MESSAGE, normalizeAnswer, parseSearchAction } from '../../../src/envs/deepsearch/protocol.js';
import { searchQuestions } from '../../../src/envs/deepsearch/questions.js';
import { formatInformation, searchCorpus } from '../../../src/envs/deepsearch/search-index.js';
import { solveSearchQuestion } from '../../../src/envs/deepsearch/solver.js';

describe('deep search protocol', () => {
  it('takes the first search/answer tag as the action and the last <answer> as the answer', () => {
    expect(parseSearchAction('<think>hm</think><search> capital of France </search><answer>x</answer>')).toEqual({ kind: 'search', query: 'capital of France' });
    expect(parseSearchAction('Action: <answer>Lyon</answer> no, <answer>Paris</answer>')).toEqual({ kind: 'answer', answer: 'Paris' });
    expect(parseSearchAction('<answer>\nParis\n</answer>')).toEqual({ kind: 'answer', answer: 'Paris' });
    for (const bad of ['Paris', '<search></search>', '<search>France</answer>', '<answer>  </answer>', '']) expect(parseSearchAction(bad)).toEqual({ kind: 'invalid' });
  });

  it('grades by exact match after lower-case, punctuation, article and whitespace normalisation', () => {
    expect(normalizeAnswer('The  Washington, D.C.!')).toBe('washington dc');
    expect(exactMatch(' the PARIS. ', ['Paris'])).toBe(true);
    expect(exactMatch('an Oceania', ['Oceania'])).toBe(true);
    expect(exactMatch('Paris France', ['Paris'])).toBe(false);
    expect(exactMatch("St. George's", ["St George's"])).toBe(true);
  });

  it('formats the top documents as Search-R1 does', () => {
    const hits = searchCorpus('France', 3);
    expect(hits.length).toBeGreaterThanOrEqual(1);
    expect(hits.length).toBeLessThanOrEqual(3);
    expect(hits[0]?.doc.title).toBe('France');
    expect(formatInformation(hits.slice(0, 1))).toBe(`<information>Doc 1(Title: France) ${hits[0]?.doc.text}\n</information>`);
    expect(hits[0]?.doc.text).toContain('Its capital is Paris.');
  });
});

describe('deep search environment', () => {
  it('has disjoint splits and a template category per task', () => {
    const catalog = createDeepSearchCatalog();
    const test = catalog.indices('test');
    expect(test.length).toBe(500);
    const testQuestions = new Set(test.map((i) => searchQuestions().items[i]?.question));
    expect(catalog.indices('train').some((i) => testQuestions.has(searchQuestions().items[i]?.question))).toBe(false);
    expect(catalog.category?.(test[0] as number)).toMatch(/^hops[12]\//);
    expect(createDeepSearchCatalog({ settings: { templates: ['hops1/country_capital'] } }).indices('train').every((i) => searchQuestions().items[i]?.template === 'hops1/country_capital')).toBe(true);
    expect(() => createDeepSearchCatalog({ settings: { topK: 0 } })).toThrow(/env\.settings\.topK/);
  });

  it('lists each test question testRepeats times as ids n + k·bank size, which reset reads as question n', () => {
    const settings = { templates: ['hops1/country_capital'], testRepeats: 3 };
    const once = createDeepSearchCatalog({ settings: { templates: ['hops1/country_capital'] } });
    const thrice = createDeepSearchCatalog({ settings });
    const n = searchQuestions().items.length;
    const base = once.indices('test');
    expect(thrice.indices('test')).toEqual([...base, ...base.map((i) => i + n), ...base.map((i) => i + 2 * n)]);
    expect(thrice.indices('train')).toEqual(once.indices('train'));
    const first = base[0] as number;
    expect(thrice.category?.(first + 2 * n)).toBe('hops1/country_capital');
    const env = new DeepSearchEnvironment({ settings });
    const plain = new DeepSearchEnvironment();
    expect(env.reset(first + 2 * n)).toEqual(plain.reset(first));
    expect(() => env.reset(3 * n)).toThrow(`reset: task index must be an integer in [0, ${3 * n}), got ${3 * n}`);
    expect(() => plain.reset(n)).toThrow(`reset: task index must be an integer in [0, ${n}), got ${n}`);
  });

  it('solves every test item with a scripted solver that reads only the observations', async () => {
    const env = new DeepSearchEnvironment();
    const failed: string[] = [];
    for (const i of createDeepSearchCatalog().indices('test')) {
      const reward = await solveSearchQuestion(env, env.reset(i).text);
      if (reward !== 1) failed.push(`deepsearch_${i}`);
    }
    expect(failed).toEqual([]);
  });

  it('answers a wrong answer and an untagged reply without ending the episode, and ends on a correct one', () => {
    const env = new DeepSearchEnvironment();
    const index = searchQuestions().items.findIndex((q) => q.question === 'What is the capital of France?');
    env.reset(index);
    expect(env.step('Paris')).toMatchObject({ reward: 0, done: false, info: { invalid: true } });
    expect(env.step('Paris').observation.text.startsWith(INVALID_ACTION_MESSAGE)).toBe(true);
    const wrong = env.step('<answer>Lyon</answer>');
    expect(wrong).toMatchObject({ reward: 0, done: false });
    expect(wrong.observation.text.startsWith('Sorry, your answer is incorrect. Please try again.')).toBe(true);
    expect(env.step('<think>ok</think><answer> the paris </answer>')).toMatchObject({ reward: 1, done: true, success: true });
    expect(env.render()).toContain('answer "Lyon" (incorrect)');
  });

  it('offers candidate searches from the question and answers from the last documents', () => {
    const env = new DeepSearchEnvironment();
    const index = searchQuestions().items.findIndex((q) => q.question === 'What is the capital of France?');
    expect(env.reset(index).availableActions).toEqual(['<search>France</search>']);
    const after = env.step('<search>France</search>');
    expect(after.observation.availableActions).toContain('<answer>Paris</answer>');
    expect(after.observation.availableActions?.[0]).not.toBe('<search>France</search>'); // already searched
  });

  it('ends after maxTurns, and is deterministic per task id', () => {
    const env = new DeepSearchEnvironment({ settings: { maxTurns: 2 } });
    env.reset(7);
    env.step('<search>Spain</search>');
    expect(env.step('<search>Spain</search>')).toMatchObject({ done: true, reward: 0, info: { truncated: true } });
    const a = new DeepSearchEnvironment();
    const b = new DeepSearchEnvironment();
    for (const i of [0, 5, 999]) {
      expect(a.reset(i)).toEqual(b.reset(i));
      expect(a.step('<search>Japan</search>')).toEqual(b.step('<search>Japan</search>'));
    }
  });

  it('never throws on random text (fuzz)', () => {
    const env = new DeepSearchEnvironment({ settings: { maxTurns: 100 } });
    const rng = Rng.fromSeed(9);
    const pieces = ['<search>', '</search>', '<answer>', '</answer>', '<think>', 'Action:', 'France', '\n', ' ', '\u0000', '😀'];
    env.reset(1);
    for (let i = 0; i < 2000; i++) {
      let text = '';
      for (let k = rng.int(8); k > 0; k--) text += rng.next() < 0.6 ? rng.pick(pieces) : String.fromCharCode(rng.int(0xffff));
      const result = env.step(text);
      expect(result.observation.text.length).toBeGreaterThan(0);
      if (result.done) env.reset(rng.int(100));
    }
  });
});
