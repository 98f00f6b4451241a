import { afterAll, describe, expect, it } from 'vitest';
import { InvalidConfigError } from '../../src/core/errors.js';
import { sqlBank } from '../../src/envs/sql/bank.js';
import { createSqlCatalog } from '../../src/envs/sql/catalog.js';
import { sqlCorpus } from '../../src/envs/sql/corpus.js';
import { candidateQueries, SqlEnvironment } from '../../src/envs/sql/env.js';
import { resultsEquivalent } from '../../src/envs/sql/equivalence.js';

const env = new SqlEnvironment();
afterAll(() => env.close());

describe('SQL environment', () => {
  it('has disjoint train and test splits that cover the bank, with a family as category', () => {
    const catalog = createSqlCatalog();
    const test = catalog.indices('test');
    const train = catalog.indices('train');
    expect(test.length).toBe(sqlBank().testSize);
    expect(test.length).toBeGreaterThanOrEqual(300);
    expect(train.length).toBe(sqlBank().items.length - test.length);
    const testSet = new Set(test);
    expect(train.some((i) => testSet.has(i))).toBe(false);
    const questions = new Set(test.map((i) => sqlBank().items[i]?.question));
    expect(train.some((i) => questions.has(sqlBank().items[i]?.question))).toBe(false);
    expect(new Set(test.map((i) => catalog.category?.(i)))).toEqual(new Set(['count', 'aggregate', 'filter', 'group_by', 'top_k', 'join']));
  });

  it('narrows the catalog by database and family, and names a bad setting', () => {
    const catalog = createSqlCatalog({ settings: { databases: ['cars'], families: ['aggregate'] } });
    const items = catalog.indices('train').map((i) => sqlBank().items[i]);
    expect(items.length).toBeGreaterThan(20);
    expect(items.every((it) => it?.db === 'cars' && it.family === 'aggregate')).toBe(true);
    expect(() => createSqlCatalog({ settings: { databases: ['chinook'] } })).toThrow(InvalidConfigError);
    expect(() => new SqlEnvironment({ settings: { candidates: 99 } })).toThrow(/env\.settings\.candidates/);
  });

  it('lists each test question testRepeats times as ids i + k·bank size, which reset reads as question i', () => {
    const settings = { databases: ['cars'], families: ['aggregate'], testRepeats: 3 };
    const once = createSqlCatalog({ settings: { databases: ['cars'], families: ['aggregate'] } });
    const thrice = createSqlCatalog({ settings });
    const n = sqlBank().items.length;
    const base = once.indices('test');
    expect(thrice.indices('test')).toEqual([...base, ...base.map((i) => i + n), ...base.map((i) => i + 2 * n)]);
    expect(thrice.indices('train')).toEqual(once.indices('train'));
    const first = base[0] as number;
    expect(thrice.category?.(first + 2 * n)).toBe('aggregate');
    const repeated = new SqlEnvironment({ settings });
    const plain = new SqlEnvironment({ settings: { databases: ['cars'], families: ['aggregate'] } });
    expect(repeated.reset(first + 2 * n)).toEqual(plain.reset(first));
    expect(() => repeated.reset(3 * n)).toThrow(`reset: task index must be an integer in [0, ${3 * n}), got ${3 * n}`);
    expect(() => plain.reset(n)).toThrow(`reset: task index must be an integer in [0, ${n}), got ${n}`);
    repeated.close();
    plain.close();
  });

  it('shows the schema and the question first, then the candidates', () => {
    const obs = env.reset(0);
    const item = sqlBank().items[0];
    expect(obs.text.startsWith(`Database: ${item?.db}\nCREATE TABLE`)).toBe(true);
    expect(obs.text).toContain(`Question: ${item?.question}`);
    expect(obs.availableActions).toContain(`submit ${item?.sql}`);
    expect(obs.availableActions?.length).toBe(4);
  });

  it('gives the same question and candidates for the same id, in any environment', () => {
    const other = new SqlEnvironment();
    for (const i of [5, 77, 1200]) expect(other.reset(i)).toEqual(env.reset(i));
    other.close();
  });

  it('lists distractors whose results all differ from the gold', () => {
    const bank = sqlBank();
    for (const i of [0, 1, 2, 3, 4, 600, 900]) {
      const item = bank.items[i]!;
      const cands = candidateQueries(bank, item, 4).filter((q) => q !== item.sql);
      for (const q of cands) expect(resultsEquivalent(bank.query(item.db, q), item.gold, { ordered: item.ordered })).toBe(false);
    }
  });

  it('solves every test item by submitting its gold query (reward 1)', async () => {
    const bank = sqlBank();
    for (const i of createSqlCatalog().indices('test')) {
      env.reset(i);
      const result = await env.step(`Thought: the gold query.\nAction: submit ${bank.items[i]?.sql}`);
      expect(result.reward, `sql_${i}`).toBe(1);
      expect(result.done && result.success).toBe(true);
    }
  });

  it('accepts an equivalent query written differently, and rejects a near miss', async () => {
    const bank = sqlBank();
    const i = bank.items.findIndex((it) => it.sql === "SELECT COUNT(*) FROM cars WHERE origin = 'Japan'");
    expect(i).toBeGreaterThanOrEqual(0);
    env.reset(i);
    expect((await env.step("submit SELECT SUM(CASE WHEN origin = 'Japan' THEN 1 ELSE 0 END) AS japanese FROM cars")).reward).toBe(1);
    env.reset(i);
    const wrong = await env.step("submit SELECT COUNT(*) FROM cars WHERE origin = 'Europe'");
    expect(wrong).toMatchObject({ reward: 0, done: true, success: false });
    expect(wrong.observation.text).toContain('incorrect');
  });

  it('runs exploration queries without ending the episode, and ends it after maxTurns', async () => {
    const local = new SqlEnvironment({ settings: { maxTurns: 2, maxRows: 3 } });
    local.reset(0);
    const first = await local.step('SELECT 1 AS one UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4');
    expect(first).toMatchObject({ reward: 0, done: false });
    expect(first.observation.text).toContain('Result (4 rows):\n| one |\n| 1 |\n| 2 |\n| 3 |\n(1 more rows not shown)');
    const second = await local.step('SELECT * FROM no_such_table');
    expect(second).toMatchObject({ done: true, reward: 0, info: { invalid: true, error: 'sql-error' } });
    expect(second.observation.text).toContain('Error: no such table: no_such_table');
    local.close();
  });

  it("ends on the first query that runs in 'first-query' mode, and lists bare queries", async () => {
    const local = new SqlEnvironment({ settings: { submit: 'first-query' } });
    const obs = local.reset(0);
    expect(obs.availableActions?.every((a) => /^(SELECT|WITH)/.test(a))).toBe(true);
    expect((await local.step('DROP TABLE cars')).done).toBe(false);
    const answer = await local.step(`Action: ${sqlBank().items[0]?.sql}`);
    expect(answer).toMatchObject({ reward: 1, done: true });
    local.close();
  });

  it('renders the question, the gold and the turn', async () => {
    env.reset(1);
    await env.step('SELECT 1');
    const text = env.render();
    expect(text).toContain(`Gold${sqlBank().items[1]?.ordered ? ' (ordered)' : ''}: ${sqlBank().items[1]?.sql}`);
    expect(text).toContain('Turn 1/10');
  });

  it('builds a deterministic tokenizer corpus', () => {
    const a = sqlCorpus(undefined, 20, 4);
    expect(a).toEqual(sqlCorpus(undefined, 20, 4));
    expect(a.some((t) => t.startsWith('Thought:\nI will run this query.\n\nAction:\nsubmit SELECT'))).toBe(true);
  });
});
