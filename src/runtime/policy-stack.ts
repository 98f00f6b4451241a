/**
 * Builds the learning side of a run from its config: tokenizer (trained on the environment's own
 * text), the learner's model, the sampler's copy of it, an optional frozen reference model, and
 * the trainer — either fresh or restored from a checkpoint.
 *
 * The sampler owns a separate model instance on purpose: weights reach it only as a published,
 * versioned message, exactly as they will across processes over NATS. It runs in inference worker
 * threads (`runtime.inferenceWorkers`, issue #20) or, with 0, on this thread.
 */
import { availableParallelism } from 'node:os';
import type { ResolvedConfig } from '../core/config.js';
import { Rng } from '../core/rng.js';
import type { EnvironmentSpec } from '../envs/environment.js';
import type { CheckpointContent, NamedTensors } from '../models/checkpoint.js';
import { BpeTokenizer, trainBpe } from '../models/tokenizer/index.js';
import type { Tokenizer } from '../models/tokenizer.js';
import { Critic } from '../models/critic.js';
import { GradientPool, type ReplicaSpec } from '../models/data-parallel/gradient-pool.js';
import { PolicyTrainer, type TrainerState } from '../models/trainer.js';
import { TransformerModel, type TransformerConfig } from '../models/transformer.js';
import { fromHfConfig } from '../models/hf/hf-config.js';
import { TransformerPolicy } from '../models/transformer-policy.js';
import { tf } from '../models/backend/tf.js';
import type { BackendPreference, MatmulPreference } from '../models/backend/select.js';
import { isNativeMatMulEnabled } from '../models/backend/wasm-batch-matmul.js';
import { InferencePool } from '../models/inference/inference-pool.js';
import { localServingPolicy, type ServingPolicy } from '../models/inference/serving-policy.js';
import { criticConfigOf, trainerSettingsOf } from './algorithm-setup.js';

/** Everything that learns or acts, for one run. */
export interface PolicyStack {
  readonly tokenizer: BpeTokenizer;
  /** The learner's model (trained in place). */
  readonly learnerModel: TransformerModel;
  /** The sampler's policy: its own model copy, in inference workers or on this thread; receives published weights. */
  readonly policy: ServingPolicy;
  readonly trainer: PolicyTrainer;
  /** The critic (ppo), or null. */
  readonly critic: Critic | null;
  /** The learner's gradient workers when `train.dataParallel` > 1, else null. */
  readonly gradientPool: GradientPool | null;
  /** Frees the models; stops the gradient and inference workers without waiting (use {@link close} to wait). */
  dispose(): void;
  /** {@link dispose}, then waits until every gradient and inference worker thread has exited. */
  close(): Promise<void>;
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
  return { backend, matmul: backend === 'wasm' && !isNativeMatMulEnabled() ? 'wasm' : 'auto' };
}

/** Options of {@link servingPolicyOf}. */
export interface ServingPolicyOptions {
  readonly config: ResolvedConfig;
  /** The model's shape (passed as is to each worker's `TransformerModel`). */
  readonly shape: TransformerConfig;
  readonly endTokenId: number;
  /** Weights to serve (HF layout) and their version. */
  readonly weights: NamedTensors;
  readonly version: number;
  /** Worker threads; 0 = this thread. Default {@link inferenceWorkersOf}. */
  readonly workers?: number;
  /** Tensor backend of the workers. Default: this thread's current one. */
  readonly backend?: { backend: BackendPreference; matmul: MatmulPreference };
}

/**
 * The sampler's policy: a copy of the model in inference workers (the KV-cache budget split between
 * them), or on this thread when `workers` is 0.
 * @example const policy = servingPolicyOf({ config, shape, endTokenId, weights: model.namedWeights(), version: 0 });
 */
export function servingPolicyOf(options: ServingPolicyOptions): ServingPolicy {
  const { config, shape, endTokenId, weights, version } = options;
  const workers = options.workers ?? inferenceWorkersOf(config);
  const cacheBytes = config.runtime.kvCacheMiB * 2 ** 20;
  if (workers === 0) {
    const model = new TransformerModel(shape, Rng.fromSeed(config.seed).fork('model'));
    model.loadNamedWeights(weights);
    return localServingPolicy(model, new TransformerPolicy(model, { endTokenId, version, cacheMaxBytes: cacheBytes }));
  }
  return new InferencePool({
    workers,
    spec: { model: shape, policy: { endTokenId, cacheMaxBytes: cacheBytes / workers }, ...(options.backend ?? currentBackend()) },
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

/**
 * Builds the stack, fresh from `config.seed` or restored from `checkpoint`.
 * @example const stack = await buildPolicyStack(config, getEnvironmentSpec('babyai'), null);
 */
export async function buildPolicyStack(
  config: ResolvedConfig,
  spec: EnvironmentSpec,
  checkpoint: CheckpointContent | null,
): Promise<PolicyStack> {
  const root = Rng.fromSeed(config.seed);
  const tokenizer = checkpoint ? BpeTokenizer.fromJSON(checkpoint.tokenizerJson) : trainRunTokenizer(config, spec);
  const shape = checkpoint
    ? fromHfConfig(checkpoint.hfConfig as Record<string, unknown>)
    : transformerConfigOf(config, tokenizer.vocabSize);
  const learnerModel = new TransformerModel(shape, root.fork('model'));
  if (checkpoint) learnerModel.loadNamedWeights(checkpoint.weights);
  const version = checkpoint ? Number(checkpoint.state.policyVersion ?? 0) : 0;
  // The KL reference is the initial policy; it is rebuilt from the seed on resume (same values).
  const reference =
    config.algorithm.klCoef > 0 ? new TransformerModel(shape, root.fork('model')) : null;
  // The critic: a value head on the learner's trunk, or a separate small model (its weights resume from the trainer state).
  const criticConfig = criticConfigOf(config.algorithm);
  let critic: Critic | null = null;
  let criticSpec: ReplicaSpec['critic'] = null;
  if (criticConfig?.trunk === 'shared') {
    critic = new Critic({ trunk: 'shared', dModel: shape.dModel });
    criticSpec = { trunk: 'shared', dModel: shape.dModel };
  } else if (criticConfig?.trunk === 'separate') {
    const { dModel, nLayers, nHeads, ffnHidden } = criticConfig;
    const criticShape = { ...shape, dModel, nLayers, nHeads, ffnHidden };
    const model = new TransformerModel(criticShape, root.fork('critic'));
    critic = new Critic({ trunk: 'separate', model, dModel });
    criticSpec = { trunk: 'separate', dModel, model: criticShape };
  }
  // Data parallelism: the workers hold replicas; the optimizer (and so checkpoints) stay here.
  // The pool starts its threads on the first training step, so eval and serve never start any.
  const workers = config.train.dataParallel;
  const gradientPool = workers > 1 ? new GradientPool({ workers, spec: { policy: shape, critic: criticSpec }, policy: learnerModel, critic }) : null;
  const trainer = new PolicyTrainer({ policy: learnerModel, reference, critic, initialVersion: version, gradientPool, ...trainerSettingsOf(config) });
  if (checkpoint) await trainer.setState(trainerStateOf(checkpoint.optimizer, version));
  const policy = servingPolicyOf({ config, shape, endTokenId: tokenizer.specialId('end'), weights: learnerModel.namedWeights(), version });
  let closing: Promise<void> | null = null;
  let disposed = false;
  const dispose = (): void => {
    closing ??= Promise.all([gradientPool?.close(), policy.close()]).then(() => undefined);
    closing.catch(() => {}); // awaited by close(); a failed shutdown must not become an unhandled rejection
    if (disposed) return;
    disposed = true;
    trainer.dispose();
    critic?.dispose();
    learnerModel.dispose();
    reference?.dispose();
  };
  return {
    tokenizer,
    learnerModel,
    policy,
    trainer,
    critic,
    gradientPool,
    dispose,
    async close() {
      dispose();
      await closing;
    },
  };
}

/** Re-exported for callers that only need the tokenizer type. */
export type { Tokenizer };
