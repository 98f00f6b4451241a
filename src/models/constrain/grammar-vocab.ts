/**
 * A vocabulary as bytes, walked against a grammar state: which token ids a state takes whole.
 *
 * Tokens are sorted by their bytes and each is stored with the length of the prefix it shares with
 * the one before it, so a walk steps each distinct prefix once (a trie's walk without the trie's
 * memory: a 152k-token vocabulary holds about 1 MB here) and skips, without stepping, every token
 * under a prefix the grammar refused. Ids without bytes (special tokens, stop ids) are never taken.
 */
import type { GrammarState } from './grammar-state.js';

export class GrammarVocab {
  private constructor(
    /** Ids are in [0, size). */
    readonly size: number,
    private readonly tokens: readonly (Uint8Array | null)[],
    /** Ids with bytes, sorted by their bytes. */
    private readonly sorted: Int32Array,
    /** Bytes of the sorted tokens, one after another; token k is bytes[offsets[k], offsets[k + 1]). */
    private readonly bytes: Uint8Array,
    private readonly offsets: Int32Array,
    /** [k] bytes token k shares with token k - 1. */
    private readonly shared: Int32Array,
  ) {}

  /**
   * The vocabulary of `tokens[id]` (null: an id the grammar never takes).
   * @example const vocab = GrammarVocab.build([enc('{'), enc('}'), null]);
   */
  static build(tokens: readonly (Uint8Array | null)[]): GrammarVocab {
    const ids = tokens.flatMap((t, id) => (t !== null && t.length > 0 ? [id] : []));
    ids.sort((a, b) => compareBytes(tokens[a] as Uint8Array, tokens[b] as Uint8Array) || a - b);
    const offsets = new Int32Array(ids.length + 1);
    for (let k = 0; k < ids.length; k++) offsets[k + 1] = (offsets[k] as number) + (tokens[ids[k] as number] as Uint8Array).length;
    const bytes = new Uint8Array(offsets[ids.length] as number);
    const shared = new Int32Array(ids.length);
    let previous: Uint8Array | null = null;
    ids.forEach((id, k) => {
      const t = tokens[id] as Uint8Array;
      bytes.set(t, offsets[k] as number);
      shared[k] = previous === null ? 0 : sharedPrefix(previous, t);
      previous = t;
    });
    return new GrammarVocab(tokens.length, tokens, Int32Array.from(ids), bytes, offsets, shared);
  }

  /** The bytes of `id`, or null when the grammar never takes it. */
  bytesOf(id: number): Uint8Array | null {
    const t = this.tokens[id];
    return t === undefined || t === null || t.length === 0 ? null : t;
  }

  /**
   * The ids whose bytes `state` takes, ascending.
   * @example vocab.allowed(literal('{"', END)) // the ids of '{' and '{"'
   */
  allowed(state: GrammarState): Int32Array {
    const mark = new Uint8Array(this.size);
    let found = 0;
    const stack: (GrammarState | null)[] = [state];
    let deadFrom = Number.POSITIVE_INFINITY; // tokens sharing this many bytes with a refused prefix are skipped
    for (let k = 0; k < this.sorted.length; k++) {
      const keep = this.shared[k] as number;
      if (keep >= deadFrom) continue;
      deadFrom = Number.POSITIVE_INFINITY;
      const end = this.offsets[k + 1] as number;
      let depth = keep;
      let s = stack[depth] as GrammarState;
      for (let p = (this.offsets[k] as number) + keep; p < end; p++) {
        const next = s.step(this.bytes[p] as number);
        depth++;
        if (next === null) {
          deadFrom = depth;
          break;
        }
        stack[depth] = next;
        s = next;
      }
      if (deadFrom === Number.POSITIVE_INFINITY) {
        mark[this.sorted[k] as number] = 1;
        found++;
      }
    }
    const out = new Int32Array(found);
    for (let id = 0, j = 0; j < found; id++) if (mark[id] === 1) out[j++] = id;
    return out;
  }
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return (a[i] as number) - (b[i] as number);
  return a.length - b.length;
}

function sharedPrefix(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}
