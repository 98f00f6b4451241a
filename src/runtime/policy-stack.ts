/**
 * Builds the learning side of a run from its config: the text side (tokenizer and context layout),
 * the learner's model, the sampler's copy of it, an optional frozen reference model, and the
 * trainer — either fresh or restored from a checkpoint. Two kinds of model:
 * - turnwise's own small model (`model.from: null`): a tokenizer trained on the environment's own
 *   text, random weights from the seed, the compact turnwise context layout;
 * - a pretrained Hugging Face model (`model.from`): its weights, tokenizer and chat template,
 *   fine-tuned in full or with LoRA adapters (src/runtime/pretrained-stack.ts).
 *
 * The sampler owns a separate model instance on purpose: weights reach it only as a published,
 * versioned message, exactly as they will across processes over NATS. turnwise's own model samples
 * in inference worker threads (`runtime.inferenceWorkers`, issue #20; 0 keeps it on this thread). A
 * pretrained model's sampler does too (one worker by default): a LoRA worker reads the frozen base
 * from the folder itself and receives only the adapters each version.
 */
import { availableParallelism } from 'node:os';
import type { ResolvedConfig } from '../core/config.js';
import { Rng } from '../core/rng.js';
import type { EnvironmentSpec } from '../envs/environment.js';
import type { CheckpointContent, NamedTensors } from '../models/checkpoint.js';
import type { ContextPolicy } from '../models/context.js';
import { Critic } from '../learner/critic.js';
import { GradientPool, type ReplicaSpec } from '../learner/data-parallel/gradient-pool.js';
import { fromHfConfig } from '../models/hf/hf-config.js';
import { turnwiseText } from '../models/policy-text.js';
import { BpeTokenizer, trainBpe } from '../models/tokenizer/index.js';
import type { Tokenizer } from '../models/tokenizer/contract.js';
import { PolicyTrainer, type TrainerState } from '../learner/trainer.js';
import { type TransformerConfig, TransformerModel } from '../models/transformer/model.js';
import { TransformerPolicy, type TransformerPolicyOptions } from '../models/transformer-policy.js';
import { tf } from '../backend/tf.js';
import type { BackendPreference, MatmulPreference } from '../backend/select.js';
import { nativeUse } from '../backend/native.js';
import { InferencePool } from '../models/inference/inference-pool.js';
import { localServingPolicy, type ServingPolicy } from '../models/inference/serving-policy.js';
import { criticConfigOf, trainerSettingsOf } from './algorithm-setup.js';
import { openPretrainedModels } from './pretrained-stack.js';
import { nativeAdamAvailable } from '../backend/native-adam.js';
import { checkRunMemory, memoryLimitsOf } from './run-memory.js';
import type { PretrainedServing, RunModels } from './run-models.js';
import type { RunStack } from './run-stack.js';
import { checkpointContentOf } from './checkpoint-content.js';
import { gradientWorkersOf } from './gradient-workers.js';

export type { RunModels } from './run-models.js';

/** Everything that learns or acts, for one run, with turnwise's own model in this process (`model.engine: local`). */
export interface PolicyStack extends RunStack {
  /** The learner's model (trained in place). */
  readonly learnerModel: TransformerModel;
  /** The sampler's policy: its own model copy, in inference workers or on this thread; receives published weights. */
  readonly policy: ServingPolicy;
  readonly trainer: PolicyTrainer;
  /** The critic (ppo), or null. */
  readonly critic: Critic | null;
  /** The learner's gradient workers when `train.dataParallel` > 1, else null. */
  readonly gradientPool: GradientPool | null;
}

/** Trains the run's tokenizer on text from random episodes of the environment. */
export function trainRunTokenizer(config: ResolvedConfig, spec: EnvironmentSpec): BpeTokenizer {
  const corpus = spec.corpus({ settings: config.env.settings }, config.tokenizer.corpusEpisodes, config.seed);
  return trainBpe(corpus, { vocabSize: config.tokenizer.vocabSize });
}

/** The transformer shape the config asks for, for a tokenizer of `vocabSize`. */
export function transformerConfigOf(config: ResolvedConfig, vocabSize: number): TransformerConfig {
  const m = config.model;
  return {
    vocabSize,
    dModel: m.dModel,
    nLayers: m.nLayers,
    nHeads: m.nHeads,
    ffnHidden: m.ffnHidden,
    maxContext: m.maxContext,
    ropeTheta: m.ropeTheta,
    rmsNormEps: 1e-5,
    tieEmbeddings: m.tieEmbeddings,
  };
}

/** turnwise's layout of a run's contexts (its own model): what the config's `context` section says. */
export function contextPolicyOf(config: ResolvedConfig): ContextPolicy {
  return {
    history: config.context.history === 'auto' ? 0 : config.context.history,
    includeInstruction: config.context.includeInstruction,
    maxContextTokens: config.model.maxContext - config.sampling.maxActionTokens,
  };
}

/**
 * Inference workers the sampler gets: `runtime.inferenceWorkers`, or for `auto` one per core, less
 * one when a learner trains while the sampler samples (modes one-step-off and async).
 * @example inferenceWorkersOf(config) // 2 on a 2-core machine in mode sync
 */
export function inferenceWorkersOf(config: ResolvedConfig): number {
  const asked = config.runtime.inferenceWorkers;
  if (asked !== 'auto') return asked;
  return Math.max(1, availableParallelism() - (config.mode === 'sync' ? 0 : 1));
}

/** Where this thread's tensors run now: the inference workers use the same backend and matmul path. */
function currentBackend(): { backend: BackendPreference; matmul: MatmulPreference } {
  const name = tf.getBackend();
  const backend: BackendPreference = name === 'wasm' || name === 'cpu' || name === 'tensorflow' ? name : 'auto';
  return { backend, matmul: backend === 'wasm' && nativeUse() === 'off' ? 'wasm' : 'auto' };
}

/** Options of {@link servingPolicyOf}. */
export interface ServingPolicyOptions {
  readonly config: ResolvedConfig;
  /** The model's shape (passed as is to each worker's `TransformerModel`). */
  readonly shape: TransformerConfig;
  /** End and stop ids of the decoding policy. */
  readonly policy: Pick<TransformerPolicyOptions, 'endTokenId' | 'stopTokenIds'>;
  /** Weights to serve (HF layout) and their version. */
  readonly weights: NamedTensors;
  readonly version: number;
  /** Worker threads; 0 = this thread. Default {@link inferenceWorkersOf}. */
  readonly workers?: number;
  /** Tensor backend of the workers. Default: this thread's current one. */
  readonly backend?: { backend: BackendPreference; matmul: MatmulPreference };
  /** The model to sample with when `workers` is 0 (default: a new one loaded with `weights`); the policy owns it. */
  readonly local?: TransformerModel;
  /** A pretrained model's serving (its workers read the base themselves; `weights` are then what trains). */
  readonly pretrained?: PretrainedServing;
}

/**
 * The sampler's policy: a copy of the model in inference workers (the KV-cache budget split between
 * them), or on this thread when `workers` is 0.
 * @example const policy = servingPolicyOf({ config, shape, policy: { endTokenId }, weights: model.namedWeights(), version: 0 });
 */
export function servingPolicyOf(options: ServingPolicyOptions): ServingPolicy {
  const { config, shape, weights, version, pretrained } = options;
  const workers = options.workers ?? pretrained?.workers ?? inferenceWorkersOf(config);
  const cacheBytes = config.runtime.kvCacheMiB * 2 ** 20;
  const prefill = pretrained === undefined ? {} : { maxPrefillTokens: pretrained.maxPrefillTokens };
  if (workers === 0) {
    let model = options.local;
    if (model === undefined) {
      model = new TransformerModel(shape, Rng.fromSeed(config.seed).fork('model'));
      model.loadNamedWeights(weights);
    }
    return localServingPolicy(model, new TransformerPolicy(model, { ...options.policy, ...prefill, version, cacheMaxBytes: cacheBytes }));
  }
  options.local?.dispose();
  const served = pretrained === undefined ? {} : { ...(pretrained.base ? { base: pretrained.base } : {}), ...(pretrained.outputs ? { outputs: pretrained.outputs } : {}) };
  return new InferencePool({
    workers,
    spec: { model: shape, policy: { ...options.policy, ...prefill, cacheMaxBytes: cacheBytes / workers }, ...(options.backend ?? currentBackend()), ...served },
    weights,
    version,
  });
}

function trainerStateOf(tensors: NamedTensors, version: number): TrainerState {
  return { version, optimizer: [...tensors].map(([name, t]) => ({ name, shape: t.shape, data: t.data })) };
}

/** Optimizer state as named tensors, for the checkpoint. */
export function optimizerTensors(state: TrainerState): NamedTensors {
  return new Map(state.optimizer.map((a) => [a.name, { shape: a.shape, data: a.data }]));
}

/** turnwise's own model: tokenizer from the environment's text (or the checkpoint), weights from the seed (or the checkpoint). */
function openOwnModels(config: ResolvedConfig, spec: EnvironmentSpec, checkpoint: CheckpointContent | null, root: Rng): RunModels {
  const tokenizer = checkpoint ? BpeTokenizer.fromJSON(checkpoint.tokenizerJson) : trainRunTokenizer(config, spec);
  const shape = checkpoint ? fromHfConfig(checkpoint.hfConfig as Record<string, unknown>) : transformerConfigOf(config, tokenizer.vocabSize);
  const learner = new TransformerModel(shape, root.fork('model'));
  if (checkpoint) learner.loadNamedWeights(checkpoint.weights);
  const sampler = new TransformerModel(shape, root.fork('model'));
  sampler.loadNamedWeights(learner.namedWeights());
  // The KL reference is the initial policy; it is rebuilt from the seed on resume (same values).
  const reference = config.algorithm.klCoef > 0 ? new TransformerModel(shape, root.fork('model')) : null;
  return { text: turnwiseText(tokenizer, contextPolicyOf(config)), shape, learner, sampler, reference, owned: reference ? [reference] : [], notes: [] };
}

/**
 * Builds the stack, fresh from `config.seed` or restored from `checkpoint`.
 * @example const stack = await buildPolicyStack(config, getEnvironmentSpec('babyai'), null);
 */
export async function buildPolicyStack(
  config: ResolvedConfig,
  spec: EnvironmentSpec,
  checkpoint: CheckpointContent | null,
): Promise<PolicyStack> {
  // Refused before the tokenizer is trained or a tensor allocated (eval, export and serve come here too).
  checkRunMemory(config, memoryLimitsOf(tf.getBackend()), { optimizerOnHost: nativeAdamAvailable() });
  const root = Rng.fromSeed(config.seed);
  const models = config.model.from === null ? openOwnModels(config, spec, checkpoint, root) : await openPretrainedModels(config, checkpoint, root);
  const { text, shape, learner: learnerModel, sampler: samplerModel, reference } = models;
  const version = checkpoint ? Number(checkpoint.state.policyVersion ?? 0) : 0;
  // The critic: a value head on the learner's trunk, or a separate small model (its weights resume from the trainer state).
  const criticConfig = criticConfigOf(config.algorithm);
  let critic: Critic | null = null;
  let criticSpec: ReplicaSpec['critic'] = null;
  if (criticConfig?.trunk === 'shared') {
    critic = new Critic({ trunk: 'shared', dModel: shape.dModel });
    criticSpec = { trunk: 'shared', dModel: shape.dModel };
  } else if (criticConfig?.trunk === 'separate') {
    const { dModel, nLayers, nHeads, ffnHidden } = criticConfig;
    // A small model of its own (plain multi-head attention) on the policy's vocabulary.
    const { vocabSize, maxContext, ropeTheta, rmsNormEps } = shape;
    const criticShape: TransformerConfig = { vocabSize, maxContext, ropeTheta, rmsNormEps, tieEmbeddings: false, dModel, nLayers, nHeads, ffnHidden };
    const model = new TransformerModel(criticShape, root.fork('critic'));
    critic = new Critic({ trunk: 'separate', model, dModel });
    criticSpec = { trunk: 'separate', dModel, model: criticShape };
  }
  // Data parallelism: the workers hold replicas; the optimizer (and so checkpoints) stay here.
  // The pool starts its threads on the first training step, so eval and serve never start any.
  const workers = gradientWorkersOf(config).count;
  const gradientPool = workers > 1 ? new GradientPool({ workers, spec: { policy: shape, critic: criticSpec }, policy: learnerModel, critic }) : null;
  const trainer = new PolicyTrainer({ policy: learnerModel, reference, critic, initialVersion: version, gradientPool, ...trainerSettingsOf(config) });
  // A model engine's checkpoint keeps its optimizer on the engine: locally it is served and evaluated, not trained on.
  if (checkpoint && checkpoint.state.engine === undefined) await trainer.setState(trainerStateOf(checkpoint.optimizer, version));
  // Sampling runs in inference workers: turnwise's own model a copy each, a pretrained one its base read from the folder.
  const policy = servingPolicyOf({
    config,
    shape,
    policy: { endTokenId: text.endTokenId, stopTokenIds: text.stopTokenIds },
    weights: learnerModel.namedWeights(),
    version,
    local: samplerModel,
    ...(models.serving === undefined ? {} : { pretrained: models.serving }),
  });
  let closing: Promise<void> | null = null;
  let disposed = false;
  // A pretrained model's workers read the base from the folder first: wait for them here, so that
  // the first act's timeout does not count their start (or a failed start surfaces now).
  const ready = models.serving !== undefined && policy instanceof InferencePool ? policy.backend() : null;
  const dispose = (): void => {
    // The sampler first: a LoRA sampler shares the learner's base, which the learner frees.
    closing ??= Promise.all([gradientPool?.close(), policy.close()]).then(() => undefined);
    closing.catch(() => {}); // awaited by close(); a failed shutdown must not become an unhandled rejection
    if (disposed) return;
    disposed = true;
    trainer.dispose();
    critic?.dispose();
    for (const model of models.owned) model.dispose();
    learnerModel.dispose();
  };
  if (ready !== null) {
    try {
      await ready;
    } catch (error) {
      dispose();
      await (closing as Promise<void> | null)?.catch(() => undefined);
      throw error;
    }
  }
  const stack: PolicyStack = {
    text,
    learnerModel,
    policy,
    trainer,
    critic,
    gradientPool,
    notes: models.notes,
    maxContext: learnerModel.config.maxContext,
    summary: `${learnerModel.parameterCount} parameters`,
    samplerWeights: () => learnerModel.namedWeights(),
    ...(models.serving === undefined && inferenceWorkersOf(config) > 0
      ? { evaluationPolicy: () => servingPolicyOf({ config, shape, policy: { endTokenId: text.endTokenId, stopTokenIds: text.stopTokenIds }, weights: learnerModel.namedWeights(), version: trainer.version }) }
      : {}),
    checkpointContent: async (step, state) => {
      const trainerState = await trainer.getState();
      return checkpointContentOf(config, stack, step, optimizerTensors(trainerState), { policyVersion: trainer.version, ...state });
    },
    dispose,
    async close() {
      dispose();
      await closing;
    },
  };
  return stack;
}

/** Re-exported for callers that only need the tokenizer type. */
export type { Tokenizer };
