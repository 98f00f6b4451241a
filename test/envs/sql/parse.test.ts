import { describe, expect, it } from 'vitest';
import { Rng } from '../../../src/core/rng.js';
import { MAX_SQL_CHARS, parseSqlAction } from '../../../src/envs/sql/parse.js';

describe('SQL action parser', () => {
  it('takes everything after Action:, across lines, and drops trailing semicolons', () => {
    expect(parseSqlAction('Thought: count\nAction:\nSELECT COUNT(*)\nFROM cars;')).toEqual({ ok: true, sql: 'SELECT COUNT(*)\nFROM cars', submit: false });
  });

  it('accepts a bare query and a submit prefix in any case', () => {
    expect(parseSqlAction('select 1')).toEqual({ ok: true, sql: 'select 1', submit: false });
    expect(parseSqlAction('SUBMIT: SELECT 1 ;;')).toEqual({ ok: true, sql: 'SELECT 1', submit: true });
  });

  it('accepts a fenced sql block, alone, after Action: or after submit', () => {
    expect(parseSqlAction('Here you go:\n```sql\nSELECT name FROM cars\n```\nDone.')).toEqual({ ok: true, sql: 'SELECT name FROM cars', submit: false });
    expect(parseSqlAction('Action: ```\nWITH t AS (SELECT 1) SELECT * FROM t\n```')).toEqual({ ok: true, sql: 'WITH t AS (SELECT 1) SELECT * FROM t', submit: false });
    expect(parseSqlAction('Action: submit ```sql\nSELECT 2\n```')).toEqual({ ok: true, sql: 'SELECT 2', submit: true });
  });

  it('refuses statements that do not start with SELECT or WITH, after comments', () => {
    for (const text of ['DELETE FROM cars', 'Action: DROP TABLE cars', "ATTACH '/etc/passwd' AS x", 'PRAGMA query_only = 0', 'submit INSERT INTO cars VALUES (1)', '-- hi\nUPDATE cars SET year = 1']) {
      const parsed = parseSqlAction(text);
      expect(parsed.ok).toBe(false);
      if (!parsed.ok) expect(parsed.reason).toBe('not-select');
    }
    expect(parseSqlAction('/* note */ -- x\nSELECT 1').ok).toBe(true);
  });

  it('answers two Action markers, a Thought alone, empty text and overlong text with messages', () => {
    const two = parseSqlAction('Action: SELECT 1\nAction: SELECT 2');
    expect(two.ok === false && two.reason).toBe('multiple-actions');
    const thought = parseSqlAction('Thought: only thinking');
    expect(thought.ok === false && thought.reason).toBe('missing-action');
    const empty = parseSqlAction('   ');
    expect(empty.ok === false && empty.reason).toBe('empty');
    const long = parseSqlAction(`SELECT ${'1,'.repeat(MAX_SQL_CHARS)}1`);
    expect(long.ok === false && long.reason).toBe('too-long');
  });

  it('never throws on random text (fuzz, 5000 inputs)', () => {
    const rng = Rng.fromSeed(3);
    const pieces = ['Action:', 'Thought:', '```', '```sql', 'submit', 'SELECT', 'WITH', ';', '\n', ' ', '--', '/*', '*/', "'", '"', '\u0000', '</s>', 'é', '😀', 'FROM cars'];
    for (let i = 0; i < 5000; i++) {
      let text = '';
      const n = rng.int(12);
      for (let k = 0; k < n; k++) text += rng.next() < 0.7 ? rng.pick(pieces) : String.fromCharCode(rng.int(0x3000));
      const parsed = parseSqlAction(text);
      expect(typeof parsed.ok).toBe('boolean');
      if (parsed.ok) expect(/^(?:\s|--[^\n]*|\/\*[\s\S]*?\*\/)*(select|with)\b/i.test(parsed.sql)).toBe(true);
      else expect(parsed.message.length).toBeGreaterThan(0);
    }
  });
});
