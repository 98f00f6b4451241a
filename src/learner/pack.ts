/**
 * Trajectories → padded training micro-batches, token-in token-out.
 *
 * Each turn contributes the sequence `promptTokens ++ actionTokens`, and its action tokens are the
 * targets. When a turn's prompt starts with the previous turn's whole sequence (full-history
 * contexts), the two turns are chained into ONE sequence: the later sequence already contains the
 * earlier action at the same positions, so training it once gives both turns' targets without
 * duplicating the shared prefix. Sequences are sorted by length (longest first) and cut into
 * micro-batches of at most `maxTokensPerBatch` padded tokens (right padding with {@link PAD_ID}),
 * of about equal work (`micro-batch-cuts.ts`).
 */
import { InvalidArgumentError } from '../core/errors.js';
import type { Trajectory, Turn } from '../core/types.js';
import type { TargetSignal, TrainBatch } from '../models/train-batch.js';
import { microBatchCuts } from './micro-batch-cuts.js';

/** Id written into padded positions (attention mask 0 there). */
export const PAD_ID = 0;

/** Options of {@link packTrajectories}. */
export interface PackOptions {
  /** Cap on padded tokens (batchSize × seqLen) per micro-batch. A single longer sequence gets a micro-batch of its own. */
  readonly maxTokensPerBatch: number;
  /**
   * Leave out trajectories whose advantage is exactly 0 (uniform GRPO groups). Saves about half the
   * compute late in training, but changes the token-mean denominator and drops their KL/entropy terms,
   * so it is off unless asked for.
   */
  readonly dropZeroAdvantage?: boolean;
  /** The count of micro-batches is a multiple of this (default 1: the fewest the cap allows); see `micro-batch-cuts.ts`. */
  readonly microBatchMultiple?: number;
  /** Length at which attention doubles a token's work, for the work estimate (default Infinity: padded tokens). */
  readonly attentionBreakEven?: number;
}

/** One micro-batch: model input plus the per-target training signal. */
export interface PackedBatch {
  readonly batch: TrainBatch;
  readonly signal: TargetSignal;
}

/** One action token to train, relative to its sequence. */
interface TargetDraft {
  /** Index (in the sequence) of the token just before the target. */
  readonly position: number;
  readonly id: number;
  readonly oldLogprob: number;
  readonly lossMask: number;
  readonly policyVersion: number;
  /** Index of this action token among all action tokens of its trajectory (turn by turn). */
  readonly tokenIndex: number;
  /** Allowed ids when decoding was constrained; empty = unconstrained. */
  readonly allowed: Int32Array;
}

/** One training sequence before padding. */
interface SequenceDraft {
  tokens: Int32Array;
  readonly targets: TargetDraft[];
  readonly trajectoryIndex: number;
  readonly advantage: number;
  /** Creation order: the sort tie-breaker, so packing is deterministic. */
  readonly order: number;
}

const EMPTY = new Int32Array(0);

function startsWith(tokens: Int32Array, prefix: Int32Array): boolean {
  if (prefix.length > tokens.length) return false;
  for (let i = 0; i < prefix.length; i++) if (tokens[i] !== prefix[i]) return false;
  return true;
}

function concat(a: Int32Array, b: Int32Array): Int32Array {
  const out = new Int32Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

/** Throws when a turn's per-token arrays or its constraint disagree with its action length. */
function validateTurn(turn: Turn, where: string, trajectoryId: string): void {
  const n = turn.actionTokens.length;
  const fail = (field: string, detail: string): never => {
    throw InvalidArgumentError.format(`${where}.${field}`, `${detail} (trajectory '${trajectoryId}', turn ${turn.index})`);
  };
  if (turn.actionLogprobs.length !== n) fail('actionLogprobs', `length ${turn.actionLogprobs.length} ≠ actionTokens length ${n}`);
  if (turn.actionLossMask.length !== n) fail('actionLossMask', `length ${turn.actionLossMask.length} ≠ actionTokens length ${n}`);
  if (n > 0 && turn.promptTokens.length === 0) fail('promptTokens', 'is empty, so the first action token has no context to predict it from');
  const c = turn.constraint;
  if (c === null) return;
  if (c.allowedOffsets.length !== n + 1) fail('constraint.allowedOffsets', `length ${c.allowedOffsets.length} ≠ actionTokens length + 1 (${n + 1})`);
  for (let j = 0; j < n; j++) {
    if (!(c.allowedOffsets[j] >= 0 && c.allowedOffsets[j] <= c.allowedOffsets[j + 1] && c.allowedOffsets[j + 1] <= c.allowedIds.length)) {
      fail('constraint.allowedOffsets', `range ${j} [${c.allowedOffsets[j]}, ${c.allowedOffsets[j + 1]}) is not inside allowedIds (${c.allowedIds.length})`);
    }
  }
}

/** The action tokens of `turn` as targets, placed after a prompt of length `promptLen`; `firstToken` = tokenIndex of its first. */
function turnTargets(turn: Turn, promptLen: number, firstToken: number): TargetDraft[] {
  const targets: TargetDraft[] = [];
  for (let j = 0; j < turn.actionTokens.length; j++) {
    const c = turn.constraint;
    targets.push({
      position: promptLen + j - 1,
      id: turn.actionTokens[j],
      oldLogprob: turn.actionLogprobs[j],
      lossMask: turn.actionLossMask[j] ? 1 : 0,
      policyVersion: turn.policyVersion,
      tokenIndex: firstToken + j,
      allowed: c === null ? EMPTY : c.allowedIds.subarray(c.allowedOffsets[j], c.allowedOffsets[j + 1]),
    });
  }
  return targets;
}

/** The sequences of one trajectory: one per turn, or fewer where turns chain. */
function trajectorySequences(trajectory: Trajectory, trajectoryIndex: number, advantage: number, firstOrder: number): SequenceDraft[] {
  const sequences: SequenceDraft[] = [];
  let current: SequenceDraft | null = null;
  let firstToken = 0;
  trajectory.turns.forEach((turn, t) => {
    validateTurn(turn, `trajectories[${trajectoryIndex}].turns[${t}]`, trajectory.trajectoryId);
    const tokens = concat(turn.promptTokens, turn.actionTokens);
    const targets = turnTargets(turn, turn.promptTokens.length, firstToken);
    firstToken += turn.actionTokens.length;
    if (current !== null && startsWith(turn.promptTokens, current.tokens)) {
      // Full-history context: the earlier turn's tokens sit unchanged at the start of this one.
      current.tokens = tokens;
      current.targets.push(...targets);
      return;
    }
    current = { tokens, targets, trajectoryIndex, advantage, order: firstOrder + sequences.length };
    sequences.push(current);
  });
  return sequences;
}

/** Pads a group of sequences into one micro-batch. */
function buildBatch(sequences: readonly SequenceDraft[]): PackedBatch {
  const batchSize = sequences.length;
  const seqLen = Math.max(...sequences.map((s) => s.tokens.length));
  const inputIds = new Int32Array(batchSize * seqLen).fill(PAD_ID);
  const attentionMask = new Uint8Array(batchSize * seqLen);
  const n = sequences.reduce((sum, s) => sum + s.targets.length, 0);
  const targetPositions = new Int32Array(n);
  const targetIds = new Int32Array(n);
  const oldLogprobs = new Float32Array(n);
  const advantages = new Float32Array(n);
  const lossMask = new Float32Array(n);
  const policyVersions = new Int32Array(n);
  const trajectoryIndex = new Int32Array(n);
  const tokenIndex = new Int32Array(n);
  const allowedOffsets = new Int32Array(n + 1);
  const allowedChunks: Int32Array[] = [];
  let k = 0;
  sequences.forEach((s, b) => {
    inputIds.set(s.tokens, b * seqLen);
    attentionMask.fill(1, b * seqLen, b * seqLen + s.tokens.length);
    for (const target of s.targets) {
      targetPositions[k] = b * seqLen + target.position;
      targetIds[k] = target.id;
      oldLogprobs[k] = target.oldLogprob;
      advantages[k] = s.advantage;
      lossMask[k] = target.lossMask;
      policyVersions[k] = target.policyVersion;
      trajectoryIndex[k] = s.trajectoryIndex;
      tokenIndex[k] = target.tokenIndex;
      allowedOffsets[k + 1] = allowedOffsets[k] + target.allowed.length;
      allowedChunks.push(target.allowed);
      k++;
    }
  });
  const constrained = allowedOffsets[n] > 0;
  let allowedIds: Int32Array | null = null;
  if (constrained) {
    const ids = new Int32Array(allowedOffsets[n]);
    for (let i = 0; i < n; i++) ids.set(allowedChunks[i], allowedOffsets[i]);
    allowedIds = ids;
  }
  return {
    batch: {
      batchSize,
      seqLen,
      inputIds,
      attentionMask,
      targetPositions,
      targetIds,
      allowedOffsets: constrained ? allowedOffsets : null,
      allowedIds,
    },
    signal: { oldLogprobs, advantages, lossMask, policyVersions, trajectoryIndex, tokenIndex },
  };
}

/**
 * Turns trajectories into padded micro-batches whose targets are the action tokens.
 *
 * Shape: trajectories [numTrajectories] + advantages [numTrajectories] → micro-batches, each with
 * inputIds [B·T] and per-target arrays [N]. `targetPositions[n]` is the flat index of the token
 * before target `n`. Sequences without any trained target (every action token forced) are left out:
 * they add nothing to any loss term or to the token count.
 * @throws InvalidArgumentError naming the trajectory and turn when actionTokens, actionLogprobs,
 *   actionLossMask or the constraint disagree in length, or when an option is invalid.
 * @example
 * const batches = packTrajectories(trajectories, advantages, { maxTokensPerBatch: 4096 });
 * for (const { batch, signal } of batches) model.forwardTrain(batch, 1);
 */
export function packTrajectories(
  trajectories: readonly Trajectory[],
  advantagesPerTrajectory: Float32Array,
  options: PackOptions,
): PackedBatch[] {
  const { maxTokensPerBatch } = options;
  if (!(Number.isInteger(maxTokensPerBatch) && maxTokensPerBatch > 0)) {
    throw InvalidArgumentError.format('maxTokensPerBatch', `expected a positive integer, got ${maxTokensPerBatch}`);
  }
  const multiple = options.microBatchMultiple ?? 1;
  if (!(Number.isInteger(multiple) && multiple > 0)) throw InvalidArgumentError.format('microBatchMultiple', `expected a positive integer, got ${multiple}`);
  const breakEven = options.attentionBreakEven ?? Number.POSITIVE_INFINITY;
  if (!(breakEven === Number.POSITIVE_INFINITY || (Number.isInteger(breakEven) && breakEven > 0))) {
    throw InvalidArgumentError.format('attentionBreakEven', `expected a positive integer or Infinity, got ${breakEven}`);
  }
  if (advantagesPerTrajectory.length !== trajectories.length) {
    throw InvalidArgumentError.format(
      'advantagesPerTrajectory',
      `expected one advantage per trajectory (${trajectories.length}), got ${advantagesPerTrajectory.length}`,
    );
  }
  const sequences: SequenceDraft[] = [];
  let created = 0;
  trajectories.forEach((trajectory, i) => {
    const advantage = advantagesPerTrajectory[i];
    if (!Number.isFinite(advantage)) {
      throw InvalidArgumentError.format(`advantagesPerTrajectory[${i}]`, `expected a finite number, got ${advantage} (trajectory '${trajectory.trajectoryId}')`);
    }
    if (options.dropZeroAdvantage === true && advantage === 0) return;
    const own = trajectorySequences(trajectory, i, advantage, created);
    created += own.length;
    for (const s of own) {
      if (s.targets.some((target) => target.lossMask > 0)) sequences.push(s);
    }
  });
  // Longest first, creation order on ties: deterministic, and each micro-batch's padded length is its first sequence.
  sequences.sort((a, b) => b.tokens.length - a.tokens.length || a.order - b.order);
  const ends = microBatchCuts(
    sequences.map((s) => s.tokens.length),
    { maxTokens: maxTokensPerBatch, multiple, attentionBreakEven: breakEven },
  );
  return ends.map((end, i) => buildBatch(sequences.slice(ends[i - 1] ?? 0, end)));
}
