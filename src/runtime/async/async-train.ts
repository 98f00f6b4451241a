/**
 * The `one-step-off` and `async` modes of `trainRun`: the same assembled run (store, sampler,
 * learner, horizon, environments, evaluation, checkpoints) and the same coordinator effects as the
 * synchronous loop, driven by {@link runAsyncLoop} instead of the coordinator machine.
 *
 * `one-step-off` is the asynchronous loop with η = 1 and `finish-old` (verl's one-step-off
 * policy: batch b+1 is generated with weights b while the learner trains batch b).
 */
import type { CoordinatorEffects, CoordinatorOutput } from '../../actors/coordinator.js';
import type { Clock } from '../../core/clock.js';
import type { ResolvedConfig } from '../../core/config.js';
import { TurnwiseError } from '../../core/errors.js';
import type { Trajectory } from '../../core/types.js';
import type { EpisodePlan } from '../rollout.js';
import { rolloutMetrics } from '../rollout-metrics.js';
import { type PartialRollout, runAsyncLoop } from './async-loop.js';
import type { StalenessState } from './staleness.js';

/** The bound and rollout policy a mode implies. */
export interface AsyncSettings {
  readonly maxStaleness: number;
  readonly partialRollout: PartialRollout;
}

/**
 * η and the partial-rollout policy of the configured mode.
 * @example asyncSettingsOf(config); // { maxStaleness: 1, partialRollout: 'finish-old' } for mode one-step-off
 */
export function asyncSettingsOf(config: Pick<ResolvedConfig, 'mode' | 'async'>): AsyncSettings {
  if (config.mode === 'one-step-off') return { maxStaleness: 1, partialRollout: 'finish-old' };
  return { maxStaleness: config.async.maxStaleness, partialRollout: config.async.partialRollout };
}

/** What the asynchronous run needs from the assembled run. */
export interface AsyncTrainInput {
  readonly config: ResolvedConfig;
  /** The synchronous loop's effects: `train`, `evaluate`, `checkpoint`, `stepCompleted` are reused as they are. */
  readonly effects: CoordinatorEffects;
  readonly startStep: number;
  readonly restored: StalenessState;
  /** Plans of a step (`trainPlans`). */
  plans(step: number): readonly EpisodePlan[];
  /** Horizon in force now (read when a batch's first episode is admitted). */
  horizon(): number;
  /** Runs one episode on the environment pool. */
  runEpisode(step: number, horizon: number, plan: EpisodePlan): Promise<Trajectory>;
  /** Weights version the samplers hold. */
  samplerVersion(): number;
  /** Learner weights version (after the last update). */
  learnerVersion(): number;
  /** Hands `version` to the samplers and resolves once loaded. */
  publishWeights(version: number): Promise<void>;
  /** Lets the checkpoint effect read the bound's state. */
  exposeState(read: () => StalenessState): void;
  readonly clock: Clock;
  readonly signal?: AbortSignal;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

const every = (n: number, completed: number): boolean => n > 0 && completed % n === 0;

/**
 * Runs the configured steps asynchronously; same cadences (eval, checkpoint, checkpoint on stop) as the coordinator.
 * @example const output = await runAsyncTraining({ config, effects, startStep, restored, plans, horizon, runEpisode, ... });
 */
export async function runAsyncTraining(input: AsyncTrainInput): Promise<CoordinatorOutput> {
  const { config, effects, clock } = input;
  const settings = asyncSettingsOf(config);
  const never = new AbortController().signal; // the effects' own abort signal: the loop decides when to stop
  const horizons = new Map<number, number>();
  let lastCheckpoint = input.startStep > 0 ? input.startStep : -1;
  let completed = input.startStep;
  let persist: () => StalenessState = () => input.restored;
  input.exposeState(() => persist());
  try {
    if (input.learnerVersion() !== input.startStep) {
      throw new TurnwiseError(`async training: the learner is at version ${input.learnerVersion()} but the run resumes at step ${input.startStep}; versions must equal completed steps`);
    }
    const result = await runAsyncLoop(
      {
        startStep: input.startStep,
        totalSteps: config.train.steps,
        maxStaleness: settings.maxStaleness,
        partialRollout: settings.partialRollout,
        maxInFlight: config.derived.episodesPerStep,
        restored: input.restored,
        clock,
        ...(input.signal ? { signal: input.signal } : {}),
      },
      {
        plans: (step) => input.plans(step),
        runEpisode: (plan, step) => {
          let h = horizons.get(step);
          if (h === undefined) {
            h = input.horizon();
            horizons.set(step, h);
          }
          return input.runEpisode(step, h, plan);
        },
        samplerVersion: () => input.samplerVersion(),
        train: async (step, trajectories) => {
          const { metrics } = await effects.train(step, trajectories, never);
          const h = horizons.get(step) ?? input.horizon();
          horizons.delete(step);
          const rollout = rolloutMetrics(trajectories, 0, input.config.reward.mode);
          return { version: input.learnerVersion(), metrics: { ...rollout, ...metrics, 'horizon/current': h } };
        },
        publishWeights: (version) => input.publishWeights(version),
        stepCompleted: async (step, metrics, control) => {
          persist = control.persist;
          await effects.stepCompleted(step, metrics, never);
          completed = step + 1;
          if (every(config.train.evalEvery, completed)) await control.exclusive(() => effects.evaluate(step, never));
          if (every(config.train.checkpointEvery, completed) || completed >= config.train.steps) {
            await effects.checkpoint(completed, never);
            lastCheckpoint = completed;
          }
        },
      },
    );
    persist = () => result.state;
    if (result.status === 'stopped' && lastCheckpoint !== result.completedSteps) await effects.checkpoint(result.completedSteps, never);
    return { status: result.status, completedSteps: result.completedSteps, error: null };
  } catch (error) {
    const message = error instanceof TurnwiseError ? error.message : `async training failed: ${messageOf(error)}`;
    return { status: 'failed', completedSteps: completed, error: message };
  }
}
