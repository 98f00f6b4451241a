/**
 * Generalized advantage estimation for multi-turn trajectories: TD steps over agent tokens only.
 *
 * Environment (and forced, and padding) tokens have mask 0: the recursion state — the next value
 * and the running GAE sum — is carried across them unchanged, so inserting observation tokens
 * between turns changes nothing, and the terminal reward must sit on the last agent token (a
 * reward on a masked token is rejected by {@link checkAdvantageInput}; AgentGym-RL puts it on a
 * masked env token and loses it, reference §3.2).
 */
import { InvalidArgumentError } from '../core/errors.js';
import { type AdvantageInput, type AdvantageOutput, checkAdvantageInput, checkRange, type GaeOptions, maskedWhiten, turnSpans } from './advantage-input.js';

/**
 * GAE: Schulman et al. 2016, arXiv:1506.02438 (verl `compute_gae_advantage_return`, multi-turn).
 * Shape: rewards, values [B·T] (+ turnIds [B·T] at `level: 'turn'`) → advantages, returns [B·T].
 *
 * Token level: `δ_t = r_t + γ·V_next − V_t`, `A_t = δ_t + γλ·A_next`, where "next" is the next
 * agent token of the row (0 past the last one). Turn level: a turn's reward is the sum over its
 * agent tokens, its value the value at its first agent token, and one TD step per turn; the turn's
 * advantage and return are broadcast to its agent tokens. Returns are `A + V` before whitening;
 * advantages are whitened over the batch's agent tokens when `whiten` is set.
 * @example
 * gaeAdvantages({ rewards: Float32Array.of(0, 0, 1), values: new Float32Array(3), mask: Float32Array.of(1, 0, 1),
 *   seqLen: 3, groupIds: ['a'], options: { name: 'gae', gamma: 1, lambda: 1, level: 'token', whiten: false } }).returns;
 * // [1, 0, 1]
 */
export function gaeAdvantages(input: AdvantageInput<GaeOptions>): AdvantageOutput {
  const { rows, seqLen, rewards, mask } = checkAdvantageInput(input);
  const { options } = input;
  checkRange('options.gamma', options.gamma, 0, 1);
  checkRange('options.lambda', options.lambda, 0, 1);
  const values = input.values;
  if (values === undefined) throw InvalidArgumentError.format('values', 'GAE needs critic values at every token (got none)');
  const advantages = new Float32Array(rows * seqLen);
  const returns = new Float32Array(rows * seqLen);
  if (options.level === 'turn') {
    const turnIds = input.turnIds;
    if (turnIds === undefined) throw InvalidArgumentError.format('turnIds', "turn-level GAE needs the turn index of every token (got none)");
    for (let b = 0; b < rows; b++) turnLevelRow(b * seqLen, seqLen, rewards, values, mask, turnIds, options, advantages, returns);
  } else {
    for (let b = 0; b < rows; b++) {
      let nextValue = 0;
      let running = 0;
      for (let t = seqLen - 1; t >= 0; t--) {
        const i = b * seqLen + t;
        if (mask[i] === 0) continue; // carried through unchanged
        const delta = rewards[i] + options.gamma * nextValue - values[i];
        running = delta + options.gamma * options.lambda * running;
        advantages[i] = running;
        returns[i] = running + values[i];
        nextValue = values[i];
      }
    }
  }
  return { advantages: options.whiten ? maskedWhiten(advantages, mask) : advantages, returns };
}

/** One row of turn-level GAE, written into `advantages`/`returns` at [start, start + seqLen). */
function turnLevelRow(
  start: number,
  seqLen: number,
  rewards: Float32Array,
  values: Float32Array,
  mask: Float32Array,
  turnIds: Int32Array,
  options: GaeOptions,
  advantages: Float32Array,
  returns: Float32Array,
): void {
  // Turns in order: [first slot, last slot] of agent tokens, summed reward, value at the first token.
  const turns = turnSpans(start, seqLen, mask, turnIds, rewards).map((t) => ({ ...t, value: values[t.first] }));
  let nextValue = 0;
  let running = 0;
  for (let k = turns.length - 1; k >= 0; k--) {
    const turn = turns[k];
    const delta = turn.reward + options.gamma * nextValue - turn.value;
    running = delta + options.gamma * options.lambda * running;
    for (let i = turn.first; i <= turn.last; i++) {
      if (mask[i] === 0) continue;
      advantages[i] = running;
      returns[i] = running + turn.value;
    }
    nextValue = turn.value;
  }
}
