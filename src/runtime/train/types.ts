/**
 * The options and result of a training run, and what a distributed rollout must provide. Kept apart
 * from `train-run.ts` so the steps of the run (`src/runtime/train/`) can share them without
 * importing the function that calls them.
 */
import type { EngineFactory } from '../../engines/engine.js';
import type { PolicyTextManifest } from '../../models/policy-text.js';
import type { Clock } from '../../core/clock.js';
import type { ResolvedConfig } from '../../core/config.js';
import type { Trajectory } from '../../core/types.js';
import type { NamedTensors } from '../../models/checkpoint.js';
import type { RunStore } from '../../store/run-store.js';
import type { EpisodePlan } from '../rollout.js';
import type { RunEvent } from '../run-events.js';

/** How to run. */
export interface TrainRunOptions {
  readonly config: ResolvedConfig;
  /** Continue the run in this folder from its latest checkpoint (the config must be the run's). */
  readonly resumeDir?: string;
  /** Use exactly this folder for a new run; default: a fresh `<run.dir>/<run.name>[-k]`. It must hold no run unless `force`. */
  readonly runDir?: string;
  /** Id of a new run (default: `newRunId(run.name)`); a resumed run keeps the one in its store. */
  readonly runId?: string;
  /** Start over in a `runDir` that holds a run: its run.db, config.json, tokenizer.json and checkpoints/ are deleted first. */
  readonly force?: boolean;
  readonly onEvent?: (event: RunEvent) => void;
  /** Aborting stops the run after the current phase, with a checkpoint (Ctrl-C). */
  readonly signal?: AbortSignal;
  readonly clock?: Clock;
  /**
   * Runs the episodes in other processes (the NATS assembly, `src/runtime/nats/nats-train-run.ts`);
   * absent: everything in-process, as before.
   */
  readonly distributed?: DistributedRollout;
  /**
   * Opens the model engine of a `model.engine: tinker` run. Default: the Tinker client at
   * `model.tinker.url`; tests and embedders may pass an in-process engine instead.
   */
  readonly engine?: EngineFactory;
}

/** How a distributed run reaches its workers; the coordinator, learner and evaluation stay here. */
export interface DistributedRollout {
  /** Once the store and the models exist: publish what workers need to join, and the first weights. */
  start(run: { readonly runId: string; readonly store: RunStore; readonly text: PolicyTextManifest; readonly version: number; readonly weights: NamedTensors }): Promise<void>;
  /** Runs a step's plans on the workers; the trajectories come back committed to the store, in plan order. */
  rollout(step: number, horizon: number, plans: readonly EpisodePlan[]): Promise<Trajectory[]>;
  /** Hands weights `version` to the remote samplers. */
  publishWeights(version: number, weights: NamedTensors): Promise<void>;
  /** A checkpoint at `completedSteps` is durable: what only a resume from earlier would need can go. */
  checkpointed?(completedSteps: number): Promise<void>;
  /** The run ended with this status. */
  finish(status: 'completed' | 'interrupted' | 'failed'): Promise<void>;
}

/** A held-out evaluation: completed steps (0 = untrained), success rate and mean turns. */
export interface EvalPoint {
  readonly step: number;
  readonly successRate: number;
  readonly meanTurns: number;
}

/** What a finished run reports. */
export interface TrainRunResult {
  readonly runDir: string;
  readonly runId: string;
  readonly status: 'finished' | 'stopped' | 'failed';
  readonly completedSteps: number;
  readonly error: string | null;
  /** Held-out evaluations in order. */
  readonly evals: readonly EvalPoint[];
  /** What the user must know about a run that did finish (e.g. most episodes ended by length). */
  readonly warnings?: readonly string[];
}
