/**
 * Process-reward hooks ("reward shapers"), one of the plug-in registries of
 * `src/core/plugin-registry.ts`: a hook is a function of one turn and the turns before it,
 * returning that turn's shaped reward. The run names one in `reward.shaper` (with
 * `reward.settings`, checked by the shaper's zod schema while the config is parsed); rollouts call
 * it once per turn of every finished episode, in turn order, and store the result as
 * `Turn.shapedReward`; with `reward.mode: outcome+shaped` the learner trains on it
 * (`src/algorithms/reward-modes.ts`). The run store keeps the environment's own rewards as well.
 *
 * A hook sees only the past ("the trajectory so far"), never later turns or the outcome, so a
 * shaped reward cannot leak the future into earlier credit. It may be async (a reward model
 * behind an API); it must be deterministic for a run to be reproducible.
 */
import { z } from 'zod';
import { InvalidConfigError, TurnwiseError } from '../core/errors.js';
import { type PluginEntry, PluginRegistry } from '../core/plugin-registry.js';
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

/** One registered shaper: builds its hook from its parsed settings (once per run). */
export interface RewardShaperEntry extends PluginEntry {
  create(settings: unknown): ProcessRewardHook;
}

/** A hook bound to its name, ready for {@link shapeTrajectory}. */
export interface RewardShaping {
  readonly name: string;
  readonly hook: ProcessRewardHook;
}

/** The registry (kind `rewardShaper`, named by `reward.shaper`). */
export const rewardShaperRegistry = new PluginRegistry<RewardShaperEntry>('rewardShaper', 'reward shaper', 'reward.shaper');

/** A user reward shaper: its settings typed by its own schema. */
export interface RewardShaperPlugin<S> {
  readonly name: string;
  readonly description: string;
  /** Schema of `reward.settings` (default: no settings allowed). */
  readonly settings?: z.ZodType<S>;
  /** Builds the hook from the parsed settings. */
  create(settings: S): ProcessRewardHook;
}

/**
 * Registers a reward shaper under `plugin.name` (select it with `reward.shaper`).
 * @example registerRewardShaper({ name: 'step-cost', description: '-0.01 per turn', create: () => () => -0.01 });
 */
export function registerRewardShaper<S = Record<string, never>>(plugin: RewardShaperPlugin<S>): void {
  rewardShaperRegistry.register({
    name: plugin.name,
    description: plugin.description,
    ...(plugin.settings !== undefined ? { settings: plugin.settings } : {}),
    create: (settings) => plugin.create(settings as S),
  });
}

/**
 * Looks up `name`, checks `settings` with its schema and builds its hook.
 * @throws InvalidConfigError naming `reward.shaper` (unknown name) or `reward.settings.<key>`.
 * @example const shaping = rewardShapingOf('repeated-action-penalty', { penalty: 0.05 });
 */
export function rewardShapingOf(name: string, settings: unknown): RewardShaping {
  const entry = rewardShaperRegistry.get(name);
  const schema = entry.settings ?? z.object({}).strict();
  const result = schema.safeParse(settings ?? {});
  if (!result.success) {
    const issue = result.error.issues[0];
    const keys = (issue as { keys?: string[] } | undefined)?.keys;
    const key = issue?.path.length ? issue.path.join('.') : (keys?.join(', ') ?? '');
    throw new InvalidConfigError(`reward.settings${key ? `.${key}` : ''}`, `${issue?.message ?? 'invalid settings'} (reward shaper '${name}')`);
  }
  return { name, hook: entry.create(result.data) };
}

/**
 * Calls the hook once per turn, in order, and returns the trajectory with `shapedReward` on every
 * turn (the input is not changed).
 * @throws TurnwiseError naming the shaper, trajectory and turn when the hook throws or returns a non-finite number.
 * @example const shaped = await shapeTrajectory(trajectory, rewardShapingOf('invalid-action-penalty', {}));
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

const penaltySettings = (byDefault: number) => z.object({ penalty: z.number().min(0).default(byDefault).describe('Subtracted from the turn reward.') }).strict();

/**
 * Normalised action text, as repeated actions are compared everywhere (trimmed, lower-cased).
 * @example actionKeyOf({ ...turn, actionText: ' Turn Left' }) // 'turn left'
 */
export const actionKeyOf = (turn: Pick<Turn, 'actionText'>): string => turn.actionText.trim().toLowerCase();

rewardShaperRegistry.register({
  name: 'turn-penalty',
  description: 'Subtracts settings.penalty (default 0.01) from every turn (prefers short solutions).',
  builtIn: true,
  settings: penaltySettings(0.01),
  create: (settings) => {
    const { penalty } = settings as { penalty: number };
    return () => -penalty;
  },
});

rewardShaperRegistry.register({
  name: 'invalid-action-penalty',
  description: 'Subtracts settings.penalty (default 0.1) from every turn the environment flagged invalid or unparsable.',
  builtIn: true,
  settings: penaltySettings(0.1),
  create: (settings) => {
    const { penalty } = settings as { penalty: number };
    return ({ turn }) => (turn.invalidAction ? -penalty : 0);
  },
});

rewardShaperRegistry.register({
  name: 'repeated-action-penalty',
  description: 'Subtracts settings.penalty (default 0.1) from every turn whose action the episode already took ("performs repeatedly").',
  builtIn: true,
  settings: penaltySettings(0.1),
  create: (settings) => {
    const { penalty } = settings as { penalty: number };
    return ({ turn, previousTurns }) => {
      const key = actionKeyOf(turn);
      return previousTurns.some((t) => actionKeyOf(t) === key) ? -penalty : 0;
    };
  },
});
