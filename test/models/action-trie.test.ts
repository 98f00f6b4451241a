import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/core/errors.js';
import { ActionTrie } from '../../src/models/action-trie.js';

const END = 5;
const seq = (...ids: number[]) => Int32Array.from(ids);

describe('ActionTrie', () => {
  it('lists the allowed next tokens, sorted, and walks to a leaf', () => {
    const trie = ActionTrie.fromChoices([seq(9, 7, END), seq(9, 6, END), seq(3, END)]);
    expect(Array.from(trie.allowed(trie.root))).toEqual([3, 9]);
    const n = trie.advance(trie.root, 9);
    expect(Array.from(trie.allowed(n))).toEqual([6, 7]);
    const leaf = trie.advance(trie.advance(n, 7), END);
    expect(trie.isLeaf(leaf)).toBe(true);
    expect(trie.allowed(leaf).length).toBe(0);
    expect(trie.isLeaf(n)).toBe(false);
  });

  it('collapses duplicate choices', () => {
    const trie = ActionTrie.fromChoices([seq(1, END), seq(1, END)]);
    expect(trie.size).toBe(3);
    expect(Array.from(trie.allowed(trie.root))).toEqual([1]);
  });

  it('rejects a token that is not allowed, empty lists and prefixes', () => {
    const trie = ActionTrie.fromChoices([seq(1, END)]);
    expect(() => trie.advance(trie.root, 2)).toThrow(InvalidArgumentError);
    expect(() => ActionTrie.fromChoices([])).toThrow(/actionChoices/);
    expect(() => ActionTrie.fromChoices([seq()])).toThrow(/actionChoices\[0\]/);
    expect(() => ActionTrie.fromChoices([seq(1, 2), seq(1, 2, END)])).toThrow(/actionChoices\[1\]/);
    expect(() => ActionTrie.fromChoices([seq(1, 2, END), seq(1, 2)])).toThrow(/actionChoices\[1\]/);
  });
});
