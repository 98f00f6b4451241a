/**
 * Seeded, forkable, serializable random streams.
 *
 * Why pure-rand's xoroshiro128+: a well-kept generator whose full state is readable
 * (`getState`) and restorable (`fromState`), which checkpoints need for "resume gives the same
 * curves". Every consumer takes its own stream via `fork(label, index)` (PureJaxRL-style key
 * splitting), so adding a consumer never shifts another's numbers.
 */
import { xoroshiro128plusFromState } from 'pure-rand/generator/xoroshiro128plus';
import type { JumpableRandomGenerator } from 'pure-rand/types/JumpableRandomGenerator';

/** Serializable state of an {@link Rng}: the generator words. */
export type RngState = readonly number[];

/**
 * Expands a 32-bit seed into a full 128-bit xoroshiro state with splitmix32.
 *
 * Why not pure-rand's `xoroshiro128plus(seed)`: it sets the state to `[-1, ~seed, seed, 0]`, whose
 * first output is always -1 (u = 0.99999…) and whose next few are strongly seed-correlated. With
 * one short-lived stream per episode turn that bias decided every sampled action.
 */
function seededGenerator(seed: number): JumpableRandomGenerator {
  let x = seed | 0;
  const words: number[] = [];
  for (let i = 0; i < 4; i++) {
    x = (x + 0x9e3779b9) | 0;
    let z = x;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    words.push((z ^ (z >>> 16)) | 0);
  }
  if (!words.some((w) => w !== 0)) words[0] = 1; // the all-zero state is a fixed point
  return xoroshiro128plusFromState(words);
}

/** 32-bit FNV-1a hash of a string: turns fork labels into seeds. */
function hashLabel(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash | 0;
}

/**
 * A mutable random stream. Not shared between consumers: fork instead.
 * @example
 * const rng = Rng.fromSeed(7);
 * const envRng = rng.fork('env', 3);
 * envRng.int(10); // 0..9
 */
export class Rng {
  private constructor(
    private generator: JumpableRandomGenerator,
    /** Seed material this stream was derived from; forks hash it with their label. */
    private readonly lineage: number,
  ) {}

  /** A root stream from an integer seed. */
  static fromSeed(seed: number): Rng {
    return new Rng(seededGenerator(seed), seed | 0);
  }

  /** Restores a stream saved with {@link Rng.getState}. */
  static fromState(state: { words: RngState; lineage: number }): Rng {
    return new Rng(xoroshiro128plusFromState(state.words), state.lineage);
  }

  /** Full state, JSON-safe, for checkpoints. */
  getState(): { words: number[]; lineage: number } {
    return { words: [...this.generator.getState()], lineage: this.lineage };
  }

  /**
   * An independent child stream, determined only by this stream's seed lineage and the label —
   * not by how many numbers were drawn before. So `fork('env', 2)` is stable across code changes.
   */
  fork(label: string, index = 0): Rng {
    const childSeed = hashLabel(`${this.lineage}/${label}/${index}`);
    return new Rng(seededGenerator(childSeed), childSeed);
  }

  /** Uniform float in [0, 1) with 32 bits of randomness. */
  next(): number {
    return (this.generator.next() >>> 0) / 4294967296;
  }

  /** Uniform integer in [0, maxExclusive). */
  int(maxExclusive: number): number {
    if (!(maxExclusive > 0)) throw new RangeError(`Rng.int: maxExclusive must be > 0, got ${maxExclusive}`);
    return Math.floor(this.next() * maxExclusive);
  }

  /** Uniform pick from a non-empty array. */
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('Rng.pick: empty array');
    return items[this.int(items.length)] as T;
  }

  /** In-place Fisher–Yates shuffle; returns the same array. */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      const tmp = items[i] as T;
      items[i] = items[j] as T;
      items[j] = tmp;
    }
    return items;
  }

  /** Standard normal sample (Box–Muller). */
  normal(): number {
    const u = Math.max(this.next(), 1e-12);
    const v = this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }
}
