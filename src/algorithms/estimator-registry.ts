/**
 * The advantage-estimator plug-in point. Every estimator — the built-ins of `advantages.ts` and any
 * a user registers — is one entry: a pure function from the shared {@link AdvantageInput} to
 * `{ advantages, returns }`, whether it needs critic values, and (for user estimators) a zod schema
 * of its `algorithm.settings`. A registered name can be used as `algorithm.name` in a config.
 */
import type { z } from 'zod';
import { type PluginEntry, PluginRegistry } from '../core/plugin-registry.js';
import type { AdvantageInput, AdvantageOutput, AnyEstimatorOptions, CustomEstimatorOptions } from './advantage-input.js';

/** One registered estimator. */
export interface EstimatorEntry extends PluginEntry {
  /** Whether the learner must run a critic first (`input.values`). */
  readonly needsValues: boolean;
  /** Shape: rewards [B·T] → advantages, returns [B·T]. */
  estimate(input: AdvantageInput<AnyEstimatorOptions>): AdvantageOutput;
}

/** The registry (kind `advantageEstimator`, named by `algorithm.name`). */
export const estimatorRegistry = new PluginRegistry<EstimatorEntry>('advantageEstimator', 'advantage estimator', 'algorithm.name');

/** A user estimator: its settings typed by its own schema. */
export interface AdvantageEstimatorPlugin<S> {
  readonly name: string;
  readonly description: string;
  /** Schema of `algorithm.settings` (validated when the config is parsed). */
  readonly settings?: z.ZodType<S>;
  /** Default false: the estimator works from rewards alone. */
  readonly needsValues?: boolean;
  /** Shape: rewards [B·T] → advantages, returns [B·T]; `settings` as the schema parsed them. */
  estimate(input: AdvantageInput<CustomEstimatorOptions>, settings: S): AdvantageOutput;
}

/**
 * Registers an advantage estimator under `plugin.name`; a config then trains with it through
 * `algorithm: { name: <name>, settings: { … } }` (the PPO loss, optimizer and group fields as for
 * every algorithm).
 * @example
 * registerAdvantageEstimator({
 *   name: 'centered', description: 'reward minus the batch mean',
 *   estimate: ({ rewards }) => { const m = rewards.reduce((a, r) => a + r, 0) / rewards.length; const a = rewards.map((r) => r - m); return { advantages: a, returns: rewards }; },
 * });
 */
export function registerAdvantageEstimator<S = Record<string, never>>(plugin: AdvantageEstimatorPlugin<S>): void {
  estimatorRegistry.register({
    name: plugin.name,
    description: plugin.description,
    needsValues: plugin.needsValues ?? false,
    ...(plugin.settings !== undefined ? { settings: plugin.settings } : {}),
    estimate: (input) => {
      const options = input.options as CustomEstimatorOptions;
      return plugin.estimate(input as AdvantageInput<CustomEstimatorOptions>, options.settings as S);
    },
  });
}
