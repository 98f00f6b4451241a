/**
 * Public surface of `turnwise` (package.json `exports['.']`): an explicit whitelist of names (no
 * `export *`), so nothing internal becomes public by accident.
 * Sub-paths: `turnwise/algorithms` (advantage estimators, losses), `turnwise/envs` (environments).
 * The plug-in points (an environment, an advantage estimator, a policy loss, a reward shaper) are
 * exported here too, so a user extends turnwise from `import … from 'turnwise'` alone.
 */
export { applyOverrides, loadConfig, parseConfig, parseOverride, resolveConfig } from './core/config.js';
export type { ConfigOverride } from './core/config.js';
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
export { byLengthMetric, byTurnMetric, METRIC_FAMILIES, METRICS, parseFamilyMetric } from './core/metrics.js';
export type { ByTurnQuantity, MetricName } from './core/metrics.js';
export type { RewardMode } from './core/reward-mode.js';
export { ALARM_NAMES } from './core/config/alarm-schema.js';
export type { AlarmName, AlarmsConfig } from './core/config/alarm-schema.js';
export { DETECTORS } from './runtime/alarms/detectors.js';
export type { AlarmFinding, StepSample } from './runtime/alarms/detectors.js';
export { initialAlarmState, observeStep } from './runtime/alarms/monitor.js';
export type { Alarm, AlarmState } from './runtime/alarms/monitor.js';
export { Rng } from './core/rng.js';
export { SimulatedClock, systemClock } from './core/clock.js';
export type { Clock } from './core/clock.js';
export type { DecodeConstraint, Observation, Outcome, Split, StepResult, TaskId, Trajectory, Turn } from './core/types.js';
export { formatTaskId, parseTaskId } from './core/task-id.js';
export type { Bus, MessageContext, MessageHandler, RequestOptions, SubscribeOptions, Subscription } from './bus/bus.js';
export { MemoryBus } from './bus/memory-bus.js';
export { decode, encode } from './bus/codec.js';
export { trainRun } from './runtime/train/train-run.js';
export type { TrainRunOptions, TrainRunResult } from './runtime/train/train-run.js';
export { evalRun } from './runtime/eval-run.js';
export type { EvalRunOptions, EvalRunResult } from './runtime/eval-run.js';
export type { RunEvent } from './runtime/run-events.js';
export { RunFolderExistsError } from './runtime/run-folder.js';
export { RunFolderLockedError } from './runtime/run-lock.js';
export { RunStore } from './store/run-store.js';
export type { ActRequest, ActResult, Policy, SamplingOptions } from './core/policy.js';
export { TransformerModel } from './models/transformer/model.js';
export { TransformerPolicy } from './models/transformer-policy.js';
export { selectBackend } from './backend/select.js';
export type { Environment, EnvironmentOptions, EnvironmentSpec, TaskCatalog } from './envs/environment.js';
export { getEnvironmentSpec, listEnvironments, registerEnvironment } from './envs/registry.js';
export type { AdvantageInput, AdvantageOutput, CustomEstimatorOptions } from './algorithms/advantage-input.js';
export { computeAdvantages } from './algorithms/advantages.js';
export { type AdvantageEstimatorPlugin, estimatorRegistry, registerAdvantageEstimator } from './algorithms/estimator-registry.js';
export type { PolicyLossInput, PolicyLossOptions, PolicyLossTerms } from './algorithms/losses.js';
export { ppoClipLoss } from './algorithms/losses.js';
export { type PolicyLossPlugin, policyLossRegistry, registerPolicyLoss } from './algorithms/policy-loss-registry.js';
export type { ProcessRewardHook, ProcessRewardInput, RewardShaperPlugin, RewardShaping } from './algorithms/reward-shapers.js';
export { registerRewardShaper, rewardShaperRegistry, rewardShapingOf, shapeTrajectory } from './algorithms/reward-shapers.js';
export type { PluginEntry, PluginKind } from './core/plugin-registry.js';
export { loadCheckpoint, resolveCheckpointDir, saveCheckpoint } from './models/checkpoint.js';
export type { CheckpointContent, NamedTensors } from './models/checkpoint.js';
export { readSafetensors, writeSafetensors } from './models/safetensors.js';
export type { SafetensorsFile, TensorRecord } from './models/safetensors.js';
export { loadTokenizer } from './models/tokenizer/io.js';
export type {
  AdamParams,
  EngineCapabilities,
  EngineDatum,
  EngineFactory,
  EngineLossConfig,
  EngineLossName,
  EngineOpenRequest,
  EngineSampleRequest,
  EngineSampleResult,
  EngineSequence,
  ForwardOutput,
  LossReduction,
  ModelEngine,
  OptimStepOutput,
  SamplerWeights,
} from './engines/engine.js';
export { LocalLoraEngine } from './engines/local/lora-engine.js';
export { TinkerClient } from './engines/tinker/client.js';
export type { TinkerClientSettings } from './engines/tinker/settings.js';
export { TinkerEngine, type TinkerEngineOptions } from './engines/tinker/tinker-engine.js';
export { serveModel } from './serve/server.js';
export type { RunningServer, ServeOptions } from './serve/server.js';
export { plotSeries, svgToPng } from './ui/plot.js';
export type { PlotSpec } from './ui/plot.js';
export { exportRun, metricsCsv, metricsJsonl } from './store/export/export-run.js';
export { readTfEvents } from './store/export/tfevents.js';
export type { TfEvent } from './store/export/tfevents.js';
export { TfEventWriter } from './store/export/tfevents-writer.js';
// The zod turnwise validates with: build plug-in settings schemas with this one, so they are the
// same zod classes the config parser checks against.
export { z } from 'zod';
