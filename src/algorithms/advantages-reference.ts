/**
 * Readable reference for {@link grpoAdvantages} (STYLE §2): for each trajectory, collect its
 * group's rewards and apply the formula literally. O(n²), for tests only.
 */
import type { AdvantageInput, AdvantageOutput, GrpoOptions } from './advantages.js';

/**
 * GRPO: Shao et al. 2024, arXiv:2402.03300; Dr. GRPO: Liu et al. 2025, arXiv:2503.20783.
 * Shape: rewards [numTrajectories] → advantages [numTrajectories].
 *
 * GRPO advantage, written as the formula reads: `A_i = (r_i − mean_g) / (std_g + ε)` with the
 * unbiased std, `A_i = r_i − mean_g` without std normalisation (Dr. GRPO), 0 for a singleton group
 * or a group of equal rewards.
 * @example
 * grpoAdvantagesReference({ rewards: Float32Array.of(1, 0), groupIds: ['g', 'g'],
 *   options: { name: 'grpo', normalizeStd: true, epsilon: 0 } }).advantages; // ≈ [0.7071, -0.7071]
 */
export function grpoAdvantagesReference(input: AdvantageInput<GrpoOptions>): AdvantageOutput {
  const { rewards, groupIds, options } = input;
  const advantages = new Float32Array(rewards.length);
  for (let i = 0; i < rewards.length; i++) {
    const group: number[] = [];
    for (let j = 0; j < rewards.length; j++) {
      if (groupIds[j] === groupIds[i]) group.push(rewards[j]);
    }
    if (group.length < 2 || group.every((r) => r === group[0])) {
      advantages[i] = 0;
      continue;
    }
    const mean = group.reduce((a, b) => a + b, 0) / group.length;
    const variance = group.reduce((a, b) => a + (b - mean) ** 2, 0) / (group.length - 1);
    const std = Math.sqrt(variance);
    advantages[i] = options.normalizeStd ? (rewards[i] - mean) / (std + options.epsilon) : rewards[i] - mean;
  }
  return { advantages, returns: advantages.slice() };
}
