/**
 * The server's pure text helpers: per-token pieces (byte-level and Metaspace/byte-fallback
 * tokenizers, characters split across tokens), token bytes, stop strings, and the error wording
 * of request validation.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HfTokenizer } from '../../src/models/chat/index.js';
import { cutAtStop, findStop } from '../../src/serve/stop-strings.js';
import { pieceOffsets, type TokenDecoder, textPieces, tokenBytes } from '../../src/serve/token-text.js';
import { integer, parseBody } from '../../src/serve/validation.js';
import { ApiError } from '../../src/serve/openai-errors.js';

const FIXTURES = join(import.meta.dirname, '..', 'models', 'chat', 'fixtures');

function decoderOf(name: string): TokenDecoder & { encode(text: string): Int32Array } {
  const json = JSON.parse(readFileSync(join(FIXTURES, name, 'tokenizer.json'), 'utf8'));
  const tok = HfTokenizer.fromJSON(json);
  return {
    decode: (ids, keep) => tok.decode(ids, { skipSpecialTokens: !keep }),
    encode: (text) => tok.encode(text),
    tokenOf: (id) => tok.tokenOf(id),
    byteLevel: json.decoder?.type === 'ByteLevel',
    addedIds: new Set(tok.addedTokens.map((t) => t.id)),
  };
}

const TEXTS = ['Hello world, this is a test.', '  leading spaces and   runs', 'naïve café — 日本語 🙂 done', 'a\nb\n\nc\td', 'x'];

describe('textPieces', () => {
  for (const name of ['smollm2', 'qwen2.5', 'llama2', 'mistral']) {
    it(`cuts ${name} token ids into one piece per token that join to the decoded text`, () => {
      const tok = decoderOf(name);
      for (const text of TEXTS) {
        const ids = tok.encode(text);
        const pieces = textPieces(tok, ids, false);
        expect(pieces).toHaveLength(ids.length);
        expect(pieces.join('')).toBe(tok.decode(ids, false));
        // Each prefix of pieces is the decoded prefix of tokens whenever the latter is whole text.
        for (let k = 1; k < ids.length; k++) {
          const prefix = tok.decode(ids.subarray(0, k), false);
          if (!prefix.includes('\uFFFD')) expect(pieces.slice(0, k).join('')).toBe(prefix);
        }
      }
    });
  }

  it('gives a character split across byte-level tokens to the token that completes it, and its raw bytes to each', () => {
    const tok = decoderOf('smollm2');
    const ids = tok.encode('🙂');
    expect(ids.length).toBeGreaterThan(1); // the tiny vocabulary splits the emoji into byte tokens
    const pieces = textPieces(tok, ids, false);
    expect(pieces.slice(0, -1).every((p) => p === '')).toBe(true);
    expect(pieces.at(-1)).toBe('🙂');
    expect(Buffer.from(Array.from(ids).flatMap((id) => tokenBytes(tok, id))).toString('utf8')).toBe('🙂');
  });

  it('offsets are where each piece starts', () => {
    expect(pieceOffsets(['ab', '', 'c'], 3)).toEqual([3, 5, 5]);
  });
});

describe('stop strings', () => {
  it('stops at the occurrence completed first and cuts where it starts', () => {
    expect(findStop('abc', ['abc', 'b'])).toEqual({ cut: 1, end: 2 });
    expect(findStop('no stop here', ['x'])).toBeNull();
    expect(cutAtStop(['An', 'swer', ': 4', '\n', '\n', 'Q'], ['\n\n'])).toEqual({ tokens: 5, pieces: ['An', 'swer', ': 4', '', ''], text: 'Answer: 4' });
    // A stop string inside one token: the token is kept, its text cut.
    expect(cutAtStop(['ab', 'cXYd', 'e'], ['XY'])).toEqual({ tokens: 2, pieces: ['ab', 'c'], text: 'abc' });
    expect(cutAtStop(['a'], [])).toBeNull();
  });
});

describe('request validation wording', () => {
  const schema = z.object({ max_tokens: integer().min(1).nullish(), name: z.string(), mode: z.enum(['a', 'b']).optional() }).strict();
  const errorOf = (body: unknown): ApiError => {
    try {
      parseBody(schema, body);
    } catch (error) {
      if (error instanceof ApiError) return error;
      throw error;
    }
    throw new Error('expected an ApiError');
  };

  it('names the field and its type, tells missing from wrong, and names unknown keys', () => {
    expect(errorOf({ name: 'x', max_tokens: 1.5 }).message).toBe("Invalid type for 'max_tokens': expected an integer, but got a decimal number instead.");
    expect(errorOf({ name: 'x', max_tokens: '2' }).message).toBe("Invalid type for 'max_tokens': expected an integer, but got a string instead.");
    expect(errorOf({ name: 'x', max_tokens: 0 }).message).toBe("Invalid value for 'max_tokens': expected a value >= 1, but got 0 instead.");
    expect(errorOf({}).code).toBe('missing_required_parameter');
    expect(errorOf({ name: null }).code).toBe('invalid_type');
    expect(errorOf({ name: 'x', mode: 'c' }).message).toBe('Invalid value for \'mode\': expected one of "a", "b", but got "c" instead.');
    expect(errorOf({ name: 'x', extra: 1 })).toMatchObject({ param: 'extra', message: 'Unrecognized request argument supplied: extra' });
    expect(errorOf([1]).message).toMatch(/must be a JSON object, but got an array/);
  });
});
