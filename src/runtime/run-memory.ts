/**
 * The memory a run's config asks for, estimated from the config alone before anything is
 * allocated, so that a config too large for the machine is refused with the estimate and the fields
 * behind it instead of growing for minutes and dying (a `model.dModel` of 2^20 ran to 4.2 GiB and
 * crashed with a RangeError; `algorithm.groupSize: 1e8` grew to 3 GiB without a line of output).
 *
 * Two parts, each an upper bound rather than a prediction:
 * - the models (turnwise's own: the learner, the sampler's copy, the KL reference, Adam's state,
 *   one micro-batch's activations; the KV caches, JS memory outside the tensor backend; see
 *   `../models/memory-estimate.ts`), with the
 *   tokenizer's configured vocabulary (a trained tokenizer never has more). A pretrained model
 *   (`model.from`) is checked once its config.json is read (`./pretrained-stack.ts`);
 * - the rollout of one step: `tasksPerStep x groupSize` episodes of up to the largest horizon's
 *   turns, each turn's context at most `model.maxContext` tokens, about
 *   {@link ROLLOUT_BYTES_PER_TOKEN} bytes per token between the trajectories and the training batch
 *   (twice that when the next step's rollout overlaps training: modes one-step-off and async).
 *
 * Each further inference or gradient worker adds a copy of the weights. The models must fit the
 * tensor backend (the wasm heap is 4 GiB; each worker has its own), and everything the machine's memory.
 * Where Adam's moments live is the caller's to say ({@link OptimizerPlacement}): on the native path
 * they are outside the heap and count against the machine alone, as the KV caches always do.
 */
import { availableParallelism, totalmem } from 'node:os';
import type { ResolvedConfig } from '../core/config.js';
import { InvalidConfigError } from '../core/errors.js';
import { describeEstimate, estimateMemory, formatBytes, type MemoryEstimate, parameterCount, WASM_HEAP_BYTES } from '../models/memory-estimate.js';
import type { TransformerConfig } from '../models/transformer/model.js';
import { criticConfigOf } from './algorithm-setup.js';
import { gradientWorkersOf } from './gradient-workers.js';

/** Bytes a rollout keeps per context token: prompt and action ids, log-probs, masks, and the padded batch rows built from them. */
export const ROLLOUT_BYTES_PER_TOKEN = 32;

/** What a config needs, by part, in bytes. */
export interface RunMemoryEstimate {
  /** turnwise's own models, or null for a pretrained model (checked when it is opened). */
  readonly models: MemoryEstimate | null;
  /** A separate critic's weights and optimizer state (ppo with `critic.trunk: separate`), else 0. */
  readonly critic: number;
  /** Weight copies beyond the estimate's one sampler copy: one per further inference worker and per further gradient worker. */
  readonly replicas: number;
  /** One step's episodes (two with an overlapping rollout). */
  readonly rollout: number;
  /** The evaluation's own sampler beside the rollout (`train.evalOverlap`): a weight copy per inference worker and a KV-cache budget; else 0. */
  readonly evaluation: number;
  readonly total: number;
}

/** Where the optimizer's state lives (the native path keeps Adam's moments outside the heap: `AdamW`). */
export interface OptimizerPlacement {
  readonly optimizerOnHost: boolean;
}

/** Everything in the tensor backend: the estimate when the placement is not known. */
const IN_HEAP: OptimizerPlacement = { optimizerOnHost: false };

/** What the estimate is checked against. */
export interface MemoryLimits {
  /** The tensor backend's ceiling (the wasm heap), or null when only the machine bounds it. */
  readonly tensorBytes: number | null;
  /** The machine's memory. */
  readonly machineBytes: number;
}

/**
 * The limits of this machine for tensor backend `backendName` (`tf.getBackend()`).
 * @example memoryLimitsOf('wasm') // { tensorBytes: 4294967296, machineBytes: os.totalmem() }
 */
export function memoryLimitsOf(backendName: string): MemoryLimits {
  return { tensorBytes: backendName === 'wasm' ? WASM_HEAP_BYTES : null, machineBytes: totalmem() };
}

/** turnwise's own model shape as the config asks for it, with the tokenizer's configured vocabulary. */
function ownShape(config: ResolvedConfig): TransformerConfig {
  const m = config.model;
  return { vocabSize: config.tokenizer.vocabSize, dModel: m.dModel, nLayers: m.nLayers, nHeads: m.nHeads, ffnHidden: m.ffnHidden, maxContext: m.maxContext, ropeTheta: m.ropeTheta, rmsNormEps: 1e-5, tieEmbeddings: m.tieEmbeddings };
}

/**
 * The estimate for `config` (pure: the config alone).
 * @example estimateRunMemory(resolveConfig(parseConfig({}))).total // about 140 MiB
 */
export function estimateRunMemory(config: ResolvedConfig, placement: OptimizerPlacement = IN_HEAP): RunMemoryEstimate {
  const own = config.model.from === null;
  const shape = ownShape(config);
  const models = own
    ? estimateMemory(shape, {
        lora: null,
        reference: config.algorithm.klCoef > 0,
        microBatchTokens: Math.min(config.algorithm.maxTokensPerMicroBatch, config.derived.episodesPerStep * shape.maxContext),
        sequenceLength: shape.maxContext,
        kvCacheBytes: config.runtime.kvCacheMiB * 2 ** 20,
        optimizerOnHost: placement.optimizerOnHost,
        constrained: true, // turnwise's own model may train constrained targets: its head is never chunked
      })
    : null;
  const criticConfig = criticConfigOf(config.algorithm);
  // Weights, two Adam moments, gradients and their clipped copy.
  const critic = criticConfig?.trunk === 'separate' ? 5 * 4 * parameterCount({ ...shape, ...criticConfig, tieEmbeddings: false }) : 0;
  // Inference workers (`runtime.inferenceWorkers`, auto: one per core, less one when training overlaps) and gradient workers each hold a copy.
  const asked = config.runtime.inferenceWorkers;
  const inferenceWorkers = asked === 'auto' ? Math.max(1, availableParallelism() - (config.mode === 'sync' ? 0 : 1)) : asked;
  const replicas = models === null ? 0 : (Math.max(0, inferenceWorkers - 1) + (gradientWorkersOf(config).count - 1)) * models.weights;
  const overlapping = config.mode === 'sync' ? 1 : 2;
  const rollout = overlapping * config.derived.episodesPerStep * config.derived.maxHorizon * config.model.maxContext * ROLLOUT_BYTES_PER_TOKEN;
  const evalSide = models !== null && config.train.evalOverlap && config.mode === 'sync' && config.train.evalEvery > 0 && inferenceWorkers > 0;
  const evaluation = evalSide ? inferenceWorkers * models.weights + config.runtime.kvCacheMiB * 2 ** 20 : 0;
  return { models, critic, replicas, rollout, evaluation, total: modelBytes(models) + critic + replicas + rollout + evaluation };
}

/** The models' bytes in the heap and outside it (Adam's moments on the native path, the KV caches). */
function modelBytes(models: MemoryEstimate | null): number {
  return models === null ? 0 : models.total + models.host + models.kvCache;
}

/**
 * Refuses a config whose estimate passes `limits`, naming the estimate and the fields that drive
 * it; returns the estimate as one line otherwise.
 * @example checkRunMemory(config, memoryLimitsOf(tf.getBackend()), { optimizerOnHost: nativeAdamAvailable() }) // 'memory needed: about 140 MiB (...)'
 */
export function checkRunMemory(config: ResolvedConfig, limits: MemoryLimits, placement: OptimizerPlacement = IN_HEAP): string {
  const estimate = estimateRunMemory(config, placement);
  const { models } = estimate;
  const { model, algorithm, derived } = config;
  const rolloutLine = `rollout ${formatBytes(estimate.rollout)} (algorithm.tasksPerStep ${algorithm.tasksPerStep} x algorithm.groupSize ${algorithm.groupSize} episodes x ${derived.maxHorizon} turns x model.maxContext ${model.maxContext} tokens x ${ROLLOUT_BYTES_PER_TOKEN} bytes${config.mode === 'sync' ? '' : ' x 2 overlapping steps'})`;
  const modelFields = `model.dModel ${model.dModel}, model.nLayers ${model.nLayers}, model.ffnHidden ${model.ffnHidden}, model.maxContext ${model.maxContext}, tokenizer.vocabSize ${config.tokenizer.vocabSize}, algorithm.maxTokensPerMicroBatch ${algorithm.maxTokensPerMicroBatch}, runtime.kvCacheMiB ${config.runtime.kvCacheMiB}`;
  const modelLine = models === null ? null : `models ${describeEstimate(models)}`;
  const criticLine = estimate.critic > 0 ? `critic ${formatBytes(estimate.critic)}` : null;
  const replicaLine = estimate.replicas > 0 ? `worker copies ${formatBytes(estimate.replicas)} (runtime.inferenceWorkers, train.dataParallel)` : null;
  const evaluationLine = estimate.evaluation > 0 ? `evaluation sampler ${formatBytes(estimate.evaluation)} (train.evalOverlap, runtime.kvCacheMiB)` : null;
  const line = `memory needed: about ${formatBytes(estimate.total)} (${[modelLine, criticLine, replicaLine, evaluationLine, rolloutLine].filter((s) => s !== null).join('; ')})`;
  if (models !== null && limits.tensorBytes !== null && models.total > limits.tensorBytes) {
    throw new InvalidConfigError(
      blameModel(config, models),
      `the model needs about ${formatBytes(models.total)} of tensor memory (${describeEstimate(models)}; from ${modelFields}), more than the wasm backend's ${formatBytes(limits.tensorBytes)} heap; make the model or its context smaller, or install @tensorflow/tfjs-node (no 4 GiB limit)`,
    );
  }
  if (estimate.total > limits.machineBytes) {
    const path = models !== null && modelBytes(models) >= estimate.rollout ? blameModel(config, models) : 'algorithm.groupSize';
    const fields = path === 'algorithm.groupSize' ? '' : `; the model from ${modelFields}`;
    throw new InvalidConfigError(path, `the run needs about ${formatBytes(estimate.total)}, more than this machine's ${formatBytes(limits.machineBytes)} of memory: ${line.slice('memory needed: about '.length)}${fields}`);
  }
  return line;
}

/** The field most behind the model's estimate: the KV-cache budget, its width (weights and optimizer) or its context (activations). */
function blameModel(config: ResolvedConfig, models: MemoryEstimate): string {
  const stateBytes = models.weights + models.samplerCopy + models.reference + models.optimizer;
  if (models.kvCache > Math.max(stateBytes, models.activations)) return 'runtime.kvCacheMiB';
  return models.activations > stateBytes ? 'model.maxContext' : config.model.dModel >= config.model.ffnHidden ? 'model.dModel' : 'model.ffnHidden';
}
