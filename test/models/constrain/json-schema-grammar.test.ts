/**
 * JSON schemas as byte grammars: the texts a schema admits are taken whole and every prefix of them
 * stays alive; texts it does not admit die at the byte at fault (or never complete); random walks
 * through the grammar always end in JSON that an independent validator (Ajv) accepts.
 */
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { Rng } from '../../../src/core/rng.js';
import { END, feed, type GrammarState } from '../../../src/models/constrain/grammar-state.js';
import { compileSchema, SchemaGrammarError } from '../../../src/models/constrain/json-schema-grammar.js';

const utf8 = new TextEncoder();

/** 'complete' when `text` is a whole sentence, 'prefix' when it may still become one, 'dead' otherwise. */
function judge(schema: unknown, text: string): 'complete' | 'prefix' | 'dead' {
  const state = feed(compileSchema(schema).start(END), utf8.encode(text));
  if (state === null) return 'dead';
  return state.complete ? 'complete' : 'prefix';
}

const guess = {
  type: 'object',
  properties: { word: { type: 'string', minLength: 1, maxLength: 5 }, count: { type: 'integer' }, mode: { enum: ['hard', 'easy'] }, tags: { type: 'array', items: { type: 'string' }, maxItems: 2 } },
  required: ['word'],
};

describe('a JSON schema as a byte grammar', () => {
  it.each([
    [guess, '{"word": "crane"}'],
    [guess, '{"count":-12,"word":"é","mode":"easy"}'],
    [guess, '{ "tags" : [ "a" , "b" ] ,\n  "word" : "x" }'],
    [{ type: 'number' }, '-0.5e+10'],
    [{ type: 'number' }, '0'],
    [{ type: ['string', 'null'] }, 'null'],
    [{ type: 'string' }, '"a\\"b\\\\c\\u00e9\\n"'],
    [{ type: 'string' }, '"😀 日本"'],
    [{ type: 'boolean' }, 'false'],
    [{ const: { a: [1, 2] } }, '{"a":[1,2]}'],
    [{ anyOf: [{ type: 'integer' }, { type: 'array', items: { type: 'integer' } }] }, '[1,2,3]'],
    [{}, '{"free": [true, null, {"x": "y"}], "n": 1.5}'],
    [{ type: 'object' }, '{"any": {"deep": [1]}}'],
    [{ type: 'object', properties: { a: { type: 'integer' } }, additionalProperties: { type: 'string' } }, '{"a": 1, "b": "c"}'],
    [{ $defs: { node: { type: 'object', properties: { next: { anyOf: [{ $ref: '#/$defs/node' }, { type: 'null' }] } }, required: ['next'] } }, $ref: '#/$defs/node' }, '{"next": {"next": {"next": null}}}'],
  ])('takes %j: %s, and every prefix of it stays alive', (schema, text) => {
    expect(judge(schema, text)).toBe('complete');
    const bytes = utf8.encode(text);
    let state: GrammarState | null = compileSchema(schema).start(END);
    for (let i = 0; i < bytes.length; i++) {
      state = state?.step(bytes[i] as number) ?? null;
      expect(state, `dead after byte ${i} of ${text}`).not.toBeNull();
    }
  });

  it.each([
    [guess, '{"word": "cranes"}', 'dead'], // longer than maxLength
    [guess, '{"word": ""}', 'dead'], // shorter than minLength
    [guess, '{"count": 1}', 'dead'], // required "word" missing: cannot close
    [guess, '{"word": "a", "word": "b"}', 'dead'], // a key twice
    [guess, '{"word": "a", "other": 1}', 'dead'], // undeclared key
    [guess, '{"word": "a",}', 'dead'], // trailing comma
    [guess, '{"mode": "medium"}', 'dead'],
    [guess, '{"count": 1.5}', 'dead'], // not an integer
    [guess, '{"tags": ["a", "b", "c"]}', 'dead'], // more than maxItems
    [guess, '{"word": 5}', 'dead'],
    [{ type: 'number' }, '01', 'dead'],
    [{ type: 'number' }, '1.', 'prefix'],
    [{ type: 'number' }, '-', 'prefix'],
    [{ type: 'string' }, '"a\\x"', 'dead'], // not an escape
    [{ type: 'string' }, '"a\nb"', 'dead'], // raw control character
    [{ type: 'string' }, '"\u00e9', 'prefix'],
    [{ type: 'object', properties: { a: {} } }, '{"a": 1}   \n   \n   ', 'dead'], // unbounded whitespace
  ])('refuses %j: %s (%s)', (schema, text, verdict) => {
    expect(judge(schema, text)).toBe(verdict);
  });

  it('refuses broken UTF-8 in a string: a lone continuation byte, a lead byte without its continuation', () => {
    const open = compileSchema({ type: 'string' }).start(END);
    expect(feed(open, Uint8Array.from([0x22, 0x80]))).toBeNull();
    expect(feed(open, Uint8Array.from([0x22, 0xe6, 0x22]))).toBeNull();
    expect(feed(open, Uint8Array.from([0x22, 0xe6, 0x97, 0xa5, 0x22]))?.complete).toBe(true); // 日
  });

  it('counts characters, not bytes, for a string length (an escape is one character)', () => {
    const schema = { type: 'string', maxLength: 2 };
    expect(judge(schema, '"日本"')).toBe('complete');
    expect(judge(schema, '"\\n\\u0041"')).toBe('complete');
    expect(judge(schema, '"日本語"')).toBe('dead');
  });

  it('names where a schema is not one', () => {
    const nested = (depth: number): unknown => (depth === 0 ? { type: 'string' } : { type: 'array', items: nested(depth - 1) });
    const bad: [unknown, string | null][] = [
      [{ type: 'object', properties: { a: { type: 'strin' } } }, '/properties/a/type'],
      [{ type: 'object', properties: { a: 3 } }, '/properties/a'],
      [{ type: 'array', maxItems: -1 }, '/maxItems'],
      [{ enum: [] }, '/enum'],
      [{ $ref: 'http://example.com/s.json' }, '/$ref'],
      [{ $ref: '#/$defs/missing' }, '/$ref'],
      [{ type: 'string', minLength: 3, maxLength: 2 }, ''],
      // Past the limits a request's schema is held to.
      [{ enum: Array.from({ length: 1025 }, (_, i) => i) }, '/enum'],
      [{ anyOf: Array.from({ length: 65 }, () => ({ type: 'string' })) }, '/anyOf'],
      [{ type: 'object', properties: Object.fromEntries(Array.from({ length: 257 }, (_, i) => [`k${i}`, {}])) }, '/properties'],
      [nested(40), '/items'.repeat(32)],
      [{ type: 'object', properties: Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`k${i}`, { type: 'array', items: { type: 'array', items: { anyOf: Array.from({ length: 20 }, () => ({})) } } }])) }, null],
    ];
    for (const [schema, path] of bad) {
      let caught: unknown;
      try {
        compileSchema(schema);
      } catch (error) {
        caught = error;
      }
      expect(caught, JSON.stringify(schema).slice(0, 80)).toBeInstanceOf(SchemaGrammarError);
      if (path !== null) expect((caught as SchemaGrammarError).path).toBe(path);
      else expect((caught as SchemaGrammarError).detail).toMatch(/more than 4096 schemas/);
    }
  });
});

describe('random walks through a schema grammar', () => {
  const ajv = new Ajv({ strict: false });
  const schemas = [
    guess,
    { type: 'object', properties: { q: { type: 'string', maxLength: 8 }, k: { type: 'integer' }, x: { type: 'number' }, ok: { type: 'boolean' }, n: { type: 'null' } }, required: ['q', 'k', 'x'] },
    { type: 'object', properties: { items: { type: 'array', items: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] }, minItems: 1, maxItems: 3 } }, required: ['items'] },
    { type: 'object', properties: { v: { anyOf: [{ type: 'string', maxLength: 3 }, { type: 'integer' }, { enum: [true, null] }] } }, required: ['v'] },
  ];

  it.each(schemas.map((s, i) => [i, s]))('schema %i: every walk that completes is JSON the schema validates (Ajv)', (_, schema) => {
    const validate = ajv.compile(schema as object);
    const rng = Rng.fromSeed(5);
    let completed = 0;
    for (let walk = 0; walk < 200; walk++) {
      let state: GrammarState | null = compileSchema(schema).start(END);
      const bytes: number[] = [];
      // A byte drawn among those the state takes (ASCII plus two UTF-8 lead bytes and continuations);
      // a short string or number is favoured by ending whenever the text is complete.
      while (state !== null && !state.complete && bytes.length < 400) {
        const options = [...Array(128).keys(), 0xc3, 0xe6, 0x97, 0xa9].filter((b) => (state as GrammarState).step(b) !== null);
        expect(options.length, `stuck after ${new TextDecoder().decode(Uint8Array.from(bytes))}`).toBeGreaterThan(0);
        const b = options[rng.int(options.length)] as number;
        bytes.push(b);
        state = state.step(b);
      }
      if (state?.complete !== true) continue;
      completed++;
      const text = new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(bytes));
      const value = JSON.parse(text);
      expect(validate(value), `${text}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
    expect(completed).toBeGreaterThan(20);
  });
});

describe('UTF-8 inside strings', () => {
  it('takes exactly the well-formed sequences (against TextDecoder with fatal errors)', () => {
    const open = compileSchema({ type: 'string' }).start(END);
    const rng = Rng.fromSeed(9);
    const candidates = [0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xe1, 0xed, 0xee, 0xef, 0xf0, 0xf1, 0xf4, 0xf5, 0xff];
    let valid = 0;
    for (let k = 0; k < 4000; k++) {
      const bytes = Array.from({ length: 1 + rng.int(4) }, () => candidates[rng.int(candidates.length)] as number);
      let wellFormed = true;
      try {
        new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(bytes));
      } catch {
        wellFormed = false;
      }
      const closed = feed(open, Uint8Array.from([0x22, ...bytes, 0x22]));
      expect(closed?.complete === true, bytes.map((b) => b.toString(16)).join(' ')).toBe(wellFormed);
      if (wellFormed) valid++;
    }
    expect(valid).toBeGreaterThan(100);
  });
});
