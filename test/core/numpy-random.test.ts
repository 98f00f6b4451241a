import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generateState, NumpyGenerator, Pcg64, seedSequencePool, seedWords } from '../../src/core/numpy/index.js';

/**
 * Vectors written by scripts/numpy-random-vectors.py with Debian's NumPy 1.24.2 (the NumPy that
 * AgentGym's BabyAI server ran): per seed, the SeedSequence pool and state words, the seeded PCG64
 * state, raw 64-bit outputs, `random()`, `integers(low, high)` over every code path and an
 * interleaving of `integers` and `uniform` as Minigrid makes it.
 */
interface SeedVectors {
  seed: string;
  pool: number[];
  state32: number[];
  pcg: { state: string; inc: string };
  raw: string[];
  random: number[];
  integers: [string, string, string][];
  mixed: [string, number, number, number][];
}
const vectors = JSON.parse(readFileSync(new URL('./fixtures/numpy-random-vectors.json', import.meta.url), 'utf8')) as { numpy: string; seeds: SeedVectors[] };

describe('NumPy random port (SeedSequence -> PCG64 -> Generator)', () => {
  it('was checked against NumPy 1.24.2 vectors for a dozen seeds, including ones wider than 32 and 64 bits', () => {
    expect(vectors.numpy).toBe('1.24.2');
    expect(vectors.seeds.map((s) => s.seed)).toContain('18446744073709551623');
  });

  for (const v of vectors.seeds) {
    describe(`seed ${v.seed}`, () => {
      const seed = BigInt(v.seed);

      it('mixes the seed into the same SeedSequence pool and state words', () => {
        expect(seedSequencePool(seed)).toEqual(v.pool);
        expect(generateState(seed, 8)).toEqual(v.state32);
      });

      it('seeds PCG64 to the same 128-bit state and increment', () => {
        const { state, inc } = Pcg64.fromSeed(seed).getState();
        expect({ state: state.toString(), inc: inc.toString() }).toEqual(v.pcg);
      });

      // A seed given as a plain number takes the path without bigints (every episode reset does).
      if (seed <= BigInt(Number.MAX_SAFE_INTEGER)) {
        it('gives the same pool and PCG64 state for the seed as a number', () => {
          expect(seedSequencePool(Number(seed))).toEqual(v.pool);
          const { state, inc } = Pcg64.fromSeed(Number(seed)).getState();
          expect({ state: state.toString(), inc: inc.toString() }).toEqual(v.pcg);
        });
      }

      it('gives the same raw 64-bit outputs', () => {
        const bits = Pcg64.fromSeed(seed);
        expect(v.raw.map(() => bits.nextUint64().toString())).toEqual(v.raw);
      });

      it('gives the same random() doubles, bit for bit', () => {
        const g = NumpyGenerator.fromSeed(seed);
        expect(v.random.map(() => g.random())).toEqual(v.random);
      });

      it('gives the same integers(low, high) on every bounded-integer path, in one stream', () => {
        const g = NumpyGenerator.fromSeed(seed);
        const got = v.integers.map(([low, high]) => [low, high, g.integersBig(BigInt(low), BigInt(high)).toString()]);
        expect(got).toEqual(v.integers);
      });

      it('gives the same interleaved integers and uniform draws through the number API', () => {
        const g = NumpyGenerator.fromSeed(seed);
        const got = v.mixed.map(([kind, low, high]) => [kind, low, high, kind === 'uniform' ? g.uniform(low, high) : g.integers(low, high)]);
        expect(got).toEqual(v.mixed);
      });
    });
  }

  it('draws nothing for a range of one value (integers(0, 1)), as NumPy does', () => {
    const a = NumpyGenerator.fromSeed(3);
    const b = NumpyGenerator.fromSeed(3);
    expect(a.integers(0, 1)).toBe(0);
    expect(a.integers(4, 5)).toBe(4);
    expect(a.random()).toBe(b.random());
  });

  it('refuses empty ranges, unsafe bounds and negative seeds with the values at fault', () => {
    const g = NumpyGenerator.fromSeed(0);
    expect(() => g.integers(3, 3)).toThrow(/low >= high \(3, 3\)/);
    expect(() => g.integers(0, 2 ** 60)).toThrow(/safe integers/);
    expect(() => seedWords(-1)).toThrow(/non-negative, got -1/);
  });
});
