/**
 * What a training run drives, whichever engine holds the weights: the text side, the sampler's
 * policy, the learner's step, and how a checkpoint of it is made. Two implementations:
 * `policy-stack.ts` (turnwise's own tfjs model in this process: `model.engine: local`) and
 * `engine-stack.ts` (a model engine such as a Tinker server: `model.engine: tinker`). The train
 * loop (`src/runtime/train/`) sees only this.
 */
import type { Trajectory } from '../core/types.js';
import type { CheckpointContent, NamedTensors } from '../models/checkpoint.js';
import type { ServingPolicy } from '../models/inference/serving-policy.js';
import type { PolicyText } from '../models/policy-text.js';
import type { TrainStepMetrics, TrainStepOptions } from '../learner/train-options.js';

/** The learner's update step, as the learner actor calls it. */
export interface StepTrainer {
  /** Weights version: incremented once per step. */
  readonly version: number;
  trainStep(trajectories: readonly Trajectory[], options: Partial<TrainStepOptions>): Promise<TrainStepMetrics>;
}

/** Everything a training run learns and acts with. */
export interface RunStack {
  /** Tokenizer, context layout, stop ids and the tokenizer files of checkpoints. */
  readonly text: PolicyText;
  /** The sampler's policy; receives published weights. */
  readonly policy: ServingPolicy;
  readonly trainer: StepTrainer;
  /** Longest context (prompt + reply) in tokens. */
  readonly maxContext: number;
  /** One line on the model for the run header, e.g. `164672 parameters` or the engine and its model. */
  readonly summary: string;
  /** Lines for the user: what was loaded, what an engine does differently (may be empty). */
  readonly notes: readonly string[];
  /**
   * A second serving policy of the same model, with its own inference workers and KV caches, for
   * held-out evaluations that run beside the training rollout (`train.evalOverlap`): requests of
   * the two never share a batch, and a row's numbers depend on its batch. Absent where there is
   * none to make (a pretrained model, an engine, sampling on the main thread). The caller owns it.
   */
  evaluationPolicy?(): ServingPolicy;
  /** The weights a sampler loads after an update (empty for an engine run: the sampler finds them by version). */
  samplerWeights(): NamedTensors;
  /** The checkpoint after `step` completed steps, with the run's own `state` (horizon, alarms, …) added to the trainer's. */
  checkpointContent(step: number, state: Readonly<Record<string, unknown>>): Promise<CheckpointContent>;
  /** Frees the models; stops worker threads without waiting. */
  dispose(): void;
  /** {@link dispose}, then waits for worker threads and connections to close. */
  close(): Promise<void>;
}
