import { afterAll, describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.js';
import { sqlBank } from '../../src/envs/sql/bank.js';
import { SqlEnvironment } from '../../src/envs/sql/env.js';
import { randomSqlAction } from '../../src/envs/sql/random-action.js';
import { toolCallText } from '../../src/envs/tools.js';

const env = new SqlEnvironment({ settings: { candidates: 0 } });
afterAll(() => env.close());

describe('SQL free mode with tools', () => {
  it('runs a query with run_query and ends the episode with submit_query, graded against the gold', async () => {
    const item = sqlBank().items[0]!;
    const first = env.reset(0);
    expect(first.availableActions).toBeUndefined();
    expect(env.tools().map((t) => t.name)).toEqual(['run_query', 'submit_query']);
    const explored = await env.step(toolCallText({ name: 'run_query', arguments: { sql: item.sql } }));
    expect(explored).toMatchObject({ done: false, reward: 0 });
    const submitted = await env.step(toolCallText({ name: 'submit_query', arguments: { sql: item.sql } }));
    expect(submitted).toMatchObject({ done: true, reward: 1, success: true });
    env.reset(0);
    expect((await env.step('{"name":"submit_query","arguments":{"query":"SELECT 1"}}')).observation.text).toMatch(/The tool "submit_query" needs the argument "sql"/);
    expect((await env.step(toolCallText({ name: 'submit_query', arguments: { sql: 'DROP TABLE cars' } }))).observation.text).toMatch(/Only a single read-only SELECT/);
  });

  it('random queries are read from the schema shown and run', async () => {
    const rng = Rng.fromSeed(4);
    for (let i = 0; i < 12; i++) {
      const first = env.reset(i);
      const action = randomSqlAction({ observation: first, first, rng, form: i % 2 === 0 ? 'text' : 'tools' });
      const result = await env.step(action);
      expect(result.info?.invalid, action).toBe(false);
      expect(result.done).toBe(true);
    }
  });
});
