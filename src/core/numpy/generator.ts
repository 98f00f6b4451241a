/**
 * NumPy's `Generator` over PCG64 (`np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed)))`,
 * which Gymnasium's `np_random(seed)` returns), bit-exact for the methods Minigrid's BabyAI levels
 * call: `integers(low, high)` (default dtype int64, NumPy's unmasked Lemire rejection: a 32-bit draw
 * when the range fits 32 bits, a 64-bit draw otherwise), `random()` and `uniform(low, high)`.
 * Minigrid 2.4.0's BabyAI code calls nothing else on `np_random` (no `choice`, `shuffle` or
 * `permutation`), so nothing else is ported.
 */
import { Pcg64 } from './pcg64.js';

const TWO_32 = 4294967296;
const UINT32_MAX = 0xffffffff;
const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/**
 * A NumPy random stream.
 * @example
 * const g = NumpyGenerator.fromSeed(0);
 * g.integers(0, 6); // same value as np.random.default_rng(0).integers(0, 6)
 */
export class NumpyGenerator {
  private constructor(private readonly bits: Pcg64) {}

  /** `Generator(PCG64(SeedSequence(seed)))` for a non-negative integer seed. */
  static fromSeed(seed: bigint | number): NumpyGenerator {
    return new NumpyGenerator(Pcg64.fromSeed(seed));
  }

  /** The underlying bit generator (raw draws, state). */
  get bitGenerator(): Pcg64 {
    return this.bits;
  }

  /**
   * `integers(low, high)`: uniform integer in [low, high), for bounds within ±2^53.
   * A range of one value draws nothing, as in NumPy.
   */
  integers(low: number, high: number): number {
    if (!Number.isInteger(low) || !Number.isInteger(high) || Math.abs(low) > MAX_SAFE || Math.abs(high) > MAX_SAFE) {
      throw new RangeError(`integers: bounds must be safe integers, got (${low}, ${high})`);
    }
    const rng = high - 1 - low;
    if (rng < 0) throw new RangeError(`integers: low >= high (${low}, ${high})`);
    if (rng === 0) return low;
    if (rng < UINT32_MAX) return low + this.lemire32(rng);
    if (rng === UINT32_MAX) return low + this.bits.nextUint32();
    return Number(BigInt(low) + this.lemire64(BigInt(rng)));
  }

  /** `integers(low, high)` for any int64 bounds, as bigints. */
  integersBig(low: bigint, high: bigint): bigint {
    const rng = high - 1n - low;
    if (rng < 0n) throw new RangeError(`integers: low >= high (${low}, ${high})`);
    if (rng === 0n) return low;
    if (rng < BigInt(UINT32_MAX)) return low + BigInt(this.lemire32(Number(rng)));
    if (rng === BigInt(UINT32_MAX)) return low + BigInt(this.bits.nextUint32());
    return low + this.lemire64(rng);
  }

  /** `random()`: double in [0, 1) with 53 random bits. */
  random(): number {
    return this.bits.nextDouble();
  }

  /** `uniform(low, high)`: `low + (high - low) * random()`. */
  uniform(low: number, high: number): number {
    return low + (high - low) * this.bits.nextDouble();
  }

  /** NumPy's `buffered_bounded_lemire_uint32` for a range [0, rng], rng < 2^32 - 1. */
  private lemire32(rng: number): number {
    const excl = rng + 1;
    let m = this.scaled32(excl);
    if (this.leftover < excl) {
      const threshold = (UINT32_MAX - rng) % excl;
      while (this.leftover < threshold) m = this.scaled32(excl);
    }
    return m;
  }

  /** Low 32 bits of the last {@link scaled32} product (a field, so no tuple is allocated per draw). */
  private leftover = 0;

  /**
   * High 32 bits of (next uint32) * excl, exactly (products of 16-bit halves fit a double); the
   * low 32 bits go to {@link leftover}.
   */
  private scaled32(excl: number): number {
    const x = this.bits.nextUint32();
    const a = (x >>> 16) * excl; // < 2^48
    const t = (x & 0xffff) * excl + (a % 65536) * 65536; // < 2^49
    this.leftover = t % TWO_32;
    return Math.floor(a / 65536) + Math.floor(t / TWO_32);
  }

  /** NumPy's `bounded_lemire_uint64` for a range [0, rng], 2^32 - 1 < rng < 2^64 - 1. */
  private lemire64(rng: bigint): bigint {
    const excl = rng + 1n;
    const mask = (1n << 64n) - 1n;
    let m = this.bits.nextUint64() * excl;
    let leftover = m & mask;
    if (leftover < excl) {
      const threshold = (mask - rng) % excl;
      while (leftover < threshold) {
        m = this.bits.nextUint64() * excl;
        leftover = m & mask;
      }
    }
    return m >> 64n;
  }
}
