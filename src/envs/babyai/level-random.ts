/**
 * The random stream a BabyAI level draws from, and the two generators behind it:
 *
 * - `minigrid`: NumPy's `Generator(PCG64(SeedSequence(seed)))`, the stream Gymnasium gives
 *   Minigrid's `np_random` on `reset(seed=seed)`, so that the levels draw exactly what Minigrid
 *   2.4.0 draws (AgentGym's BabyAI server runs it);
 * - `turnwise`: turnwise's own xoroshiro stream (`core/rng.ts`), forked per level and per
 *   rejected attempt (the worlds turnwise generated before it matched Minigrid).
 */
import { NumpyGenerator } from '../../core/numpy/index.js';
import { Rng } from '../../core/rng.js';

/** What level generation draws: `int(n)` uniform in [0, n), `pick`, `next()` uniform in [0, 1). */
export interface LevelRandom {
  int(maxExclusive: number): number;
  pick<T>(items: readonly T[]): T;
  next(): number;
}

/** Which stream and which level semantics generate a world. */
export type BabyAIGenerator = 'minigrid' | 'turnwise';

/**
 * Minigrid's draws on NumPy's stream: `_rand_int(low, high)` is `integers(low, high)`, which is
 * `low + integers(0, high - low)` draw for draw; `_rand_elem` indexes with one `integers`;
 * `_rand_float(0, 1)` is `uniform(0, 1)`.
 * @example new MinigridRandom(0).int(6) // Minigrid's first `_rand_int(0, 6)` after `reset(seed=0)`
 */
export class MinigridRandom implements LevelRandom {
  private readonly g: NumpyGenerator;

  constructor(seed: number) {
    this.g = NumpyGenerator.fromSeed(seed);
  }

  int(maxExclusive: number): number {
    return this.g.integers(0, maxExclusive);
  }

  pick<T>(items: readonly T[]): T {
    return items[this.g.integers(0, items.length)] as T;
  }

  next(): number {
    return this.g.uniform(0, 1);
  }
}

/**
 * turnwise's stream for a level: one fork per (level, seed).
 * @example turnwiseLevelRandom('GoToRedBall', 3).int(6)
 */
export function turnwiseLevelRandom(levelName: string, seed: number): Rng {
  return Rng.fromSeed(seed).fork(`babyai/${levelName}`);
}
