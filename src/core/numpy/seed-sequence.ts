/**
 * NumPy's `SeedSequence` (numpy/random/bit_generator.pyx, NumPy 1.17+): turns a seed integer into
 * well-mixed 32-bit words. Only what `np.random.SeedSequence(seed)` does for a plain non-negative
 * integer seed (no spawn key, pool of 4 words) is implemented; that is what Gymnasium's
 * `np_random(seed)` uses. All arithmetic is on uint32, as in NumPy.
 */

const POOL_SIZE = 4;
const INIT_A = 0x43b0d7e5;
const MULT_A = 0x931e8875;
const INIT_B = 0x8b51f9dd;
const MULT_B = 0x58f38ded;
const MIX_MULT_L = 0xca01f9dd;
const MIX_MULT_R = 0x4973f715;
const XSHIFT = 16;

/**
 * The 32-bit words of a non-negative integer, least significant first (NumPy's
 * `_coerce_to_uint32_array`; 0 gives one zero word).
 * @example seedWords(2n ** 32n + 5n) // [5, 1]
 */
export function seedWords(seed: bigint | number): number[] {
  // A safe integer splits into two words without a bigint (the usual case: a task's seed).
  if (typeof seed === 'number' && Number.isSafeInteger(seed) && seed >= 0) {
    const high = Math.floor(seed / 4294967296);
    return high === 0 ? [seed >>> 0] : [seed >>> 0, high];
  }
  let value = typeof seed === 'bigint' ? seed : BigInt(seed);
  if (value < 0n) throw new RangeError(`SeedSequence: seed must be non-negative, got ${value}`);
  const words: number[] = [];
  do {
    words.push(Number(value & 0xffffffffn));
    value >>= 32n;
  } while (value > 0n);
  return words;
}

/** A hashing state: NumPy threads `hash_const` through successive `hashmix` calls. */
class HashMix {
  constructor(private constant: number) {}

  mix(value: number): number {
    let v = (value ^ this.constant) >>> 0;
    this.constant = Math.imul(this.constant, MULT_A) >>> 0;
    v = Math.imul(v, this.constant) >>> 0;
    return (v ^ (v >>> XSHIFT)) >>> 0;
  }
}

function mix(x: number, y: number): number {
  const r = (Math.imul(MIX_MULT_L, x) - Math.imul(MIX_MULT_R, y)) >>> 0;
  return (r ^ (r >>> XSHIFT)) >>> 0;
}

/**
 * The entropy pool of `SeedSequence(seed)`: 4 uint32 words.
 * @example seedSequencePool(0) // [4265667335, 1328953910, 1320288413, 3365567143]
 */
export function seedSequencePool(seed: bigint | number): number[] {
  const entropy = seedWords(seed);
  const hash = new HashMix(INIT_A);
  const pool = new Array<number>(POOL_SIZE);
  for (let i = 0; i < POOL_SIZE; i++) pool[i] = hash.mix(i < entropy.length ? (entropy[i] as number) : 0);
  for (let src = 0; src < POOL_SIZE; src++) {
    for (let dst = 0; dst < POOL_SIZE; dst++) {
      if (src !== dst) pool[dst] = mix(pool[dst] as number, hash.mix(pool[src] as number));
    }
  }
  for (let src = POOL_SIZE; src < entropy.length; src++) {
    for (let dst = 0; dst < POOL_SIZE; dst++) pool[dst] = mix(pool[dst] as number, hash.mix(entropy[src] as number));
  }
  return pool;
}

/**
 * `SeedSequence(seed).generate_state(nWords, np.uint32)`: `nWords` uint32 words drawn from the pool.
 * (A uint64 request is the same words paired little-endian: word 2k is the low half of value k.)
 * @example generateState(0, 2) // [2968811710, 3677149159]
 */
export function generateState(seed: bigint | number, nWords: number): number[] {
  const pool = seedSequencePool(seed);
  const out = new Array<number>(nWords);
  let constant = INIT_B;
  for (let i = 0; i < nWords; i++) {
    let v = ((pool[i % POOL_SIZE] as number) ^ constant) >>> 0;
    constant = Math.imul(constant, MULT_B) >>> 0;
    v = Math.imul(v, constant) >>> 0;
    out[i] = (v ^ (v >>> XSHIFT)) >>> 0;
  }
  return out;
}
