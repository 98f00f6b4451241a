/**
 * The byte grammars of JSON's scalar values (RFC 8259): strings (with escapes, and optionally a
 * length range in characters), numbers and integers. Each is given the state that follows it.
 *
 * A string body returns itself for ordinary bytes when it counts no length, so the vocabulary walk
 * can cache what is allowed inside a long string (`token-grammar.ts`). Characters past ASCII must be
 * well-formed UTF-8 (a lead byte, then its continuation bytes, which may come in the next token):
 * a tokenizer's decoder turns a broken sequence into U+FFFD and can swallow the quote after it.
 */
import type { GrammarState } from './grammar-state.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const isDigit = (b: number) => b >= 0x30 && b <= 0x39;
const isHex = (b: number) => isDigit(b) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66);
const ESCAPABLE = new Set([...'"\\/bfnrt'].map((c) => c.charCodeAt(0)));

/** Length range of a string, in characters (code points; an escape counts one). */
export interface StringLength {
  readonly min: number;
  readonly max: number;
}

const ANY_LENGTH: StringLength = { min: 0, max: Number.POSITIVE_INFINITY };

class StringBody implements GrammarState {
  readonly complete = false;
  private readonly counts: boolean;
  constructor(
    private readonly next: GrammarState,
    private readonly length: StringLength,
    private readonly chars: number,
  ) {
    this.counts = length.min > 0 || Number.isFinite(length.max);
  }

  /** The body after one more character. */
  private more(): StringBody | null {
    if (!this.counts) return this;
    return this.chars + 1 > this.length.max ? null : new StringBody(this.next, this.length, this.chars + 1);
  }

  step(b: number): GrammarState | null {
    if (b === QUOTE) return this.chars >= this.length.min ? this.next : null;
    if (b < 0x20) return null;
    const after = this.more();
    if (after === null || b < 0x80) return b === BACKSLASH && after !== null ? new Escape(after) : after;
    const lead = UTF8_LEADS.get(b);
    return lead === undefined ? null : new Continuation(after, lead.count, lead.low, lead.high);
  }
}

/**
 * Well-formed UTF-8 (Unicode's table 3-7): each lead byte, how many continuation bytes follow it,
 * and the range of the first (which rules out overlong forms, surrogates and code points past
 * U+10FFFF); the others are 0x80–0xBF.
 */
const UTF8_LEADS = new Map<number, { count: number; low: number; high: number }>();
for (let b = 0xc2; b <= 0xdf; b++) UTF8_LEADS.set(b, { count: 1, low: 0x80, high: 0xbf });
for (let b = 0xe0; b <= 0xef; b++) UTF8_LEADS.set(b, { count: 2, low: b === 0xe0 ? 0xa0 : 0x80, high: b === 0xed ? 0x9f : 0xbf });
for (let b = 0xf0; b <= 0xf4; b++) UTF8_LEADS.set(b, { count: 3, low: b === 0xf0 ? 0x90 : 0x80, high: b === 0xf4 ? 0x8f : 0xbf });

/** The continuation bytes a character's lead byte announced. */
class Continuation implements GrammarState {
  readonly complete = false;
  constructor(
    private readonly body: GrammarState,
    private readonly left: number,
    private readonly low: number,
    private readonly high: number,
  ) {}
  step(b: number): GrammarState | null {
    if (b < this.low || b > this.high) return null;
    return this.left === 1 ? this.body : new Continuation(this.body, this.left - 1, 0x80, 0xbf);
  }
}

class Escape implements GrammarState {
  readonly complete = false;
  constructor(private readonly body: GrammarState) {}
  step(b: number): GrammarState | null {
    if (ESCAPABLE.has(b)) return this.body;
    return b === 0x75 ? new HexDigits(this.body, 4) : null; // \uXXXX
  }
}

class HexDigits implements GrammarState {
  readonly complete = false;
  constructor(
    private readonly body: GrammarState,
    private readonly left: number,
  ) {}
  step(b: number): GrammarState | null {
    if (!isHex(b)) return null;
    return this.left === 1 ? this.body : new HexDigits(this.body, this.left - 1);
  }
}

/**
 * A JSON string (its opening quote included), then `next`.
 * @example jsonString(END, { min: 1, max: 5 })
 */
export function jsonString(next: GrammarState, length: StringLength = ANY_LENGTH): GrammarState {
  const body = new StringBody(next, length, 0);
  return { complete: false, step: (b) => (b === QUOTE ? body : null) };
}

/** Where a number is: which bytes may follow, and whether it may end here. */
enum Phase {
  Start,
  Minus,
  Zero,
  Digits,
  Dot,
  Fraction,
  E,
  ESign,
  Exponent,
}

const ENDS = new Set([Phase.Zero, Phase.Digits, Phase.Fraction, Phase.Exponent]);

class NumberState implements GrammarState {
  constructor(
    private readonly next: GrammarState,
    private readonly integer: boolean,
    private readonly phase: Phase,
  ) {}

  get complete(): boolean {
    return ENDS.has(this.phase) && this.next.complete;
  }

  private to(phase: Phase): NumberState {
    return phase === this.phase ? this : new NumberState(this.next, this.integer, phase);
  }

  step(b: number): GrammarState | null {
    const digit = isDigit(b);
    switch (this.phase) {
      case Phase.Start:
        if (b === 0x2d) return this.to(Phase.Minus);
        return digit ? this.to(b === 0x30 ? Phase.Zero : Phase.Digits) : null;
      case Phase.Minus:
        return digit ? this.to(b === 0x30 ? Phase.Zero : Phase.Digits) : null;
      case Phase.Dot:
        return digit ? this.to(Phase.Fraction) : null;
      case Phase.E:
        if (b === 0x2b || b === 0x2d) return this.to(Phase.ESign);
        return digit ? this.to(Phase.Exponent) : null;
      case Phase.ESign:
        return digit ? this.to(Phase.Exponent) : null;
      case Phase.Digits:
        if (digit) return this;
        break;
      case Phase.Fraction:
        if (digit) return this;
        if (b === 0x65 || b === 0x45) return this.to(Phase.E);
        return this.next.step(b);
      case Phase.Exponent:
        return digit ? this : this.next.step(b);
      case Phase.Zero:
        break;
    }
    // Zero or Digits: a fraction or exponent may follow (not in an integer), or the number ends.
    if (!this.integer && b === 0x2e) return this.to(Phase.Dot);
    if (!this.integer && (b === 0x65 || b === 0x45)) return this.to(Phase.E);
    return this.next.step(b);
  }
}

/**
 * A JSON number (`integer`: digits only, with an optional minus), then `next`. A number ends only
 * at the byte after it, which `next` must take.
 * @example jsonNumber(literal('}', END), true)
 */
export function jsonNumber(next: GrammarState, integer: boolean): GrammarState {
  return new NumberState(next, integer, Phase.Start);
}
