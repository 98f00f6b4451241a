/**
 * The one input and output every advantage estimator shares, its validation, and the
 * small masked-array helpers the estimators are written with.
 *
 * Layout: a batch of B rows (one per trajectory) of T token slots each, row-major `[B·T]`. The
 * mask is 1 on agent tokens that train and 0 on everything else (environment tokens, tokens the
 * constraint forced, padding). How rewards map onto tokens: the trajectory's terminal (outcome)
 * reward sits on its LAST AGENT TOKEN (mask 1); a per-token penalty (KL in the reward) sits on
 * every agent token; a non-zero reward on a masked token is an error, never silently dropped
 * (AgentGym-RL's PPO/REINFORCE++ lose the reward exactly that way, reference §3.2). An outcome-only
 * batch is the special case T = 1 with the mask all ones (the defaults).
 */
import { InvalidArgumentError } from '../core/errors.js';

/**
 * Credit of the group estimators: `trajectory` — one advantage per trajectory from its total score,
 * broadcast to all its tokens (verl); `turn` — per turn, the trajectory's return-to-go from that
 * turn against the group's returns-to-go at the same turn index, where an episode that had already
 * ended counts 0 (so the baseline never depends on the trajectory's own length; see
 * {@link grpoAdvantages}). Needs `turnIds`.
 */
export type GroupCredit = 'trajectory' | 'turn';

/** GRPO options. `normalizeStd: false` is Dr. GRPO (Liu et al. 2025, arXiv:2503.20783). */
export interface GrpoOptions {
  readonly name: 'grpo';
  /** Divide by the group's unbiased std (GRPO) or not (Dr. GRPO). */
  readonly normalizeStd: boolean;
  /** Added to the std before dividing (verl: 1e-6). */
  readonly epsilon: number;
  /** Per trajectory (default, verl) or per turn; see {@link GroupCredit}. */
  readonly credit?: GroupCredit;
}

/** RLOO options: the baseline is the mean of the other samples of the group. */
export interface RlooOptions {
  readonly name: 'rloo';
  /** Per trajectory (default) or per turn; see {@link GroupCredit}. */
  readonly credit?: GroupCredit;
}

/** REINFORCE++ options. */
export interface ReinforcePlusPlusOptions {
  readonly name: 'reinforcePlusPlus';
  /** Discount per agent token (verl default 1). */
  readonly gamma: number;
}

/** REINFORCE with a running (exponential moving average) baseline. */
export interface ReinforceOptions {
  readonly name: 'reinforce';
  /** Discount per agent token. */
  readonly gamma: number;
  /** EMA weight of the old baseline: `b ← m·b + (1 − m)·mean(returns)`. */
  readonly baselineMomentum: number;
}

/** GAE options (PPO with a critic). */
export interface GaeOptions {
  readonly name: 'gae';
  /** Discount γ per step (per agent token at `level: 'token'`, per turn at `level: 'turn'`). */
  readonly gamma: number;
  /** GAE λ. */
  readonly lambda: number;
  /** `token`: one TD step per agent token; `turn`: one per turn (values at turn starts, advantage broadcast to the turn's tokens). */
  readonly level: 'token' | 'turn';
  /** Whiten the advantages over the batch's agent tokens (verl does). Returns are never whitened. */
  readonly whiten: boolean;
}

/** Estimator options, discriminated by `name`. */
export type EstimatorOptions = GrpoOptions | RlooOptions | ReinforcePlusPlusOptions | ReinforceOptions | GaeOptions;

/** Names of the estimators. */
export type EstimatorName = EstimatorOptions['name'];

/** Options of a user-registered estimator (`registerAdvantageEstimator`): its name and its parsed settings. */
export interface CustomEstimatorOptions {
  readonly name: string;
  /** `algorithm.settings`, as the estimator's own schema parsed them. */
  readonly settings: unknown;
}

/** Options of any registered estimator, built in or not. */
export type AnyEstimatorOptions = EstimatorOptions | CustomEstimatorOptions;

/** State an estimator carries from one batch to the next (only `reinforce` keeps one). */
export interface EstimatorState {
  /** Running baseline (mean return, EMA). */
  readonly runningBaseline: number;
  /** Batches folded into the baseline so far. */
  readonly batches: number;
}

/** The one input every estimator takes. */
export interface AdvantageInput<O extends AnyEstimatorOptions = EstimatorOptions> {
  /** [B·T] per-token rewards, row-major; non-zero only where the mask is 1. */
  readonly rewards: Float32Array;
  /** [B] group of each row (samples of the same task in the same step). B = groupIds.length. */
  readonly groupIds: readonly string[];
  /** T, token slots per row; default 1 (one outcome reward per trajectory). */
  readonly seqLen?: number;
  /** [B·T] 1 = agent token that trains, 0 = environment/forced/padding; default all 1. */
  readonly mask?: Float32Array;
  /** [B·T] critic values V(s_t) before each token (`gae` only). */
  readonly values?: Float32Array;
  /** [B·T] turn index of each token (`gae` with `level: 'turn'`, `grpo`/`rloo` with `credit: 'turn'`); ignored where the mask is 0. */
  readonly turnIds?: Int32Array;
  /** State from the previous batch (`reinforce` only); absent on the first batch. */
  readonly state?: EstimatorState;
  readonly options: O;
}

/** What every estimator returns. */
export interface AdvantageOutput {
  /** [B·T] advantage per token; 0 where the mask is 0. */
  readonly advantages: Float32Array;
  /** [B·T] return (value target) per token; 0 where the mask is 0. Critic-free group estimators return the advantages, as verl does. */
  readonly returns: Float32Array;
  /** State to pass to the next batch (estimators that keep none leave it out). */
  readonly state?: EstimatorState;
}

/** The shared estimator signature. */
export type AdvantageEstimator<O extends EstimatorOptions = EstimatorOptions> = (input: AdvantageInput<O>) => AdvantageOutput;

/** The input with defaults filled in and shapes checked. */
export interface CheckedInput {
  readonly rows: number;
  readonly seqLen: number;
  readonly rewards: Float32Array;
  readonly mask: Float32Array;
}

/**
 * Checks shapes, finiteness and the reward placement rule; fills in `seqLen` and `mask` defaults.
 * Shape: rewards [B·T], mask [B·T], values [B·T], turnIds [B·T], groupIds [B].
 * @throws InvalidArgumentError naming the field, and for a reward on a masked token its row and slot.
 * @example
 * checkAdvantageInput({ rewards: Float32Array.of(0, 1), seqLen: 2, groupIds: ['g'], options: { name: 'rloo' } }).rows; // 1
 */
export function checkAdvantageInput(input: AdvantageInput): CheckedInput {
  const rows = input.groupIds.length;
  const seqLen = input.seqLen ?? 1;
  if (!(Number.isInteger(seqLen) && seqLen >= 1)) throw InvalidArgumentError.format('seqLen', `expected a positive integer, got ${seqLen}`);
  const n = rows * seqLen;
  if (input.rewards.length !== n) {
    if (input.rewards.length % seqLen === 0) {
      throw InvalidArgumentError.format('groupIds', `expected one group id per row (rewards.length / seqLen = ${input.rewards.length / seqLen}), got ${rows}`);
    }
    throw InvalidArgumentError.format('rewards', `expected groupIds.length × seqLen = ${rows} × ${seqLen} = ${n} entries, got ${input.rewards.length}`);
  }
  const mask = input.mask ?? new Float32Array(n).fill(1);
  for (const key of ['mask', 'values', 'turnIds'] as const) {
    const a = key === 'mask' ? mask : input[key];
    if (a !== undefined && a.length !== n) throw InvalidArgumentError.format(key, `expected ${n} entries like rewards, got ${a.length}`);
  }
  for (let i = 0; i < n; i++) {
    if (mask[i] !== 0 && mask[i] !== 1) throw InvalidArgumentError.format(`mask[${i}]`, `expected 0 or 1, got ${mask[i]}`);
    const r = input.rewards[i];
    if (!Number.isFinite(r)) throw InvalidArgumentError.format(`rewards[${i}]`, `expected a finite number, got ${r}`);
    if (r !== 0 && mask[i] === 0) {
      throw InvalidArgumentError.format(
        `rewards[${i}]`,
        `reward ${r} on a masked token (row ${Math.floor(i / seqLen)}, slot ${i % seqLen}); rewards belong on agent tokens (the terminal reward on the last agent token)`,
      );
    }
    if (input.values !== undefined && !Number.isFinite(input.values[i])) {
      throw InvalidArgumentError.format(`values[${i}]`, `expected a finite number, got ${input.values[i]}`);
    }
  }
  return { rows, seqLen, rewards: input.rewards, mask };
}

/** Throws unless `x` is a finite number in [lo, hi]. */
export function checkRange(field: string, x: number, lo: number, hi: number): void {
  if (!(Number.isFinite(x) && x >= lo && x <= hi)) throw InvalidArgumentError.format(field, `expected a number in [${lo}, ${hi}], got ${x}`);
}

/**
 * Sum of each row's rewards (the trajectory's score, verl `token_level_rewards.sum(-1)`).
 * Shape: [B·T] → [B]. Sums run in float64.
 * @example rowScores(Float32Array.of(0, 1, 2, 0), 2, 2); // [1, 2]
 */
export function rowScores(rewards: Float32Array, rows: number, seqLen: number): Float64Array {
  const scores = new Float64Array(rows);
  for (let b = 0; b < rows; b++) for (let t = 0; t < seqLen; t++) scores[b] += rewards[b * seqLen + t];
  return scores;
}

/**
 * Writes one value per row onto the row's agent tokens (0 elsewhere).
 * Shape: [B] → [B·T].
 * @example broadcastRows(Float64Array.of(2), Float32Array.of(1, 0, 1), 1, 3); // [2, 0, 2]
 */
export function broadcastRows(perRow: Float64Array, mask: Float32Array, rows: number, seqLen: number): Float32Array {
  const out = new Float32Array(rows * seqLen);
  for (let b = 0; b < rows; b++) for (let t = 0; t < seqLen; t++) out[b * seqLen + t] = mask[b * seqLen + t] * perRow[b];
  return out;
}

/** Dense group index per row, in order of first appearance, and the number of groups. */
export function groupIndex(groupIds: readonly string[]): { groupOf: Int32Array; groups: number } {
  const index = new Map<string, number>();
  const groupOf = new Int32Array(groupIds.length);
  groupIds.forEach((id, i) => {
    let g = index.get(id);
    if (g === undefined) {
      g = index.size;
      index.set(id, g);
    }
    groupOf[i] = g;
  });
  return { groupOf, groups: index.size };
}

/**
 * Discounted return per agent token with environment (masked) tokens passing the running return
 * through unchanged: `G_t = r_t + γ·G_next` at agent tokens, where `G_next` is the return at the
 * next AGENT token of the row (verl multi-turn REINFORCE++ recursion). 0 on masked tokens.
 * Shape: [B·T] → [B·T]; float64 accumulation.
 * @example discountedReturns(Float32Array.of(0, 0, 1), Float32Array.of(1, 0, 1), 1, 3, 0.5); // [0.5, 0, 1]
 */
export function discountedReturns(rewards: Float32Array, mask: Float32Array, rows: number, seqLen: number, gamma: number): Float32Array {
  const out = new Float32Array(rows * seqLen);
  for (let b = 0; b < rows; b++) {
    let running = 0;
    for (let t = seqLen - 1; t >= 0; t--) {
      const i = b * seqLen + t;
      if (mask[i] === 0) continue; // environment token: the return passes through
      running = rewards[i] + gamma * running;
      out[i] = running;
    }
  }
  return out;
}

/**
 * Masked whitening, verl `masked_whiten`: `(x − mean) / sqrt(var + 1e-8)` with the mean and the
 * unbiased variance over masked-in entries; masked-out entries are 0. Fewer than two entries:
 * centred only (a lone token has no spread to divide by).
 * Shape: [N] → [N].
 * @example maskedWhiten(Float32Array.of(1, 3, 9), Float32Array.of(1, 1, 0)); // ≈ [-0.7071, 0.7071, 0]
 */
export function maskedWhiten(x: Float32Array, mask: Float32Array): Float32Array {
  let count = 0;
  let sum = 0;
  for (let i = 0; i < x.length; i++) {
    count += mask[i];
    sum += mask[i] * x[i];
  }
  const out = new Float32Array(x.length);
  if (count === 0) return out;
  const mean = sum / count;
  let squares = 0;
  for (let i = 0; i < x.length; i++) squares += mask[i] * (x[i] - mean) ** 2;
  const scale = count < 2 ? 1 : 1 / Math.sqrt(squares / (count - 1) + 1e-8);
  for (let i = 0; i < x.length; i++) out[i] = mask[i] * (x[i] - mean) * scale;
  return out;
}

/** One turn of a row: its id, the first and last trained slot, and the summed reward of its slots. */
export interface TurnSpan {
  readonly id: number;
  readonly first: number;
  last: number;
  reward: number;
}

/**
 * The turns of row slots [start, start + seqLen), in order, over trained (mask 1) slots only.
 * Shape: [B·T] → spans of one row.
 * @throws InvalidArgumentError naming the slot when turn ids decrease or a turn is split by another.
 * @example turnSpans(0, 3, Float32Array.of(1, 0, 1), Int32Array.of(0, 0, 1), Float32Array.of(0, 0, 1)); // [{ id: 0, first: 0, last: 0, reward: 0 }, { id: 1, first: 2, last: 2, reward: 1 }]
 */
export function turnSpans(start: number, seqLen: number, mask: Float32Array, turnIds: Int32Array, rewards: Float32Array): TurnSpan[] {
  const spans: TurnSpan[] = [];
  for (let i = start; i < start + seqLen; i++) {
    if (mask[i] === 0) continue;
    const current = spans.at(-1);
    if (current !== undefined && current.id === turnIds[i]) {
      current.last = i;
      current.reward += rewards[i];
      continue;
    }
    if (current !== undefined && turnIds[i] < current.id) {
      throw InvalidArgumentError.format(`turnIds[${i}]`, `turn ids must not decrease along a row (${turnIds[i]} after ${current.id})`);
    }
    if (spans.some((t) => t.id === turnIds[i])) throw InvalidArgumentError.format(`turnIds[${i}]`, `turn ${turnIds[i]} is split by another turn`);
    spans.push({ id: turnIds[i], first: i, last: i, reward: rewards[i] });
  }
  return spans;
}
