/**
 * The models of a run that starts from a pretrained Hugging Face model (`model.from`): the
 * folder's weights, tokenizer and chat template; full fine-tuning or LoRA; the KL reference is the
 * pretrained model itself (a frozen copy for full fine-tuning, the base with adapters off for
 * LoRA: no second copy). Before any weight is read, the memory the run needs is estimated and a
 * run that cannot fit the backend is refused with the estimate and what would fit.
 */
import { InvalidConfigError } from '../core/errors.js';
import type { ResolvedConfig } from '../core/config.js';
import type { Rng } from '../core/rng.js';
import { getEnvironmentSpec } from '../envs/registry.js';
import { tf } from '../backend/tf.js';
import { readChatModelFileContents } from '../models/chat/index.js';
import type { CheckpointContent } from '../models/checkpoint.js';
import { checkBaseModel } from '../models/hf/fingerprint.js';
import { describeHfModel, type HfModelInfo, inspectHfModel } from '../models/hf/hf-model.js';
import { readHfWeights } from '../models/hf/hf-weights.js';
import { LORA_TARGETS, type LoraSpec } from '../models/lora/lora.js';
import { nativeAdamAvailable } from '../backend/native-adam.js';
import { describeEstimate, estimateMemory, formatBytes, type MemoryEstimate, type MemoryPlan } from '../models/memory-estimate.js';
import { nativeKernels } from '../backend/native.js';
import { type ChatTextOptions, chatText } from '../models/policy-text.js';
import type { TrainableModel } from '../learner/train-contract.js';
import { type TransformerConfig, TransformerModel } from '../models/transformer/model.js';
import { checkFirstPromptsFit, type FirstPrompts, probeFirstPrompts } from './first-prompts.js';
import type { PretrainedServing, RunModels } from './run-models.js';
import { type MemoryLimits, memoryLimitsOf } from './run-memory.js';

/**
 * The LoRA spec of the config (`model.lora`), or null for full fine-tuning.
 * @example loraSpecOf(config) // { rank: 16, alpha: 32, dropout: 0.05, targets: [...] }
 */
export function loraSpecOf(config: ResolvedConfig): LoraSpec | null {
  const l = config.model.lora;
  return l === null ? null : { rank: l.rank, alpha: l.alpha, dropout: l.dropout, targets: [...l.targetModules], rsLora: l.rsLora };
}

/**
 * The chat layout and limits of a run (`context.chat`, `context.history`, the context cap).
 * @example chatText(contents, chatTextOptionsOf(config, 2048), folder)
 */
export function chatTextOptionsOf(config: ResolvedConfig, maxContext: number): ChatTextOptions {
  return {
    system: config.context.chat.system,
    acknowledge: config.context.chat.acknowledge,
    history: config.context.history === 'auto' ? 'full' : config.context.history,
    maxContext,
    maxResponseTokens: config.context.chat.maxResponseTokens,
  };
}

/** The model shape a run uses: the folder's, with the context capped at `model.maxContext`. */
export function runShapeOf(info: HfModelInfo, config: ResolvedConfig): TransformerConfig {
  return { ...info.config, maxContext: Math.min(info.config.maxContext, config.model.maxContext) };
}

/** Most new tokens one prefill call of a pretrained sampler feeds (bounds its intermediates: 280 MiB at the SmolLM2-135M shape with LoRA and the native kernels, models/sampler-memory.ts). */
export const PRETRAINED_PREFILL_TOKENS = 4096;

/**
 * Inference workers a pretrained run's sampler gets: `runtime.inferenceWorkers`, or for `auto` one
 * (each worker reads its own copy of the base; one keeps sampling off the event loop).
 * @example pretrainedSamplerWorkers(config) // 1
 */
export function pretrainedSamplerWorkers(config: ResolvedConfig): number {
  const asked = config.runtime.inferenceWorkers;
  return asked === 'auto' ? 1 : asked;
}

/**
 * The memory plan of a pretrained run: LoRA or full, checkpointed training, Adam's moments where
 * the optimizer keeps them (outside the heap on the native path), and the sampler's
 * batch (the largest of a step's episodes and an evaluation's, up to `runtime.samplerMaxBatch`).
 * A micro-batch's rows: without past turns (`context.history: 0`) each is one turn, a first prompt
 * and a reply, so with measured first prompts the plan is the most demanding micro-batch they
 * pack into; otherwise rows may grow to the whole context.
 */
export function pretrainedMemoryPlan(config: ResolvedConfig, shape: TransformerConfig, lora: LoraSpec | null, prompts: FirstPrompts | null = null): MemoryPlan {
  const episodes = Math.max(config.derived.episodesPerStep, config.train.evalEvery > 0 ? config.train.evalTasks : 0);
  const reply = config.sampling.maxActionTokens;
  const context = shape.maxContext;
  const oneTurn = config.context.history === 0 && prompts !== null;
  const turnsPerRow = config.context.history === 'full' || config.context.history === 'auto' ? config.derived.maxHorizon : config.context.history + 1;
  const lengths = oneTurn ? [...new Set(prompts.lengths.map((l) => Math.min(context, l + reply)))] : [context];
  const budget = config.algorithm.maxTokensPerMicroBatch;
  const rowsOfAStep = config.derived.episodesPerStep * config.derived.maxHorizon;
  const base: MemoryPlan = {
    lora,
    reference: config.algorithm.klCoef > 0,
    microBatchTokens: context,
    sequenceLength: context,
    kvCacheBytes: config.runtime.kvCacheMiB * 2 ** 20,
    checkpointing: true,
    optimizerOnHost: nativeAdamAvailable(), // the native path keeps Adam's moments outside the heap
    samplerWorkers: pretrainedSamplerWorkers(config),
    samplerRows: Math.min(config.runtime.samplerMaxBatch, episodes),
    prefillTokens: PRETRAINED_PREFILL_TOKENS,
    samplerContext: oneTurn ? Math.min(context, prompts.longest + reply) : context,
    nativeKernels: nativeKernels() !== null, // the workers take this thread's backend and native switch
  };
  // The packer never splits a row: at least one per micro-batch, more while they fit the budget.
  const candidates = lengths.map((length): MemoryPlan => {
    const rows = Math.max(1, Math.min(rowsOfAStep, Math.floor(budget / length)));
    return { ...base, microBatchTokens: rows * length, sequenceLength: length, targetTokens: rows * Math.min(length, turnsPerRow * reply) };
  });
  return candidates.reduce((worst, plan) => (estimateMemory(shape, plan).total > estimateMemory(shape, worst).total ? plan : worst));
}

/** Bytes a pretrained run holds on the machine: the learner's heap, each sampler worker's, Adam's moments and the KV caches. */
function machineBytesOf(estimate: MemoryEstimate, workers: number): number {
  return estimate.total + workers * estimate.samplerTotal + estimate.host + estimate.kvCache;
}

/**
 * What the run's models need, and whether it fits: every heap the tensor backend's ceiling (the
 * wasm heap), and all of it together, the KV caches and Adam's moments outside the heaps included,
 * the machine's memory.
 * @throws InvalidConfigError naming `model.from` with the estimate and what would fit, or the
 *   KV-cache field behind a run that outgrows the machine (`runtime.kvCacheMiB`, `runtime.samplerMaxBatch`).
 */
export function checkMemory(
  info: HfModelInfo,
  config: ResolvedConfig,
  shape: TransformerConfig,
  lora: LoraSpec | null,
  prompts: FirstPrompts | null = null,
  limits: MemoryLimits = memoryLimitsOf(tf.getBackend()),
): string {
  const estimate = estimateMemory(shape, pretrainedMemoryPlan(config, shape, lora, prompts));
  const line = `memory needed: ${describeEstimate(estimate)}`;
  const heap = limits.tensorBytes;
  const fits = (e: MemoryEstimate) => heap === null || (e.total <= heap && e.samplerTotal <= heap);
  if (!fits(estimate)) {
    const withLora = lora === null ? estimateMemory(shape, pretrainedMemoryPlan(config, shape, { rank: 16, alpha: 32, dropout: 0, targets: [...LORA_TARGETS] }, prompts)) : null;
    const options = [
      withLora !== null && fits(withLora) ? `LoRA (model.lora: {rank: 16}, about ${formatBytes(withLora.total)})` : null,
      `fewer tokens per micro-batch (algorithm.maxTokensPerMicroBatch, now ${config.algorithm.maxTokensPerMicroBatch}) or a shorter context (model.maxContext, now ${shape.maxContext})`,
      heap !== null && estimate.samplerTotal > heap ? `fewer rows per sampling batch (runtime.samplerMaxBatch, now ${config.runtime.samplerMaxBatch})` : null,
      'a smaller model',
      'the tfjs-node backend (npm install @tensorflow/tfjs-node, or -gpu; no 4 GiB limit)',
    ].filter((s) => s !== null);
    throw new InvalidConfigError(
      'model.from',
      `${info.folder} (${formatBytes(info.parameters * 4)} of float32 weights) needs about ${formatBytes(Math.max(estimate.total, estimate.samplerTotal))} (${describeEstimate(estimate)}), more than the wasm backend's ${formatBytes(heap as number)} heap; what would fit: ${options.join('; ')}`,
    );
  }
  const needed = machineBytesOf(estimate, pretrainedSamplerWorkers(config));
  if (needed <= limits.machineBytes) return line;
  // The KV caches are the one part that grows with runtime fields rather than the model and its context.
  const kept = estimate.kvCache - estimate.kvInFlight;
  const path = estimate.kvCache < needed / 2 ? 'model.from' : kept >= estimate.kvInFlight ? 'runtime.kvCacheMiB' : 'runtime.samplerMaxBatch';
  const fields = `runtime.kvCacheMiB ${config.runtime.kvCacheMiB}, runtime.samplerMaxBatch ${config.runtime.samplerMaxBatch}, runtime.inferenceWorkers ${config.runtime.inferenceWorkers}`;
  throw new InvalidConfigError(path, `the run needs about ${formatBytes(needed)}, more than this machine's ${formatBytes(limits.machineBytes)} of memory: ${describeEstimate(estimate)} (from ${fields})`);
}

/**
 * Refuses a training run whose context cannot hold the environment's first prompts and a reply
 * (read from the folder's config and tokenizer files alone: no weight is read).
 * @throws InvalidConfigError at `model.maxContext`, naming the tokens needed.
 * @example await checkPretrainedContext(config);
 */
export async function checkPretrainedContext(config: ResolvedConfig): Promise<void> {
  const folder = config.model.from;
  if (folder === null || config.context.format === 'turnwise') return;
  const info = await inspectHfModel(folder);
  const shape = runShapeOf(info, config);
  const text = chatText(await readChatModelFileContents(folder), chatTextOptionsOf(config, shape.maxContext), folder);
  const prompts = await probeFirstPrompts(config, getEnvironmentSpec(config.env.name), text);
  if (prompts !== null) checkFirstPromptsFit(config, prompts, shape.maxContext, info.config.maxContext);
}

/**
 * Opens the pretrained models of a run (see the module comment), restored from `checkpoint` when
 * resuming: its full weights, or its adapters on the folder's base.
 * @example const models = await openPretrainedModels(config, null, Rng.fromSeed(1));
 */
export async function openPretrainedModels(config: ResolvedConfig, checkpoint: CheckpointContent | null, root: Rng): Promise<RunModels> {
  const folder = config.model.from as string;
  if (config.context.format === 'turnwise') {
    throw new InvalidConfigError('context.format', "'turnwise' needs turnwise's own tokenizer; a pretrained model (model.from) talks through its chat template: use 'chat' or 'auto'");
  }
  if (config.train.dataParallel !== 'auto' && config.train.dataParallel > 1) {
    throw new InvalidConfigError('train.dataParallel', 'gradient workers are not implemented for pretrained models (model.from) yet: use 1');
  }
  // Before anything is read from the folder: a checkpoint goes only on the base it was trained on.
  if (checkpoint !== null) await checkBaseModel(checkpoint.state.baseModel, folder, `the checkpoint of step ${checkpoint.step}`);
  const info = await inspectHfModel(folder);
  const shape = runShapeOf(info, config);
  const lora = loraSpecOf(config);
  const notes = [`pretrained: ${describeHfModel(info)}`, ...info.notes.map((n) => `note: ${n}`)];
  if (shape.maxContext < info.config.maxContext) notes.push(`context capped at ${shape.maxContext} tokens (model.maxContext)`);
  const contents = await readChatModelFileContents(folder);
  const text = chatText(contents, chatTextOptionsOf(config, shape.maxContext), folder);
  // The first prompts size the memory plan (a training run refuses a context too short for them first: checkPretrainedContext).
  const prompts = await probeFirstPrompts(config, getEnvironmentSpec(config.env.name), text);
  if (prompts !== null) {
    notes.push(`first prompts: ${prompts.shortest}-${prompts.longest} tokens over ${prompts.lengths.length} sampled tasks, + ${config.sampling.maxActionTokens} for the reply, in a ${shape.maxContext}-token context`);
  }
  notes.push(checkMemory(info, config, shape, lora, prompts));
  if (text.vocabSize > shape.vocabSize) {
    throw new InvalidConfigError('model.from', `${folder}: the tokenizer has ${text.vocabSize} ids but the model only ${shape.vocabSize} embedding rows`);
  }
  const base = await readHfWeights(folder);
  const learner = TransformerModel.fromNamedWeights(shape, base);
  learner.checkpointActivations(true); // tfjs keeps a whole backward pass's tensors otherwise (transformer/checkpointed-layer.ts)
  let reference: TrainableModel | null = null;
  const owned: TransformerModel[] = [];
  let sampler: TransformerModel;
  if (lora !== null) {
    learner.attachLora(lora, checkpoint?.weights ?? root.fork('lora'));
    sampler = learner.sharingBase(root.fork('sampler'));
    if (config.algorithm.klCoef > 0) reference = adaptersOff(learner);
    notes.push(`LoRA r=${lora.rank} alpha=${lora.alpha} on ${lora.targets.join(', ')}: ${learner.trainableParameterCount.toLocaleString('en-US')} trainable parameters; the KL reference is the base with adapters off`);
  } else {
    if (checkpoint) learner.loadNamedWeights(checkpoint.weights);
    sampler = TransformerModel.fromNamedWeights(shape, learner.namedWeights());
    if (config.algorithm.klCoef > 0) {
      // The reference is the pretrained model as it was: the folder's weights, frozen.
      const frozen = TransformerModel.fromNamedWeights(shape, base);
      frozen.checkpointActivations(true); // its forward then frees each layer's intermediates as it goes
      reference = frozen;
      owned.push(frozen);
    }
    notes.push(`full fine-tuning: ${learner.trainableParameterCount.toLocaleString('en-US')} trainable parameters`);
  }
  // Embedding rows past the tokenizer's ids (vocabularies padded to a round size) are never emitted.
  for (const model of [learner, sampler, ...owned]) model.restrictOutputs(text.vocabSize);
  // The sampler runs in inference workers (off the event loop): a LoRA worker reads the base from
  // the folder itself and receives only the adapters each version.
  const workers = pretrainedSamplerWorkers(config);
  const serving: PretrainedServing = {
    workers,
    maxPrefillTokens: PRETRAINED_PREFILL_TOKENS,
    ...(text.vocabSize < shape.vocabSize ? { outputs: text.vocabSize } : {}),
    ...(lora !== null ? { base: { folder, lora } } : {}),
  };
  return { text, shape, learner, sampler, reference, owned, notes, serving };
}

/** The learner seen with its adapters off: the frozen base, for the KL term (no copy). */
function adaptersOff(model: TransformerModel): TrainableModel {
  return {
    forwardTrain: (batch, temperature) => model.withAdaptersOff(() => model.forwardTrain(batch, temperature)),
    trainableVariables: () => [],
    namedWeights: () => model.baseNamedWeights(),
    loadNamedWeights: () => {
      throw new InvalidConfigError('model.lora', 'the KL reference of a LoRA run is the frozen base: it cannot be loaded');
    },
  };
}

/**
 * A sampler's model on a machine of its own (a NATS sampler worker): turnwise's own shape with
 * seeded weights, or the pretrained folder (with fresh adapters for a LoRA run); either way the
 * learner's published weights replace what trains before the first request.
 * @example const model = await openSamplerModel(config, text.vocabSize, Rng.fromSeed(config.seed));
 */
export async function openSamplerModel(config: ResolvedConfig, vocabSize: number, root: Rng, ownShape: (vocab: number) => TransformerConfig): Promise<TransformerModel> {
  if (config.model.from === null) return new TransformerModel(ownShape(vocabSize), root.fork('model'));
  const info = await inspectHfModel(config.model.from);
  const model = TransformerModel.fromNamedWeights(runShapeOf(info, config), await readHfWeights(config.model.from));
  const lora = loraSpecOf(config);
  if (lora !== null) model.attachLora(lora, root.fork('lora'));
  model.restrictOutputs(vocabSize);
  return model;
}
