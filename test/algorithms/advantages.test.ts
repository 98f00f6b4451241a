import { describe, expect, it } from 'vitest';
import { grpoAdvantagesReference } from '../../src/algorithms/advantages-reference.js';
import {
  type AdvantageInput,
  advantageEstimators,
  computeAdvantages,
  type EstimatorOptions,
  estimatorNames,
  type GrpoOptions,
} from '../../src/algorithms/advantages.js';
import { InvalidArgumentError } from '../../src/core/errors.js';
import { Rng } from '../../src/core/rng.js';

const grpo: GrpoOptions = { name: 'grpo', normalizeStd: true, epsilon: 1e-6 };
const drGrpo: GrpoOptions = { name: 'grpo', normalizeStd: false, epsilon: 1e-6 };

/** Seeded random batch: `groups` groups of random sizes 1..6, rewards binary or continuous. */
function randomInput(rng: Rng, groups: number, options: GrpoOptions): AdvantageInput<GrpoOptions> {
  const rewards: number[] = [];
  const groupIds: string[] = [];
  for (let g = 0; g < groups; g++) {
    const size = 1 + rng.int(6);
    const binary = rng.next() < 0.5;
    const uniform = rng.next() < 0.2;
    const first = binary ? rng.int(2) : rng.normal();
    for (let k = 0; k < size; k++) {
      rewards.push(uniform ? first : binary ? rng.int(2) : rng.normal() * 3);
      groupIds.push(`task_${g}`);
    }
  }
  // Interleave groups so the estimator cannot rely on contiguous groups.
  const order = rng.shuffle(rewards.map((_, i) => i));
  return { rewards: Float32Array.from(order, (i) => rewards[i]), groupIds: order.map((i) => groupIds[i]), options };
}

function byGroup(input: AdvantageInput, values: Float32Array): Map<string, number[]> {
  const groups = new Map<string, number[]>();
  input.groupIds.forEach((id, i) => {
    groups.set(id, [...(groups.get(id) ?? []), values[i]]);
  });
  return groups;
}

describe('grpo advantages', () => {
  it('matches hand-computed values with the unbiased std', () => {
    // Group a: rewards [1, 0, 0, 0]. mean = 0.25; squared deviations 0.5625 + 3 x 0.0625 = 0.75;
    // unbiased variance 0.75 / 3 = 0.25, std 0.5 -> A = 0.75 / 0.5 = 1.5 and -0.25 / 0.5 = -0.5.
    // Group b: rewards [2, 4]. mean 3, unbiased std sqrt((1 + 1) / 1) = sqrt(2) -> A = -/+ 1/sqrt(2).
    const input = { rewards: Float32Array.of(1, 2, 0, 4, 0, 0), groupIds: ['a', 'b', 'a', 'b', 'a', 'a'], options: { ...grpo, epsilon: 0 } };
    const { advantages, returns } = computeAdvantages(input);
    const r = Math.SQRT1_2;
    expect(Array.from(advantages)).toEqual(Array.from(Float32Array.of(1.5, -r, -0.5, r, -0.5, -0.5)));
    expect(Array.from(returns)).toEqual(Array.from(advantages));
  });

  it('adds epsilon to the std before dividing (verl 1e-6)', () => {
    // rewards [1, 0]: mean 0.5, unbiased std sqrt(0.5) = 0.70711; A = 0.5 / (0.70711 + 0.1).
    const { advantages } = computeAdvantages({ rewards: Float32Array.of(1, 0), groupIds: ['g', 'g'], options: { ...grpo, epsilon: 0.1 } });
    expect(advantages[0]).toBeCloseTo(0.5 / (Math.SQRT1_2 + 0.1), 6);
    expect(advantages[1]).toBeCloseTo(-0.5 / (Math.SQRT1_2 + 0.1), 6);
  });

  it('subtracts the group mean only for Dr. GRPO (normalizeStd false)', () => {
    // Group [1, 0, 0, 0]: mean 0.25 -> [0.75, -0.25, -0.25, -0.25].
    const { advantages } = computeAdvantages({ rewards: Float32Array.of(1, 0, 0, 0), groupIds: ['g', 'g', 'g', 'g'], options: drGrpo });
    expect(Array.from(advantages)).toEqual([0.75, -0.25, -0.25, -0.25]);
  });

  it('gives a singleton group advantage 0', () => {
    const { advantages } = computeAdvantages({ rewards: Float32Array.of(1, 1, 0), groupIds: ['alone', 'g', 'g'], options: grpo });
    expect(advantages[0]).toBe(0);
    expect(advantages[1]).toBeGreaterThan(0);
  });

  it('gives every member of a uniform group exactly 0, even for rewards with no exact float mean', () => {
    for (const value of [0, 1, 0.7, -3.3, 0.1]) {
      const { advantages } = computeAdvantages({ rewards: Float32Array.of(value, value, value), groupIds: ['g', 'g', 'g'], options: grpo });
      expect(Array.from(advantages)).toEqual([0, 0, 0]);
    }
  });

  it('has zero mean per group and unit unbiased std per non-uniform group (property, seeded)', () => {
    const rng = Rng.fromSeed(11);
    for (let trial = 0; trial < 50; trial++) {
      const input = randomInput(rng, 1 + rng.int(8), { ...grpo, epsilon: 0 });
      const { advantages } = computeAdvantages(input);
      for (const [id, values] of byGroup(input, advantages)) {
        const rewards = byGroup(input, input.rewards).get(id) ?? [];
        const mean = values.reduce((a, b) => a + b, 0) / values.length;
        expect(Math.abs(mean)).toBeLessThan(1e-5);
        if (values.length > 1 && rewards.some((r) => r !== rewards[0])) {
          const variance = values.reduce((a, b) => a + (b - mean) ** 2, 0) / (values.length - 1);
          expect(Math.sqrt(variance)).toBeCloseTo(1, 5);
        } else {
          expect(values.every((v) => v === 0)).toBe(true);
        }
      }
    }
  });

  it('equals the plain-loop reference on seeded random batches (GRPO and Dr. GRPO)', () => {
    const rng = Rng.fromSeed(5);
    for (let trial = 0; trial < 50; trial++) {
      const options = trial % 2 === 0 ? grpo : drGrpo;
      const input = randomInput(rng, 1 + rng.int(10), options);
      const fast = advantageEstimators.grpo(input).advantages;
      const reference = grpoAdvantagesReference(input).advantages;
      for (let i = 0; i < fast.length; i++) expect(Math.abs(fast[i] - reference[i])).toBeLessThan(1e-5);
    }
  });

  it('handles an empty batch', () => {
    expect(computeAdvantages({ rewards: new Float32Array(0), groupIds: [], options: grpo }).advantages.length).toBe(0);
  });
});

describe('computeAdvantages', () => {
  it('rejects an unknown estimator name, listing the valid ones', () => {
    const options = { name: 'ppo-magic', normalizeStd: true, epsilon: 0 } as unknown as EstimatorOptions;
    expect(() => computeAdvantages({ rewards: Float32Array.of(1), groupIds: ['g'], options })).toThrow(InvalidArgumentError);
    expect(() => computeAdvantages({ rewards: Float32Array.of(1), groupIds: ['g'], options })).toThrow(
      /options\.name.*unknown advantage estimator 'ppo-magic'; valid names: gae, grpo, rloo, reinforcePlusPlus, reinforce/,
    );
    expect(estimatorNames).toEqual(['gae', 'grpo', 'rloo', 'reinforcePlusPlus', 'reinforce']);
  });

  it('rejects mismatched group ids and non-finite rewards, naming the field', () => {
    expect(() => computeAdvantages({ rewards: Float32Array.of(1, 0), groupIds: ['g'], options: grpo })).toThrow(/'groupIds'/);
    expect(() => computeAdvantages({ rewards: Float32Array.of(1, Number.NaN), groupIds: ['g', 'g'], options: grpo })).toThrow(/'rewards\[1\]'/);
    expect(() => computeAdvantages({ rewards: Float32Array.of(1), groupIds: ['g'], options: { ...grpo, epsilon: -1 } })).toThrow(
      /'options\.epsilon'/,
    );
  });
});
