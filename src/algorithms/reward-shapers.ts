/**
 * Process-reward hooks ("reward shapers"), registered by name like environments: a hook is a
 * function of one turn and the turns before it, returning that turn's shaped reward. The run
 * names one in `reward.shaper` (with `reward.settings`); rollouts call it once per turn of every
 * finished episode, in turn order, and store the result as `Turn.shapedReward`; with
 * `reward.mode: outcome+shaped` the learner trains on it (`src/algorithms/reward-modes.ts`).
 *
 * A hook sees only the past ("the trajectory so far"), never later turns or the outcome, so a
 * shaped reward cannot leak the future into earlier credit. It may be async (a reward model
 * behind an API); it must be deterministic for a run to be reproducible.
 *
 * This is one small typed registry (name → spec, the same shape as the environment registry) so
 * that a general registry of estimators, losses and shapers can absorb it unchanged.
 */
import { z } from 'zod';
import { InvalidArgumentError, InvalidConfigError, TurnwiseError } from '../core/errors.js';
import type { Trajectory, Turn } from '../core/types.js';

/** What a hook is called with, once per turn. */
export interface ProcessRewardInput {
  /** The turn to score: its observation, action, environment reward and invalid flag. */
  readonly turn: Turn;
  /** The turns before it in the same episode, oldest first (empty for the first turn). */
  readonly previousTurns: readonly Turn[];
  readonly taskId: string;
  readonly trajectoryId: string;
}

/** A process-reward hook: the shaped reward of one turn (finite; 0 for "no opinion"). */
export type ProcessRewardHook = (input: ProcessRewardInput) => number | Promise<number>;

/** A registered shaper: how to read its settings and build its hook. */
export interface RewardShaperSpec<S = unknown> {
  /** Registry name, used in `reward.shaper`. */
  readonly name: string;
  /** One line for listings and errors. */
  readonly description: string;
  /** Checks `reward.settings`; throws `InvalidConfigError` naming the field (`reward.settings.<key>`). */
  readonly parseSettings: (raw: Readonly<Record<string, unknown>>) => S;
  /** Builds the hook from parsed settings (once per run). */
  readonly create: (settings: S) => ProcessRewardHook;
}

/** A hook bound to its name, ready for {@link shapeTrajectory}. */
export interface RewardShaping {
  readonly name: string;
  readonly hook: ProcessRewardHook;
}

// biome-ignore lint/suspicious/noExplicitAny: each spec keeps its own settings type; the map only hands specs back by name.
const shapers = new Map<string, RewardShaperSpec<any>>();

/**
 * Adds a shaper. Names are unique identifiers (letters, digits, `_`, `-`).
 * @example registerRewardShaper({ name: 'stepCost', description: '-0.01 per turn', parseSettings: () => ({}), create: () => () => -0.01 });
 */
export function registerRewardShaper<S>(spec: RewardShaperSpec<S>): void {
  if (!/^[A-Za-z][A-Za-z0-9_-]*$/.test(spec.name)) throw InvalidArgumentError.format('spec.name', `expected letters, digits, '_' or '-', got ${JSON.stringify(spec.name)}`);
  if (shapers.has(spec.name)) throw InvalidArgumentError.format('spec.name', `reward shaper ${JSON.stringify(spec.name)} is already registered`);
  shapers.set(spec.name, spec);
}

/**
 * The spec registered under `name`.
 * @throws InvalidConfigError naming `reward.shaper` and listing the registered names.
 * @example getRewardShaper('invalidActionPenalty').description
 */
export function getRewardShaper(name: string): RewardShaperSpec {
  const spec = shapers.get(name);
  if (spec === undefined) throw new InvalidConfigError('reward.shaper', `unknown reward shaper ${JSON.stringify(name)}; registered: ${[...shapers.keys()].sort().join(', ')}`);
  return spec;
}

/**
 * Registered shapers, sorted by name.
 * @example listRewardShapers().map((s) => s.name) // ['invalidActionPenalty', 'repeatedActionPenalty']
 */
export function listRewardShapers(): RewardShaperSpec[] {
  return [...shapers.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * Looks up `name`, checks `settings` and builds its hook.
 * @example const shaping = rewardShapingOf('repeatedActionPenalty', { penalty: 0.05 });
 */
export function rewardShapingOf(name: string, settings: Readonly<Record<string, unknown>>): RewardShaping {
  const spec = getRewardShaper(name);
  return { name, hook: spec.create(spec.parseSettings(settings)) };
}

/**
 * Calls the hook once per turn, in order, and returns the trajectory with `shapedReward` on every
 * turn (the input is not changed).
 * @throws TurnwiseError naming the shaper, trajectory and turn when the hook throws or returns a non-finite number.
 * @example const shaped = await shapeTrajectory(trajectory, rewardShapingOf('invalidActionPenalty', {}));
 */
export async function shapeTrajectory(trajectory: Trajectory, shaping: RewardShaping): Promise<Trajectory> {
  const turns: Turn[] = [];
  for (let k = 0; k < trajectory.turns.length; k++) {
    const turn = trajectory.turns[k] as Turn;
    const at = `reward shaper '${shaping.name}' on turn ${k} of ${trajectory.trajectoryId}`;
    let value: number;
    try {
      value = await shaping.hook({ turn, previousTurns: trajectory.turns.slice(0, k), taskId: trajectory.taskId, trajectoryId: trajectory.trajectoryId });
    } catch (error) {
      throw new TurnwiseError(`${at} failed: ${(error as Error).message}`, { cause: error });
    }
    if (typeof value !== 'number' || !Number.isFinite(value)) throw new TurnwiseError(`${at} returned ${String(value)}; expected a finite number`);
    turns.push({ ...turn, shapedReward: value });
  }
  return { ...trajectory, turns };
}

const penaltySettings = z.object({ penalty: z.number().min(0).default(0.1).describe('Subtracted from the turn reward.') }).strict();

function parsePenalty(raw: Readonly<Record<string, unknown>>): { penalty: number } {
  const result = penaltySettings.safeParse(raw);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const key = issue?.path.length ? issue.path.join('.') : (issue as { keys?: string[] } | undefined)?.keys?.join(', ') ?? '';
  throw new InvalidConfigError(`reward.settings${key ? `.${key}` : ''}`, issue?.message ?? 'invalid settings');
}

/**
 * Normalised action text, as repeated actions are compared everywhere (trimmed, lower-cased).
 * @example actionKeyOf({ ...turn, actionText: ' Turn Left' }) // 'turn left'
 */
export const actionKeyOf = (turn: Pick<Turn, 'actionText'>): string => turn.actionText.trim().toLowerCase();

registerRewardShaper({
  name: 'invalidActionPenalty',
  description: 'Subtracts settings.penalty (default 0.1) from every turn the environment flagged invalid or unparsable.',
  parseSettings: parsePenalty,
  create: ({ penalty }) => ({ turn }) => (turn.invalidAction ? -penalty : 0),
});

registerRewardShaper({
  name: 'repeatedActionPenalty',
  description: 'Subtracts settings.penalty (default 0.1) from every turn whose action the episode already took ("performs repeatedly").',
  parseSettings: parsePenalty,
  create: ({ penalty }) => ({ turn, previousTurns }) => {
    const key = actionKeyOf(turn);
    return previousTurns.some((t) => actionKeyOf(t) === key) ? -penalty : 0;
  },
});
