/**
 * What the learning tests share with the spread study (`scripts/learning-spread.ts`, see
 * docs/testing.md): the seed a test trains with, and one line of figures on stdout per run.
 *
 * A test trains with its fixed seed unless `TURNWISE_LEARNING_SEED` says otherwise; only the study
 * sets it, to measure how far a test's figures move with the seed and with the CPU's BLAS kernels
 * (`OPENBLAS_CORETYPE`, `TURNWISE_NATIVE_BLAS=off`), from which each bound is chosen.
 */
import { createHash } from 'node:crypto';

/** The environment variable the spread study sets to retrain a learning test with another seed. */
export const LEARNING_SEED_VARIABLE = 'TURNWISE_LEARNING_SEED';

/** The line prefix the study reads figures after. */
export const FIGURES_PREFIX = 'learning-figures ';

/**
 * The seed to train with: `fixed`, or the study's `TURNWISE_LEARNING_SEED`.
 * @example const config = { seed: learningSeed(7), … };
 */
export function learningSeed(fixed: number): number {
  const raw = process.env[LEARNING_SEED_VARIABLE];
  if (raw === undefined || raw === '') return fixed;
  const seed = Number(raw);
  if (!Number.isSafeInteger(seed) || seed < 0) throw new Error(`${LEARNING_SEED_VARIABLE}=${JSON.stringify(raw)}: expected a non-negative integer`);
  return seed;
}

/**
 * Prints one run's figures (held-out success before and after, and any others the test checks)
 * as `learning-figures {json}`, before the test asserts on them, so a failing run reports them too.
 * @example reportFigures('sokoban-grpo', { seed, before: 0.45, after: 0.7 });
 */
export function reportFigures(test: string, figures: Readonly<Record<string, number>>): void {
  console.log(`${FIGURES_PREFIX}${JSON.stringify({ test, ...figures })}`);
}

/**
 * What a learning test file trains, as a short hash: its text without comments and assertion lines,
 * so that writing the spread into a comment or moving a bound does not make the study's earlier
 * runs of it stale.
 * @example testHash(readFileSync('test/learning/maze-grpo.test.ts', 'utf8')) // '3f2a…' (12 hex digits)
 */
export function testHash(text: string): string {
  const trained = text
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .split('\n')
    .map((l) => l.replace(/(^|\s)\/\/.*$/, '').trim())
    .filter((l) => l !== '' && !l.includes('expect('))
    .join('\n');
  return createHash('sha256').update(trained).digest('hex').slice(0, 12);
}
