/**
 * The vocabulary walk against a brute-force check of every token, and a token grammar's rules:
 * stop ids only where the sentence is complete, never an empty candidate list, refusal of an id it
 * did not allow.
 */
import { describe, expect, it } from 'vitest';
import { Rng } from '../../../src/core/rng.js';
import { END, feed, type GrammarState, literal } from '../../../src/models/constrain/grammar-state.js';
import { GrammarVocab } from '../../../src/models/constrain/grammar-vocab.js';
import { compileSchema } from '../../../src/models/constrain/json-schema-grammar.js';
import { TokenGrammar } from '../../../src/models/constrain/token-grammar.js';

const utf8 = new TextEncoder();

/** A vocabulary of JSON-ish pieces, with repeats (two ids, one text) and ids without bytes. */
function randomVocab(rng: Rng, size: number): (Uint8Array | null)[] {
  const alphabet = ['{', '}', '"', ':', ',', ' ', '\n', 'a', 'b', 'w', 'o', 'r', 'd', '1', '0', '-', '.', 'e', '[', ']', 'é', 'true', 'null', '\\', 'n', 'u'];
  return Array.from({ length: size }, () => {
    if (rng.next() < 0.05) return null;
    const n = 1 + rng.int(4);
    return utf8.encode(Array.from({ length: n }, () => alphabet[rng.int(alphabet.length)]).join(''));
  });
}

function bruteForce(tokens: readonly (Uint8Array | null)[], state: GrammarState): number[] {
  return tokens.flatMap((t, id) => (t !== null && t.length > 0 && feed(state, t) !== null ? [id] : []));
}

describe('GrammarVocab.allowed', () => {
  it('equals checking every token one by one, at every state of random texts', () => {
    const rng = Rng.fromSeed(3);
    const tokens = randomVocab(rng, 3000);
    const vocab = GrammarVocab.build(tokens);
    const schema = compileSchema({ type: 'object', properties: { word: { type: 'string' }, n: { type: 'number' }, list: { type: 'array', items: { type: 'integer' } } }, required: ['word'] });
    let checked = 0;
    for (let walk = 0; walk < 20; walk++) {
      let state: GrammarState | null = schema.start(END);
      for (let step = 0; step < 12 && state !== null && !state.complete; step++) {
        const allowed = Array.from(vocab.allowed(state));
        expect(allowed).toEqual(bruteForce(tokens, state));
        checked++;
        if (allowed.length === 0) break;
        state = feed(state, tokens[allowed[rng.int(allowed.length)] as number] as Uint8Array);
      }
    }
    expect(checked).toBeGreaterThan(100);
  });
});

describe('TokenGrammar', () => {
  const tokens = ['{', '}', '{}', 'x', '"'].map((t) => utf8.encode(t));
  const STOP = 5;
  const vocab = GrammarVocab.build([...tokens, null]);

  it('allows a stop id only where the text is complete, and advances by the bytes of the id chosen', () => {
    const g = new TokenGrammar(vocab, literal('{}', END), [STOP]);
    expect(Array.from(g.allowed())).toEqual([0, 2]);
    g.accept(0);
    expect(Array.from(g.allowed())).toEqual([1]);
    g.accept(1);
    expect(g.complete).toBe(true);
    expect(Array.from(g.allowed())).toEqual([STOP]);
    g.accept(STOP);
    expect(Array.from(g.allowed())).toEqual([STOP]);
  });

  it('refuses an id the grammar did not allow, naming it', () => {
    const g = new TokenGrammar(vocab, literal('{}', END), [STOP]);
    expect(() => g.accept(3)).toThrow(/id 3 was not allowed/);
  });

  it('ends the reply (stop ids only) where no token can continue, and says so', () => {
    // The grammar wants "{}y" but no token writes "y": after "{}" nothing continues.
    const g = new TokenGrammar(vocab, literal('{}y', END), [STOP]);
    g.accept(2);
    expect(Array.from(g.allowed())).toEqual([STOP]);
    expect(g.deadEnd).toBe(true);
  });
});
