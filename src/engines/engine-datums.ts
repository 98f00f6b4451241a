/**
 * Trajectories → the engine's token-level data (Tinker `Datum`s), token in / token out.
 *
 * One datum per training sequence, exactly as the in-process learner packs them
 * (`src/learner/pack.ts`): a turn's prompt ids followed by its sampled ids, with the turns of a
 * full-history context chained into one sequence. `inputTokens` is the sequence without its last
 * id, `targetTokens` the sequence shifted left by one; only sampled (agent) tokens that were real
 * choices carry weight, and each carries its behaviour log-prob and advantage.
 */
import type { Trajectory } from '../core/types.js';
import { packTrajectories } from '../learner/pack.js';
import type { EngineDatum } from './engine.js';

/** A datum plus where each weighted target came from, to map results back. */
export interface LocatedDatum {
  readonly datum: EngineDatum;
  /** [k] positions (in the datum) of the targets that are action tokens. */
  readonly positions: Int32Array;
  /** [k] the trajectory each of those targets belongs to. */
  readonly trajectoryIndex: Int32Array;
  /** [k] the index of each among its trajectory's action tokens (the token layout's slot). */
  readonly tokenIndex: Int32Array;
  /** [k] 1 where the target trains (a real choice), 0 where it was forced. */
  readonly lossMask: Float32Array;
}

/**
 * The data of `trajectories` (advantages filled in later: all zero here).
 * Shape: trajectories [B] → one datum per sequence, each [n] with n = sequence length − 1.
 * @example const located = trajectoryDatums(trajectories); located[0].datum.targetTokens
 */
export function trajectoryDatums(trajectories: readonly Trajectory[]): LocatedDatum[] {
  // One sequence per micro-batch (a budget of 1 token forces it), in pack's deterministic order.
  const packed = packTrajectories(trajectories, new Float32Array(trajectories.length), { maxTokensPerBatch: 1 });
  return packed.map(({ batch, signal }) => {
    const n = batch.seqLen - 1;
    const inputTokens = batch.inputIds.slice(0, n);
    const targetTokens = batch.inputIds.slice(1, n + 1);
    const weights = new Float32Array(n);
    const samplingLogprobs = new Float32Array(n);
    const k = batch.targetPositions.length;
    const positions = new Int32Array(k);
    for (let j = 0; j < k; j++) {
      // Position p predicts the token at p + 1, which is target p of the shifted sequence.
      const p = batch.targetPositions[j] as number;
      positions[j] = p;
      weights[p] = signal.lossMask[j] as number;
      samplingLogprobs[p] = signal.oldLogprobs[j] as number;
    }
    return {
      datum: { inputTokens, targetTokens, weights, samplingLogprobs, advantages: new Float32Array(n) },
      positions,
      trajectoryIndex: signal.trajectoryIndex.slice(),
      tokenIndex: signal.tokenIndex.slice(),
      lossMask: signal.lossMask.slice(),
    };
  });
}
