/**
 * Readable references for the estimators (a plain reference next to each fast kernel, with an
 * equivalence test between them): each written as the paper's formula reads,
 * on the list of a row's agent tokens (environment tokens dropped first, instead of carried
 * through), with sums written out rather than recursions. O(n²) in places; for tests only.
 */
import type {
  AdvantageInput,
  AdvantageOutput,
  GaeOptions,
  GrpoOptions,
  ReinforceOptions,
  ReinforcePlusPlusOptions,
  RlooOptions,
} from './advantage-input.js';

/** Each row's agent-token slots (indices into the flat [B·T] arrays). */
function agentSlots(input: AdvantageInput): number[][] {
  const rows = input.groupIds.length;
  const seqLen = input.seqLen ?? 1;
  const out: number[][] = [];
  for (let b = 0; b < rows; b++) {
    const slots: number[] = [];
    for (let t = 0; t < seqLen; t++) if ((input.mask?.[b * seqLen + t] ?? 1) === 1) slots.push(b * seqLen + t);
    out.push(slots);
  }
  return out;
}

const score = (input: AdvantageInput, b: number): number => {
  const seqLen = input.seqLen ?? 1;
  let s = 0;
  for (let t = 0; t < seqLen; t++) s += input.rewards[b * seqLen + t];
  return s;
};

/** Writes `perRow[b]` onto row b's agent tokens. */
function broadcast(input: AdvantageInput, perRow: number[]): AdvantageOutput {
  const out = new Float32Array(input.rewards.length);
  agentSlots(input).forEach((slots, b) => {
    for (const i of slots) out[i] = perRow[b];
  });
  return { advantages: out, returns: out.slice() };
}

/** Mean and unbiased variance of a list. */
function meanVar(xs: number[]): { mean: number; variance: number } {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  return { mean, variance: xs.length < 2 ? 0 : xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (xs.length - 1) };
}

/** Whitening over every agent token of the batch, written out. */
function whiten(x: Float32Array, slots: number[][]): Float32Array {
  const all = slots.flat();
  const out = new Float32Array(x.length);
  if (all.length === 0) return out;
  const { mean, variance } = meanVar(all.map((i) => x[i]));
  for (const i of all) out[i] = all.length < 2 ? x[i] - mean : (x[i] - mean) / Math.sqrt(variance + 1e-8);
  return out;
}

/**
 * GRPO: Shao et al. 2024, arXiv:2402.03300; Dr. GRPO: Liu et al. 2025, arXiv:2503.20783.
 * Shape: rewards [B·T] → advantages [B·T].
 *
 * `A_i = (s_i − mean_g) / (std_g + ε)` with the unbiased std (`s_i − mean_g` without std
 * normalisation), 0 for a singleton group or a group of equal scores.
 * @example
 * grpoAdvantagesReference({ rewards: Float32Array.of(1, 0), groupIds: ['g', 'g'],
 *   options: { name: 'grpo', normalizeStd: true, epsilon: 0 } }).advantages; // ≈ [0.7071, -0.7071]
 */
export function grpoAdvantagesReference(input: AdvantageInput<GrpoOptions>): AdvantageOutput {
  const { groupIds, options } = input;
  if (options.credit === 'turn') {
    return turnCreditReference(input, (own, group) => {
      if (group.length < 2 || group.every((g) => g === group[0])) return 0;
      const { mean, variance } = meanVar(group);
      return options.normalizeStd ? (own - mean) / (Math.sqrt(variance) + options.epsilon) : own - mean;
    });
  }
  const perRow = groupIds.map((id, i) => {
    const group = groupIds.flatMap((other, j) => (other === id ? [score(input, j)] : []));
    if (group.length < 2 || group.every((r) => r === group[0])) return 0;
    const { mean, variance } = meanVar(group);
    return options.normalizeStd ? (score(input, i) - mean) / (Math.sqrt(variance) + options.epsilon) : score(input, i) - mean;
  });
  return broadcast(input, perRow);
}

/**
 * RLOO: Ahmadian et al. 2024, arXiv:2402.14740.
 * Shape: rewards [B·T] → advantages [B·T].
 *
 * `A_i = s_i − mean(s_j : j ≠ i in the group)`; 0 when the group has no other member.
 * @example
 * rlooAdvantagesReference({ rewards: Float32Array.of(1, 0, 0), groupIds: ['g', 'g', 'g'], options: { name: 'rloo' } }).advantages; // [1, -0.5, -0.5]
 */
export function rlooAdvantagesReference(input: AdvantageInput<RlooOptions>): AdvantageOutput {
  if (input.options.credit === 'turn') {
    return turnCreditReference(input, (own, group) => (group.length < 2 ? 0 : own - (group.reduce((a, b) => a + b, 0) - own) / (group.length - 1)));
  }
  const perRow = input.groupIds.map((id, i) => {
    const others = input.groupIds.flatMap((other, j) => (other === id && j !== i ? [score(input, j)] : []));
    return others.length === 0 ? 0 : score(input, i) - others.reduce((a, b) => a + b, 0) / others.length;
  });
  return broadcast(input, perRow);
}

/**
 * Turn-level group credit, written out: at each agent token of row i with turn id k, the row's
 * return-to-go `G_i(k)` = Σ of its rewards on agent tokens whose turn id is ≥ k, and the group's
 * `G_j(k)` computed the same way (0 for a sample with no turn ≥ k), handed to `advantageOf`.
 */
function turnCreditReference(input: AdvantageInput, advantageOf: (own: number, group: number[]) => number): AdvantageOutput {
  const slots = agentSlots(input);
  const turnOf = (i: number): number => input.turnIds?.[i] ?? 0;
  const returnToGo = (b: number, k: number): number => (slots[b] ?? []).reduce((sum, i) => sum + (turnOf(i) >= k ? input.rewards[i] : 0), 0);
  const out = new Float32Array(input.rewards.length);
  slots.forEach((row, b) => {
    const group = input.groupIds.flatMap((id, j) => (id === input.groupIds[b] ? [j] : []));
    for (const i of row) out[i] = advantageOf(returnToGo(b, turnOf(i)), group.map((j) => returnToGo(j, turnOf(i))));
  });
  return { advantages: out, returns: out.slice() };
}

/** `Σ_{l ≥ k} γ^{l−k} r_l` over a list, written out. */
function discountedSum(rewards: number[], k: number, gamma: number): number {
  let g = 0;
  for (let l = k; l < rewards.length; l++) g += gamma ** (l - k) * rewards[l];
  return g;
}

/**
 * REINFORCE++: Hu 2025, arXiv:2501.03262.
 * Shape: rewards [B·T] → advantages, returns [B·T].
 *
 * Per row, on its agent tokens k: `G_k = Σ_{l ≥ k} γ^{l−k} r_l`; advantages: G whitened over the batch.
 * @example
 * reinforcePlusPlusReference({ rewards: Float32Array.of(1, 0), groupIds: ['a', 'b'], options: { name: 'reinforcePlusPlus', gamma: 1 } }).advantages; // ≈ [0.7071, -0.7071]
 */
export function reinforcePlusPlusReference(input: AdvantageInput<ReinforcePlusPlusOptions>): AdvantageOutput {
  const slots = agentSlots(input);
  const returns = rowReturns(input, slots, input.options.gamma);
  return { advantages: whiten(returns, slots), returns };
}

function rowReturns(input: AdvantageInput, slots: number[][], gamma: number): Float32Array {
  const returns = new Float32Array(input.rewards.length);
  for (const row of slots) {
    const rewards = row.map((i) => input.rewards[i]);
    row.forEach((i, k) => {
      returns[i] = discountedSum(rewards, k, gamma);
    });
  }
  return returns;
}

/**
 * REINFORCE with a running baseline: Williams 1992 (no arXiv id).
 * Shape: rewards [B·T] → advantages, returns [B·T].
 * @example
 * reinforceReference({ rewards: Float32Array.of(1, 0), groupIds: ['a', 'b'], options: { name: 'reinforce', gamma: 1, baselineMomentum: 0.9 } }).advantages; // [0.5, -0.5]
 */
export function reinforceReference(input: AdvantageInput<ReinforceOptions>): AdvantageOutput {
  const slots = agentSlots(input);
  const returns = rowReturns(input, slots, input.options.gamma);
  const all = slots.flat();
  if (all.length === 0) return { advantages: new Float32Array(returns.length), returns, ...(input.state ? { state: input.state } : {}) };
  const mean = all.reduce((a, i) => a + returns[i], 0) / all.length;
  const first = input.state === undefined || input.state.batches === 0;
  const baseline = first ? mean : (input.state?.runningBaseline ?? 0);
  const advantages = new Float32Array(returns.length);
  for (const i of all) advantages[i] = returns[i] - baseline;
  const m = input.options.baselineMomentum;
  const runningBaseline = first ? mean : m * baseline + (1 - m) * mean;
  return { advantages, returns, state: { runningBaseline, batches: (input.state?.batches ?? 0) + 1 } };
}

/**
 * GAE: Schulman et al. 2016, arXiv:1506.02438, eq. 16: `A_k = Σ_{l ≥ 0} (γλ)^l δ_{k+l}`,
 * `δ_k = r_k + γ·V_{k+1} − V_k` (V past the end = 0), on the row's agent tokens (token level) or
 * turns (turn level: reward summed over the turn, value at its first agent token).
 * Shape: rewards, values [B·T] → advantages, returns [B·T].
 * @example
 * gaeReference({ rewards: Float32Array.of(0, 1), values: new Float32Array(2), seqLen: 2, groupIds: ['a'],
 *   options: { name: 'gae', gamma: 0.5, lambda: 1, level: 'token', whiten: false } }).advantages; // [0.5, 1]
 */
export function gaeReference(input: AdvantageInput<GaeOptions>): AdvantageOutput {
  const { gamma, lambda, level, whiten: doWhiten } = input.options;
  const values = input.values ?? new Float32Array(input.rewards.length);
  const slots = agentSlots(input);
  const advantages = new Float32Array(input.rewards.length);
  const returns = new Float32Array(input.rewards.length);
  for (const row of slots) {
    // Steps: one per agent token, or one per turn (its agent tokens in order).
    const steps: number[][] = [];
    for (const i of row) {
      const last = steps.at(-1);
      if (level === 'turn' && last !== undefined && input.turnIds?.[last[0]] === input.turnIds?.[i]) last.push(i);
      else steps.push([i]);
    }
    const r = steps.map((s) => s.reduce((a, i) => a + input.rewards[i], 0));
    const v = steps.map((s) => values[s[0]]);
    const delta = steps.map((_, k) => r[k] + gamma * (v[k + 1] ?? 0) - v[k]);
    steps.forEach((s, k) => {
      let a = 0;
      for (let l = 0; k + l < steps.length; l++) a += (gamma * lambda) ** l * delta[k + l];
      for (const i of s) {
        advantages[i] = a;
        returns[i] = a + v[k];
      }
    });
  }
  return { advantages: doWhiten ? whiten(advantages, slots) : advantages, returns };
}
