/**
 * The reward-shaping plug-in point: a shaper maps a finished trajectory to the outcome reward the
 * learner trains on (the run store keeps the environment's raw reward, so shaping never changes
 * what was collected). Named by `algorithm.rewardShaper`; `none` and `turn-penalty` are built in and
 * registered here like user shapers.
 */
import { z } from 'zod';
import { type PluginEntry, PluginRegistry } from '../core/plugin-registry.js';
import type { Trajectory } from '../core/types.js';

/** One registered reward shaper. */
export interface RewardShaperEntry extends PluginEntry {
  /** The shaped outcome reward of `trajectory` (`settings` as its schema parsed them). */
  shape(trajectory: Trajectory, settings: unknown): number;
}

/** The registry (kind `rewardShaper`, named by `algorithm.rewardShaper`). */
export const rewardShaperRegistry = new PluginRegistry<RewardShaperEntry>('rewardShaper', 'reward shaper', 'algorithm.rewardShaper');

rewardShaperRegistry.register({ name: 'none', description: "the environment's reward, unchanged", builtIn: true, shape: (t) => t.reward });

const turnPenaltySettings = z.object({ perTurn: z.number().min(0).default(0.01).describe('Subtracted per agent turn.') }).strict();
rewardShaperRegistry.register({
  name: 'turn-penalty',
  description: 'reward minus perTurn x agent turns (prefers short solutions)',
  builtIn: true,
  settings: turnPenaltySettings,
  shape: (t, settings) => t.reward - (settings as z.output<typeof turnPenaltySettings>).perTurn * t.turns.length,
});

/** A user reward shaper: its settings typed by its own schema. */
export interface RewardShaperPlugin<S> {
  readonly name: string;
  readonly description: string;
  /** Schema of `algorithm.rewardShaperSettings`. */
  readonly settings?: z.ZodType<S>;
  shape(trajectory: Trajectory, settings: S): number;
}

/**
 * Registers a reward shaper under `plugin.name` (select it with `algorithm.rewardShaper`).
 * @example registerRewardShaper({ name: 'success-only', description: '1 on success, else 0', shape: (t) => (t.outcome === 'success' ? 1 : 0) });
 */
export function registerRewardShaper<S = Record<string, never>>(plugin: RewardShaperPlugin<S>): void {
  rewardShaperRegistry.register({
    name: plugin.name,
    description: plugin.description,
    ...(plugin.settings !== undefined ? { settings: plugin.settings } : {}),
    shape: (t, settings) => plugin.shape(t, settings as S),
  });
}

/**
 * The trajectories with their outcome reward shaped (the same objects when the shaper is `none`).
 * @example const trained = shapeRewards(trajectories, 'turn-penalty', { perTurn: 0.05 });
 */
export function shapeRewards(trajectories: readonly Trajectory[], name: string, settings: unknown): readonly Trajectory[] {
  if (name === 'none') return trajectories;
  const shaper = rewardShaperRegistry.get(name);
  return trajectories.map((t) => {
    const reward = shaper.shape(t, settings);
    if (!Number.isFinite(reward)) throw new RangeError(`reward shaper '${name}' returned ${reward} for trajectory ${t.trajectoryId}`);
    return { ...t, reward };
  });
}
