/**
 * The contract between batch packing (`src/learner/pack.ts`), the model's `forwardTrain` and the
 * loss: a padded batch of token sequences plus the flat list of trained (target) positions.
 *
 * Only action tokens are targets, so the model computes output logits only at `targetPositions`
 * (a gather before the LM head), which is far cheaper than a full [B, T, V] head.
 */

/** Padded input sequences and the positions whose next-token distribution is trained. */
export interface TrainBatch {
  /** Number of sequences. */
  readonly batchSize: number;
  /** Padded length of every sequence. */
  readonly seqLen: number;
  /** [batchSize * seqLen] input ids, right-padded with the pad id. Row-major. */
  readonly inputIds: Int32Array;
  /** [batchSize * seqLen] 1 on real tokens, 0 on padding. */
  readonly attentionMask: Uint8Array;
  /**
   * [N] flat index `b * seqLen + t` of the position whose output predicts target `n` (that is,
   * the position just before the target token).
   */
  readonly targetPositions: Int32Array;
  /** [N] target token ids. */
  readonly targetIds: Int32Array;
  /**
   * Constrained decoding sets per target (CSR over targets): the allowed ids of target `n` are
   * `allowedIds[allowedOffsets[n] .. allowedOffsets[n + 1])`. An empty range means unconstrained
   * (full vocabulary). Null when no target is constrained.
   */
  readonly allowedOffsets: Int32Array | null;
  readonly allowedIds: Int32Array | null;
}

/** Per-target training signal, aligned with `TrainBatch.targetIds`. */
export interface TargetSignal {
  /** [N] behaviour log-probs recorded at sampling time. */
  readonly oldLogprobs: Float32Array;
  /** [N] advantages. */
  readonly advantages: Float32Array;
  /** [N] 1 = trains, 0 = forced token (no loss). */
  readonly lossMask: Float32Array;
  /** [N] weights version that produced each target. */
  readonly policyVersions: Int32Array;
  /** [N] index of the trajectory each target came from (for sequence-level aggregation). */
  readonly trajectoryIndex: Int32Array;
  /** [N] index of each target among its trajectory's action tokens, turn by turn (per-token advantages, values). */
  readonly tokenIndex: Int32Array;
}
