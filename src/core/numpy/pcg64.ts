/**
 * NumPy's PCG64 bit generator (numpy/random/src/pcg64, O'Neill's PCG XSL-RR 128/64): a 128-bit
 * linear congruential state, advanced before each output, and a 64-bit output made by xor-folding
 * the state and rotating by its top 6 bits. Seeded as `PCG64(SeedSequence(seed))` seeds it.
 *
 * The 128-bit state lives in eight 16-bit limbs (least significant first), so every partial
 * product fits a double exactly: no BigInt on the hot path (a BigInt step allocates; it measured
 * about 2x slower than this, see bench/RESULTS.md).
 */
import { generateState } from './seed-sequence.js';

// PCG's default 128-bit multiplier, 0x2360ED051FC65DA44385DF649FCCF645, as 16-bit limbs M0 (low) .. M7.
const M0 = 0xf645;
const M1 = 0x9fcc;
const M2 = 0xdf64;
const M3 = 0x4385;
const M4 = 0x5da4;
const M5 = 0x1fc6;
const M6 = 0xed05;
const M7 = 0x2360;

/** [8] 16-bit limbs of a 128-bit value given as four uint32 words, least significant first. */
function limbsOfWords(w0: number, w1: number, w2: number, w3: number): number[] {
  return [w0 & 0xffff, w0 >>> 16, w1 & 0xffff, w1 >>> 16, w2 & 0xffff, w2 >>> 16, w3 & 0xffff, w3 >>> 16];
}

function fromLimbs(limbs: ArrayLike<number>): bigint {
  let value = 0n;
  for (let k = 7; k >= 0; k--) value = (value << 16n) | BigInt(limbs[k] as number);
  return value;
}

/**
 * The PCG64 state and its 32-bit buffer (NumPy hands out the low then the high half of one
 * 64-bit output for successive 32-bit requests).
 * @example
 * const bits = Pcg64.fromSeed(0);
 * bits.nextUint64(); // 11749869230777074271n as { hi, lo }
 */
export class Pcg64 {
  // State limbs s0 (least significant) .. s7 and increment limbs i0 .. i7, 16 bits each: plain
  // fields, so a step is straight-line arithmetic (a loop over typed arrays was 3x slower).
  private s0 = 0;
  private s1 = 0;
  private s2 = 0;
  private s3 = 0;
  private s4 = 0;
  private s5 = 0;
  private s6 = 0;
  private s7 = 0;
  private readonly i0: number;
  private readonly i1: number;
  private readonly i2: number;
  private readonly i3: number;
  private readonly i4: number;
  private readonly i5: number;
  private readonly i6: number;
  private readonly i7: number;
  private hasUint32 = false;
  private uinteger = 0;
  /** High 32 bits of the last 64-bit output ({@link nextUint64} returns the low half). */
  hi = 0;

  private constructor(inc: readonly number[]) {
    [this.i0, this.i1, this.i2, this.i3, this.i4, this.i5, this.i6, this.i7] = inc as [number, number, number, number, number, number, number, number];
  }

  /**
   * `PCG64(SeedSequence(seed))`. On 32-bit words and 16-bit limbs, not bigints: every episode
   * reset seeds a generator, and the bigint form allocated a few dozen numbers each time.
   */
  static fromSeed(seed: bigint | number): Pcg64 {
    const w = generateState(seed, 8) as [number, number, number, number, number, number, number, number];
    // uint64 value k is words (2k, 2k + 1), low first; initstate = value0 << 64 | value1 and
    // initseq = value2 << 64 | value3, so their uint32 words, least significant first, are:
    const state = limbsOfWords(w[2], w[3], w[0], w[1]);
    const seq = [w[6], w[7], w[4], w[5]] as const;
    // pcg_setseq_128_srandom_r: inc = 2 * initseq + 1 (mod 2^128), state = 0, step, add initstate, step.
    const inc = limbsOfWords(((seq[0] << 1) | 1) >>> 0, ((seq[1] << 1) | (seq[0] >>> 31)) >>> 0, ((seq[2] << 1) | (seq[1] >>> 31)) >>> 0, ((seq[3] << 1) | (seq[2] >>> 31)) >>> 0);
    const g = new Pcg64(inc);
    g.step();
    g.addToState(state);
    g.step();
    return g;
  }

  /** The state as NumPy's `bit_generator.state['state']` shows it. */
  getState(): { state: bigint; inc: bigint } {
    const state = [this.s0, this.s1, this.s2, this.s3, this.s4, this.s5, this.s6, this.s7];
    const inc = [this.i0, this.i1, this.i2, this.i3, this.i4, this.i5, this.i6, this.i7];
    return { state: fromLimbs(state), inc: fromLimbs(inc) };
  }

  /** state += value (mod 2^128), `value` as 16-bit limbs. */
  private addToState(value: readonly number[]): void {
    const sum = [this.s0, this.s1, this.s2, this.s3, this.s4, this.s5, this.s6, this.s7];
    let carry = 0;
    for (let k = 0; k < 8; k++) {
      const t = (sum[k] as number) + (value[k] as number) + carry;
      sum[k] = t & 0xffff;
      carry = t >>> 16;
    }
    [this.s0, this.s1, this.s2, this.s3, this.s4, this.s5, this.s6, this.s7] = sum as [number, number, number, number, number, number, number, number];
  }

  /**
   * state = state * M + inc (mod 2^128). Limb k sums at most 8 products of 16-bit limbs plus the
   * carry, below 2^36, so doubles hold it exactly; `& 0xffff` takes its low 16 bits.
   */
  private step(): void {
    const { s0, s1, s2, s3, s4, s5, s6, s7 } = this;
    let a = this.i0 + s0 * M0;
    const n0 = a & 0xffff;
    a = (a - n0) / 65536 + this.i1 + s0 * M1 + s1 * M0;
    const n1 = a & 0xffff;
    a = (a - n1) / 65536 + this.i2 + s0 * M2 + s1 * M1 + s2 * M0;
    const n2 = a & 0xffff;
    a = (a - n2) / 65536 + this.i3 + s0 * M3 + s1 * M2 + s2 * M1 + s3 * M0;
    const n3 = a & 0xffff;
    a = (a - n3) / 65536 + this.i4 + s0 * M4 + s1 * M3 + s2 * M2 + s3 * M1 + s4 * M0;
    const n4 = a & 0xffff;
    a = (a - n4) / 65536 + this.i5 + s0 * M5 + s1 * M4 + s2 * M3 + s3 * M2 + s4 * M1 + s5 * M0;
    const n5 = a & 0xffff;
    a = (a - n5) / 65536 + this.i6 + s0 * M6 + s1 * M5 + s2 * M4 + s3 * M3 + s4 * M2 + s5 * M1 + s6 * M0;
    const n6 = a & 0xffff;
    a = (a - n6) / 65536 + this.i7 + s0 * M7 + s1 * M6 + s2 * M5 + s3 * M4 + s4 * M3 + s5 * M2 + s6 * M1 + s7 * M0;
    this.s0 = n0;
    this.s1 = n1;
    this.s2 = n2;
    this.s3 = n3;
    this.s4 = n4;
    this.s5 = n5;
    this.s6 = n6;
    this.s7 = a & 0xffff;
  }

  /**
   * Next 64-bit output: returns the low 32 bits (unsigned) and leaves the high 32 bits in {@link hi}.
   */
  nextUint64Parts(): number {
    this.step();
    // XSL-RR: x = high64 ^ low64, rotated right by the top 6 bits of the state.
    const xhi = ((this.s7 << 16) | this.s6) ^ ((this.s3 << 16) | this.s2);
    const xlo = ((this.s5 << 16) | this.s4) ^ ((this.s1 << 16) | this.s0);
    const rot = this.s7 >>> 10;
    let hi: number;
    let lo: number;
    if (rot === 0) {
      hi = xhi;
      lo = xlo;
    } else if (rot < 32) {
      hi = (xhi >>> rot) | (xlo << (32 - rot));
      lo = (xlo >>> rot) | (xhi << (32 - rot));
    } else if (rot === 32) {
      hi = xlo;
      lo = xhi;
    } else {
      const r = rot - 32;
      hi = (xlo >>> r) | (xhi << (32 - r));
      lo = (xhi >>> r) | (xlo << (32 - r));
    }
    this.hi = hi >>> 0;
    return lo >>> 0;
  }

  /** Next 64-bit output as a bigint (for tests and wide ranges). */
  nextUint64(): bigint {
    const lo = this.nextUint64Parts();
    return (BigInt(this.hi) << 32n) | BigInt(lo);
  }

  /** Next 32-bit output: the low half of a fresh 64-bit output, then its high half (NumPy's `pcg64_next32`). */
  nextUint32(): number {
    if (this.hasUint32) {
      this.hasUint32 = false;
      return this.uinteger;
    }
    const lo = this.nextUint64Parts();
    this.hasUint32 = true;
    this.uinteger = this.hi;
    return lo;
  }

  /** Next double in [0, 1): the top 53 bits of a 64-bit output (NumPy's `next_double`). */
  nextDouble(): number {
    const lo = this.nextUint64Parts();
    return (this.hi * 2097152 + (lo >>> 11)) / 9007199254740992;
  }
}
