/**
 * Builds the learning side of a run from its config: tokenizer (trained on the environment's own
 * text), the learner's model, the sampler's copy of it, an optional frozen reference model, and
 * the trainer — either fresh or restored from a checkpoint.
 *
 * The sampler owns a separate model instance on purpose: weights reach it only as a published,
 * versioned message, exactly as they will across processes over NATS.
 */
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
import { criticConfigOf, trainerSettingsOf } from './algorithm-setup.js';

/** Everything that learns or acts, for one run. */
export interface PolicyStack {
  readonly tokenizer: BpeTokenizer;
  /** The learner's model (trained in place). */
  readonly learnerModel: TransformerModel;
  /** The sampler's model (receives published weights). */
  readonly samplerModel: TransformerModel;
  readonly policy: TransformerPolicy;
  readonly trainer: PolicyTrainer;
  /** The critic (ppo), or null. */
  readonly critic: Critic | null;
  /** The learner's gradient workers when `train.dataParallel` > 1, else null. */
  readonly gradientPool: GradientPool | null;
  /** Frees the models; stops the gradient workers without waiting (use {@link close} to wait). */
  dispose(): void;
  /** {@link dispose}, then waits until every gradient worker thread has exited. */
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
  const samplerModel = new TransformerModel(shape, root.fork('model'));
  samplerModel.loadNamedWeights(learnerModel.namedWeights());
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
  const policy = new TransformerPolicy(samplerModel, { endTokenId: tokenizer.specialId('end'), version, cacheMaxBytes: config.runtime.kvCacheMiB * 2 ** 20 });
  let closing: Promise<void> | null = null;
  let disposed = false;
  const dispose = (): void => {
    closing ??= gradientPool?.close() ?? Promise.resolve();
    closing.catch(() => {}); // awaited by close(); a failed shutdown must not become an unhandled rejection
    if (disposed) return;
    disposed = true;
    trainer.dispose();
    critic?.dispose();
    learnerModel.dispose();
    samplerModel.dispose();
    reference?.dispose();
  };
  return {
    tokenizer,
    learnerModel,
    samplerModel,
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
