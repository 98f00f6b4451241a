/**
 * A trie over the allowed action token sequences, for constrained decoding: at each step only the
 * trie's next tokens are allowed; a node with a single child means that token is forced.
 */
import { InvalidArgumentError } from '../core/errors.js';

/** A node id in an {@link ActionTrie}; the root is {@link ActionTrie.root}. */
export type TrieNode = number;

/** A node's child token ids, ascending. */
function sortedKeys(children: Map<number, number>): Int32Array {
  return Int32Array.from(children.keys()).sort();
}

/**
 * Immutable prefix tree of token sequences. Each choice should end with the `<|end|>` id, so no
 * choice is a proper prefix of another; a prefix is rejected because it could never be chosen.
 * @example
 * const trie = ActionTrie.fromChoices([new Int32Array([7, 8, END]), new Int32Array([7, 9, END])]);
 * trie.allowed(trie.root);            // Int32Array [7] -> forced
 * const n = trie.advance(trie.root, 7);
 * trie.allowed(n);                    // Int32Array [8, 9] -> a real choice
 */
export class ActionTrie {
  /** The root node (nothing generated yet). */
  readonly root: TrieNode = 0;
  private readonly children: Map<number, number>[];
  private readonly allowedCache: Int32Array[];

  private constructor(children: Map<number, number>[]) {
    this.children = children;
    this.allowedCache = children.map(sortedKeys);
  }

  /**
   * Builds the trie; duplicate choices collapse. Throws {@link InvalidArgumentError} on an empty
   * list, an empty choice, or a choice that is a proper prefix of another.
   */
  static fromChoices(choices: readonly Int32Array[]): ActionTrie {
    if (choices.length === 0) throw InvalidArgumentError.format('actionChoices', 'expected at least one choice');
    const children: Map<number, number>[] = [new Map()];
    const terminal: boolean[] = [false];
    // A plain loop: a closure made per call was recompiled by V8 on nearly every trie (one per request).
    for (let index = 0; index < choices.length; index++) {
      const choice = choices[index];
      if (choice.length === 0) throw InvalidArgumentError.format(`actionChoices[${index}]`, 'empty token sequence');
      let node = 0;
      for (const id of choice) {
        if (terminal[node]) throw InvalidArgumentError.format(`actionChoices[${index}]`, 'extends another choice (a choice must not be a prefix of another)');
        let next = children[node].get(id);
        if (next === undefined) {
          next = children.length;
          children.push(new Map());
          terminal.push(false);
          children[node].set(id, next);
        }
        node = next;
      }
      if (children[node].size > 0) throw InvalidArgumentError.format(`actionChoices[${index}]`, 'is a prefix of another choice');
      terminal[node] = true;
    }
    return new ActionTrie(children);
  }

  /** Number of nodes, root included. */
  get size(): number {
    return this.children.length;
  }

  /** Sorted token ids allowed after `node` (empty at a leaf). Do not mutate. */
  allowed(node: TrieNode): Int32Array {
    return this.allowedCache[this.check(node)];
  }

  /** The node reached by appending `tokenId`; throws when the token is not allowed there. */
  advance(node: TrieNode, tokenId: number): TrieNode {
    const next = this.children[this.check(node)].get(tokenId);
    if (next === undefined) throw InvalidArgumentError.format('tokenId', `${tokenId} is not allowed at trie node ${node}`);
    return next;
  }

  /** True when a whole choice has been generated. */
  isLeaf(node: TrieNode): boolean {
    return this.children[this.check(node)].size === 0;
  }

  private check(node: TrieNode): number {
    if (!Number.isInteger(node) || node < 0 || node >= this.children.length) throw InvalidArgumentError.format('node', `no trie node ${node}`);
    return node;
  }
}
