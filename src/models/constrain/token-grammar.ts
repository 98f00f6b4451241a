/**
 * Grammar-constrained decoding of one generation: the ids its grammar allows next, and the state
 * after the id chosen. A stop id is allowed only where the grammar is complete, so a reply ends
 * only as a whole sentence of it (or at its token limit).
 *
 * What is allowed is cached per grammar state: inside a long JSON string the state does not change
 * from token to token, so the vocabulary is walked once for the whole string.
 */
import type { GrammarConstraint } from '../../core/policy.js';
import { InvalidArgumentError } from '../../core/errors.js';
import { type GrammarState, feed } from './grammar-state.js';
import type { GrammarVocab } from './grammar-vocab.js';

export class TokenGrammar implements GrammarConstraint {
  private state: GrammarState | null;
  private readonly stops: Int32Array;
  private readonly cache = new WeakMap<GrammarState, Int32Array>();
  /** Whether the text so far stopped being a prefix of the grammar's sentences (a dead end). */
  deadEnd = false;

  constructor(
    private readonly vocab: GrammarVocab,
    start: GrammarState,
    /** Ids that end the generation. */
    stopIds: readonly number[],
  ) {
    this.state = start;
    this.stops = Int32Array.from(new Set(stopIds)).sort();
  }

  /** Whether the text so far is complete (a stop may come). */
  get complete(): boolean {
    return this.state?.complete ?? true;
  }

  /**
   * The ids allowed next, ascending; never empty: where the grammar allows nothing (it cannot
   * continue from what the tokens spelled), the stop ids, so the reply ends.
   * @example const candidates = grammar.allowed();
   */
  allowed(): Int32Array {
    const state = this.state;
    if (state === null) return this.stops;
    const known = this.cache.get(state);
    if (known !== undefined) return known;
    let ids = this.vocab.allowed(state);
    if (state.complete) ids = merged(ids, this.stops);
    if (ids.length === 0) {
      this.deadEnd = true;
      ids = this.stops;
    }
    this.cache.set(state, ids);
    return ids;
  }

  /**
   * Advances past `id` (one of {@link allowed}).
   * @example grammar.accept(choice.tokenId);
   */
  accept(id: number): void {
    if (this.state === null) return;
    if (this.stops.includes(id)) {
      this.state = null;
      return;
    }
    const bytes = this.vocab.bytesOf(id);
    const next = bytes === null ? null : feed(this.state, bytes);
    if (next === null) throw InvalidArgumentError.format('tokenId', `id ${id} was not allowed by the grammar`);
    this.state = next;
  }
}

function merged(a: Int32Array, b: Int32Array): Int32Array {
  const out = new Int32Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return Int32Array.from(new Set(out)).sort();
}
