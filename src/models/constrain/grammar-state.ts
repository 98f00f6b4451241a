/**
 * Byte grammars as immutable states: a state says which byte may come next (`step` returns the
 * state after it, or null) and whether the text so far is a whole sentence (`complete`). Grammars
 * are built by continuation: each piece is given the state that follows it, so a JSON value inside
 * an object knows it is followed by `,` or `}`. Ambiguity is kept as a union of states (a small
 * NFA), and recursive grammars build their states only when first stepped into (`lazy`).
 *
 * Why bytes, not characters: token ids decode to bytes (byte-level BPE splits characters), and a
 * token's bytes are stepped one by one while the vocabulary is walked (`vocab-walk.ts`).
 */

/** What may come next after some text. */
export interface GrammarState {
  /** The state after byte `b`, or null when `b` cannot come next. */
  step(b: number): GrammarState | null;
  /** Whether the text so far may end here. */
  readonly complete: boolean;
}

/** Nothing more may come: the text is whole. */
export const END: GrammarState = { step: () => null, complete: true };

const encoder = new TextEncoder();

class Literal implements GrammarState {
  readonly complete = false;
  constructor(
    private readonly bytes: Uint8Array,
    private readonly at: number,
    private readonly next: GrammarState,
  ) {}

  step(b: number): GrammarState | null {
    if (b !== this.bytes[this.at]) return null;
    return this.at + 1 === this.bytes.length ? this.next : new Literal(this.bytes, this.at + 1, this.next);
  }
}

/**
 * Exactly `text` (UTF-8), then `next`.
 * @example literal('}', END).step(0x7d) === END // true
 */
export function literal(text: string | Uint8Array, next: GrammarState): GrammarState {
  const bytes = typeof text === 'string' ? encoder.encode(text) : text;
  return bytes.length === 0 ? next : new Literal(bytes, 0, next);
}

class Union implements GrammarState {
  constructor(readonly states: readonly GrammarState[]) {}

  // Asked only when needed: a union of lazy states must not build them all as it is made.
  get complete(): boolean {
    return this.states.some((s) => s.complete);
  }

  step(b: number): GrammarState | null {
    return union(this.states.map((s) => s.step(b)));
  }
}

/**
 * Any of `states` (null ones dropped): null when none is left, the state itself when one is.
 * @example union([literal('true', END), literal('false', END)])
 */
export function union(states: readonly (GrammarState | null)[]): GrammarState | null {
  const live: GrammarState[] = [];
  for (const s of states) {
    if (s === null) continue;
    if (s instanceof Union) live.push(...s.states);
    else live.push(s);
  }
  if (live.length === 0) return null;
  return live.length === 1 ? (live[0] as GrammarState) : new Union(live);
}

class Lazy implements GrammarState {
  private built: GrammarState | null | undefined;
  constructor(private readonly make: () => GrammarState | null) {}

  private get state(): GrammarState | null {
    if (this.built === undefined) this.built = this.make();
    return this.built;
  }

  get complete(): boolean {
    return this.state?.complete ?? false;
  }

  step(b: number): GrammarState | null {
    return this.state?.step(b) ?? null;
  }
}

/**
 * The state `make` builds, built when first needed (recursive schemas, and the many property
 * values an object offers but only one of which is written next).
 * @example const value = lazy(() => schemaNode.start(next));
 */
export function lazy(make: () => GrammarState | null): GrammarState {
  return new Lazy(make);
}

/** Most whitespace bytes between two JSON tokens: enough for indented JSON, too few for a model to loop on. */
export const MAX_SPACE = 8;

const isSpace = (b: number) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

class Space implements GrammarState {
  constructor(
    private readonly next: GrammarState,
    private readonly used: number,
  ) {}

  get complete(): boolean {
    return this.next.complete;
  }

  step(b: number): GrammarState | null {
    if (isSpace(b)) return this.used < MAX_SPACE ? new Space(this.next, this.used + 1) : null;
    return this.next.step(b);
  }
}

/**
 * Optional JSON whitespace (at most {@link MAX_SPACE} bytes), then `next` (which must not itself
 * start with whitespace).
 * @example space(literal(':', value))
 */
export function space(next: GrammarState): GrammarState {
  return new Space(next, 0);
}

/**
 * Steps `state` through `bytes`: the state after them, or null where one cannot come.
 * @example feed(literal('null', END), new TextEncoder().encode('nu')) // a state expecting 'l'
 */
export function feed(state: GrammarState | null, bytes: Uint8Array): GrammarState | null {
  let s = state;
  for (let i = 0; i < bytes.length && s !== null; i++) s = s.step(bytes[i] as number);
  return s;
}
