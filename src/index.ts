/**
 * Public surface of `turnwise` (package.json `exports['.']`): an explicit whitelist (STYLE.md §8).
 * Sub-paths: `turnwise/algorithms` (advantage estimators, losses), `turnwise/envs` (environments).
 */
export { loadConfig, parseConfig, resolveConfig } from './core/config.js';
export type { ResolvedConfig, TurnwiseConfig, TurnwiseConfigInput } from './core/config.js';
export {
  CheckpointError,
  EnvironmentError,
  InvalidArgumentError,
  InvalidConfigError,
  InvalidMessageError,
  NoResponderError,
  RequestTimeoutError,
  StalePolicyError,
  TurnwiseError,
  UnparsableActionError,
} from './core/errors.js';
export { METRICS } from './core/metrics.js';
export type { MetricName } from './core/metrics.js';
export { Rng } from './core/rng.js';
export { SimulatedClock, systemClock } from './core/clock.js';
export type { Clock } from './core/clock.js';
export type { DecodeConstraint, Observation, Outcome, Split, StepResult, TaskId, Trajectory, Turn } from './core/types.js';
export { formatTaskId, parseTaskId } from './core/task-id.js';
export type { Bus, MessageContext, MessageHandler, RequestOptions, SubscribeOptions, Subscription } from './runtime/bus.js';
export { MemoryBus } from './runtime/memory-bus.js';
export { decode, encode } from './runtime/codec.js';
export { trainRun } from './runtime/train-run.js';
export type { TrainRunOptions, TrainRunResult } from './runtime/train-run.js';
export { evalRun } from './runtime/eval-run.js';
export type { EvalRunOptions, EvalRunResult } from './runtime/eval-run.js';
export type { RunEvent } from './runtime/run-events.js';
export { RunFolderExistsError } from './runtime/run-folder.js';
export { RunFolderLockedError } from './runtime/run-lock.js';
export { RunStore } from './store/run-store.js';
export type { ActRequest, ActResult, Policy, SamplingOptions } from './core/policy.js';
export { TransformerModel } from './models/transformer.js';
export { TransformerPolicy } from './models/transformer-policy.js';
export { selectBackend } from './models/backend/select.js';
