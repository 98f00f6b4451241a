/**
 * Opens what `turnwise serve` was pointed at as a {@link ServedModel}:
 *
 *     run folder (checkpoints/latest) or checkpoint folder (trainer_state.json)
 *       turnwise's own model      its tokenizer, weights and episode layout; the run's sampling defaults
 *       a pretrained run          the trained weights (the checkpoint is a Hugging Face folder; a LoRA
 *                                 checkpoint's adapters go on the run's base, model.from), the base's
 *                                 tokenizer and chat template (copied into the checkpoint)
 *     Hugging Face model folder   config.json + safetensors + tokenizer files; its own chat template
 *     PEFT adapter folder         adapter_config.json + adapter_model.safetensors on its base_model_name_or_path
 *
 * Only what serving needs is built: one model, no optimizer, no reference copy. Before weights are
 * read, the memory serving needs is estimated (`./serve-memory.ts`) and a model that cannot fit the
 * wasm heap, or whose heap and KV caches together cannot fit the machine, is refused with the
 * estimate and what would fit.
 */
import { readFile, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import type { ResolvedConfig } from '../core/config.js';
import { CheckpointError, InvalidConfigError } from '../core/errors.js';
import { getEnvironmentSpec } from '../envs/registry.js';
import { nativeKernels } from '../backend/native.js';
import { type BackendPreference, describeBackend, selectBackend } from '../backend/select.js';
import { tf } from '../backend/tf.js';
import { type ChatModelFileContents, ChatContextBuilder, HfTokenizer, parseChatModelFiles, readChatModelFileContents } from '../models/chat/index.js';
import { loadCheckpoint, resolveCheckpointDir } from '../models/checkpoint.js';
import { fromHfConfig } from '../models/hf/hf-config.js';
import { checkBaseModel } from '../models/hf/fingerprint.js';
import { describeHfModel, type HfModelInfo, inspectHfModel } from '../models/hf/hf-model.js';
import { readHfWeights } from '../models/hf/hf-weights.js';
import { isAdapterFolder, readAdapterFiles } from '../models/lora/peft-files.js';
import type { LoraSpec } from '../models/lora/lora.js';
import { ALLOCATOR_SLACK, formatBytes } from '../models/memory-estimate.js';
import { turnwiseText } from '../models/policy-text.js';
import { BpeTokenizer } from '../models/tokenizer/index.js';
import { type TransformerConfig, TransformerModel } from '../models/transformer/model.js';
import { TransformerPolicy } from '../models/transformer-policy.js';
import { contextPolicyOf } from '../runtime/policy-stack.js';
import { type MemoryLimits, memoryLimitsOf } from '../runtime/run-memory.js';
import { loadRunConfig } from '../runtime/run-folder.js';
import { choiceBuilder, episodePrompts, templatePrompts } from './chat-prompts.js';
import { modelScorer } from './prompt-scorer.js';
import { type ServeMemory, serveMemory } from './serve-memory.js';
import type { SamplingDefaults, ServedModel } from './served-model.js';
import type { TokenDecoder } from './token-text.js';

/** Options of {@link loadServedModel}. */
export interface LoadServedOptions {
  /** Model id clients send. Default the folder's name (a run's name). */
  readonly modelName?: string;
  /** Cap on the context (prompt + completion tokens), as vLLM's --max-model-len. Default the model's. */
  readonly maxContext?: number;
  /** Tensor backend. Default a run's own, else `auto`. */
  readonly backend?: BackendPreference;
  /** Bytes of per-request KV caches kept between the chunks of a reply. Default 128 MiB. */
  readonly kvCacheBytes?: number;
}

/** A loaded model and what the console shows about it. */
export interface LoadedModel extends ServedModel {
  /** One line: what was loaded, from where, on which backend. */
  readonly description: string;
  /** More lines for the console (architecture, memory, adapters). */
  readonly notes: readonly string[];
  dispose(): void;
}

const isFile = (path: string): Promise<boolean> => stat(path).then((s) => s.isFile(), () => false);

/** The OpenAI defaults (temperature 1, top_p 1; max_tokens what the context leaves), for a folder that has no run. */
const OPENAI_DEFAULTS: SamplingDefaults = { temperature: 1, topP: 1, chatMaxTokens: 'context' };

/**
 * Loads `location` (module comment).
 * @example const model = await loadServedModel('models/SmolLM2-135M-Instruct');
 */
export async function loadServedModel(location: string, options: LoadServedOptions = {}): Promise<LoadedModel> {
  if ((await isFile(join(location, 'trainer_state.json'))) || (await isFile(join(location, 'checkpoints', 'latest')))) return loadRun(location, options);
  if (await isFile(join(location, 'config.json'))) {
    const backend = await selectBackend(options.backend ?? 'auto');
    const info = await inspectHfModel(location);
    const model = await openHf(info, options, null);
    return servedHf(model, await readChatModelFileContents(location), location, options, {
      id: options.modelName ?? basename(resolve(location)),
      description: `${location} (Hugging Face model, ${describeBackend(backend)})`,
      defaults: OPENAI_DEFAULTS,
      constrainToListedActions: false,
      version: 0,
    });
  }
  if (await isFile(join(location, 'adapter_config.json'))) {
    const backend = await selectBackend(options.backend ?? 'auto');
    const adapter = await readAdapterFiles(location);
    if (adapter.baseModel === null) throw new CheckpointError(join(location, 'adapter_config.json'), 'names no base_model_name_or_path: the base model folder is unknown');
    const base = isAbsolute(adapter.baseModel) ? adapter.baseModel : resolve(location, adapter.baseModel);
    const info = await inspectHfModel(base);
    const model = await openHf(info, options, adapter);
    const textFolder = (await isFile(join(location, 'tokenizer.json'))) ? location : base;
    return servedHf(model, await readChatModelFileContents(textFolder), textFolder, options, {
      id: options.modelName ?? basename(resolve(location)),
      description: `${location} (LoRA adapters on ${base}, ${describeBackend(backend)})`,
      defaults: OPENAI_DEFAULTS,
      constrainToListedActions: false,
      version: 0,
    });
  }
  throw new CheckpointError(location, 'is not a model folder (no config.json), a PEFT adapter folder (no adapter_config.json), a checkpoint folder (no trainer_state.json) or a run folder (no checkpoints/latest)');
}

/** A run or checkpoint folder. */
async function loadRun(location: string, options: LoadServedOptions): Promise<LoadedModel> {
  const checkpointDir = await resolveCheckpointDir(location);
  const runDir = dirname(dirname(checkpointDir));
  const config = await loadRunConfig(runDir);
  const backend = await selectBackend(options.backend ?? config.model.backend, { matmul: config.model.matmul });
  const state = JSON.parse(await readFile(join(checkpointDir, 'trainer_state.json'), 'utf8')) as { step?: unknown; policyVersion?: unknown; baseModel?: unknown };
  const version = Number(state.policyVersion ?? 0);
  const id = options.modelName ?? basename(resolve(runDir));
  const description = `${checkpointDir} (step ${String(state.step)}, ${config.env.name}, ${describeBackend(backend)})`;
  const kvCacheBytes = options.kvCacheBytes ?? config.runtime.kvCacheMiB * 2 ** 20;
  if (config.model.from !== null) {
    // A pretrained run: the checkpoint holds the trained weights (or adapters) and the base's tokenizer files.
    const lora = await isAdapterFolder(checkpointDir);
    const weightsFolder = lora ? config.model.from : checkpointDir;
    // Adapters go only on the base they were trained on.
    if (lora) await checkBaseModel(state.baseModel, config.model.from, checkpointDir);
    const info = await inspectHfModel(weightsFolder).catch((error: unknown) => {
      if (lora) throw new InvalidConfigError('model.from', `the LoRA run's base model cannot be read: ${(error as Error).message}`, { cause: error });
      throw error;
    });
    // --max-context is honoured up to the base model's own limit (the run's context only capped training).
    const model = await openHf(info, { ...options, kvCacheBytes }, lora ? await readAdapterFiles(checkpointDir) : null, config.model.maxContext);
    const defaults: SamplingDefaults = { temperature: config.sampling.temperature, topP: config.sampling.topP, chatMaxTokens: config.sampling.maxActionTokens };
    return servedHf(model, await readChatModelFileContents(checkpointDir), checkpointDir, { ...options, kvCacheBytes }, { id, description, defaults, constrainToListedActions: config.sampling.constrained, version });
  }
  const checkpoint = await loadCheckpoint(checkpointDir);
  const tokenizer = BpeTokenizer.fromJSON(checkpoint.tokenizerJson);
  const trained = fromHfConfig(checkpoint.hfConfig as Record<string, unknown>);
  // turnwise's own model never saw positions past its context: a longer one is refused, a shorter one honoured.
  if (options.maxContext !== undefined && options.maxContext > trained.maxContext) {
    throw new InvalidConfigError('--max-context', `${options.maxContext} is more than the ${trained.maxContext} tokens this model was trained at (model.maxContext): give at most ${trained.maxContext}`);
  }
  const model = TransformerModel.fromNamedWeights({ ...trained, maxContext: options.maxContext ?? trained.maxContext }, checkpoint.weights);
  const spec = getEnvironmentSpec(config.env.name);
  const probe = spec.create({ settings: config.env.settings });
  const envInstruction = probe.instruction();
  await probe.close();
  return ownServedModel({ id, config, tokenizer, model, envInstruction, version, kvCacheBytes, description });
}

/** What {@link ownServedModel} takes. */
export interface OwnModelParts {
  readonly id: string;
  /** The run's config (context layout, decoding, sampling defaults). */
  readonly config: ResolvedConfig;
  readonly tokenizer: BpeTokenizer;
  /** The model (disposed with the served model). */
  readonly model: TransformerModel;
  /** The environment's instruction, for conversations that carry none. */
  readonly envInstruction: string;
  readonly version?: number;
  readonly kvCacheBytes?: number;
  readonly description?: string;
}

/**
 * turnwise's own model served: its tokenizer, its episode layout for chat, the run's sampling defaults.
 * @example const served = ownServedModel({ id: 'tiny', config, tokenizer, model, envInstruction: 'Reach the goal.' });
 */
export function ownServedModel(parts: OwnModelParts): LoadedModel {
  const { config, tokenizer, model } = parts;
  const maxContext = model.config.maxContext;
  const text = turnwiseText(tokenizer, contextPolicyOf(config));
  // One prefill call feeds at most the served context: the one full-context prefill `./serve-memory.ts` counts.
  const policy = new TransformerPolicy(model, { endTokenId: text.endTokenId, stopTokenIds: text.stopTokenIds, version: parts.version ?? 0, cacheMaxBytes: parts.kvCacheBytes ?? 128 * 2 ** 20, maxPrefillTokens: maxContext });
  const hf = HfTokenizer.fromJSON(tokenizer.toJSON());
  const files = text.files({ modelMaxLength: maxContext, maxNewTokens: config.sampling.maxActionTokens });
  const tokConfig = JSON.parse(files.find((f) => f.name === 'tokenizer_config.json')?.data ?? '{}') as Record<string, unknown>;
  return {
    id: parts.id,
    policy,
    maxContext,
    vocabSize: text.vocabSize,
    stopTokenIds: text.stopTokenIds,
    tokens: { decode: (ids, keep) => text.decode(ids, keep), encode: (t) => text.encode(t), tokenOf: (i) => hf.tokenOf(i), byteLevel: true, addedIds: new Set(hf.addedTokens.map((t) => t.id)), specialIds: new Set(hf.addedTokens.flatMap((t) => (t.special ? [t.id] : []))) },
    chat: episodePrompts(text, parts.envInstruction, config.sampling.constrained, maxContext),
    scorer: modelScorer(model),
    defaults: { temperature: config.sampling.temperature, topP: config.sampling.topP, chatMaxTokens: config.sampling.maxActionTokens },
    tokenizerInfo: tokenizerInfoOf(tokConfig, maxContext),
    description: parts.description ?? `${parts.id} (turnwise's own model)`,
    notes: [],
    dispose: () => model.dispose(),
  };
}

/** The shortest context `serve` chooses by itself when the model's own does not fit. */
const MIN_DEFAULT_CONTEXT = 256;

/**
 * What serving `info` at `context` tokens holds (`./serve-memory.ts`): the heap's part and the KV
 * caches outside it.
 * @example serveMemoryOf(info, 2048, 2 ** 27).heap
 */
export function serveMemoryOf(info: HfModelInfo, context: number, kvCacheBytes: number, lora: LoraSpec | null = null): ServeMemory {
  return serveMemory({ ...info.config, maxContext: context }, { parameters: info.parameters, lora, kvCacheBytes, nativeKernels: nativeKernels() !== null });
}

/** Serving `e` fits `limits`: its heap the tensor backend's ceiling, and heap and KV caches together the machine's memory. */
function fitsLimits(e: ServeMemory, limits: MemoryLimits): boolean {
  return (limits.tensorBytes === null || e.heap <= limits.tensorBytes) && e.machine <= limits.machineBytes;
}

/** One line naming each part of `e` at `context` tokens. */
function describeServeMemory(e: ServeMemory, context: number): string {
  const slack = `(+${Math.round(ALLOCATOR_SLACK * 100)} % allocator slack)`;
  const pass = e.scoring >= e.generation ? `scoring a ${context}-token prompt ${formatBytes(e.scoring)}` : `a ${context}-token prefill ${formatBytes(e.generation)}`;
  const kept = e.kvCache - e.kvInFlight;
  return `heap: weights ${formatBytes(e.weights)} + fused q/k/v ${formatBytes(e.fusedQkv)} + ${pass} ${slack} = ${formatBytes(e.heap)}; KV caches ${formatBytes(e.kvCache)} outside the heap (${formatBytes(kept)} kept between chunks + ${formatBytes(e.kvInFlight)} for a ${context}-token request)`;
}

/**
 * The memory serving `shape` needs, as one line; refuses what cannot fit the wasm heap or the machine.
 * @throws InvalidConfigError naming `--max-context`, with the estimate by part and what would fit.
 * @example checkServeMemory(info, { ...info.config, maxContext: 2048 }, 2 ** 27, null) // 'memory needed: heap: weights 513 MiB + …'
 */
export function checkServeMemory(info: HfModelInfo, shape: TransformerConfig, kvCacheBytes: number, lora: LoraSpec | null, limits: MemoryLimits = memoryLimitsOf(tf.getBackend())): string {
  const e = serveMemoryOf(info, shape.maxContext, kvCacheBytes, lora);
  const parts = describeServeMemory(e, shape.maxContext);
  const shorter = `a shorter context (--max-context, now ${shape.maxContext})`;
  if (limits.tensorBytes !== null && e.heap > limits.tensorBytes) {
    throw new InvalidConfigError(
      '--max-context',
      `${info.folder} needs about ${formatBytes(e.heap)} of tensor memory to serve (${parts}), more than the wasm backend's ${formatBytes(limits.tensorBytes)} heap; what would fit: ${shorter}, a smaller model, or the tfjs-node backend (npm install @tensorflow/tfjs-node, or -gpu)`,
    );
  }
  if (e.machine > limits.machineBytes) {
    throw new InvalidConfigError(
      '--max-context',
      `${info.folder} needs about ${formatBytes(e.machine)} to serve (${parts}), more than this machine's ${formatBytes(limits.machineBytes)} of memory; what would fit: ${shorter}, a smaller KV-cache budget (a run's runtime.kvCacheMiB, now ${formatBytes(kvCacheBytes)}), or a smaller model`,
    );
  }
  return `memory needed: ${parts}`;
}

/** What {@link servingContext} checks besides the asked context. */
export interface ServingContextOptions {
  /** What a run trained at, used when nothing was asked. */
  readonly fallback?: number;
  /** Adapters the model is served with. Default none. */
  readonly lora?: LoraSpec | null;
  /** The limits to fit. Default this machine's for the current backend. */
  readonly limits?: MemoryLimits;
}

/**
 * The context a model is served with, and a line saying how it was chosen: `--max-context` when
 * given (refused past the model's own limit: it would be a different model), else the model's own
 * limit, halved until serving fits the wasm heap and the machine (SmolLM2's 8,192 tokens would need
 * 6.3 GiB of heap on the wasm backend, 4,096 fit); `fallback` is what a run trained at, used when
 * nothing was asked.
 */
export function servingContext(info: HfModelInfo, asked: number | undefined, kvCacheBytes: number, options: ServingContextOptions = {}): { maxContext: number; note: string | null } {
  const own = info.config.maxContext;
  const { fallback, lora = null, limits = memoryLimitsOf(tf.getBackend()) } = options;
  if (asked !== undefined) {
    if (!(Number.isInteger(asked) && asked > 0)) throw new InvalidConfigError('--max-context', `expected a positive integer, got ${asked}`);
    if (asked > own) throw new InvalidConfigError('--max-context', `${asked} is more than ${info.folder}'s own limit of ${own} tokens (max_position_embeddings, or a sliding window): give at most ${own}`);
    return { maxContext: asked, note: asked < own ? `context: ${asked} tokens (--max-context; the model's own is ${own})` : null };
  }
  if (fallback !== undefined) return { maxContext: Math.min(fallback, own), note: `context: ${Math.min(fallback, own)} tokens (the run's model.maxContext; --max-context up to ${own} to serve longer prompts)` };
  let context = own;
  const fits = (t: number) => fitsLimits(serveMemoryOf(info, t, kvCacheBytes, lora), limits);
  while (!fits(context) && context / 2 >= MIN_DEFAULT_CONTEXT) context = Math.floor(context / 2);
  if (context === own) return { maxContext: own, note: null };
  const whole = serveMemoryOf(info, own, kvCacheBytes, lora);
  const where = limits.tensorBytes !== null && whole.heap > limits.tensorBytes ? `the wasm heap (the model's own ${own} would need ${formatBytes(whole.heap)} there)` : `this machine's memory (the model's own ${own} would need ${formatBytes(whole.machine)})`;
  return { maxContext: context, note: `context: ${context} tokens, the longest whose prompt scoring fits ${where}; --max-context to choose` };
}

/** The weights of an HF folder (plus adapters), at the context {@link servingContext} chose. */
async function openHf(info: HfModelInfo, options: LoadServedOptions, adapter: Awaited<ReturnType<typeof readAdapterFiles>> | null, fallback?: number): Promise<{ model: TransformerModel; notes: string[] }> {
  const kvCacheBytes = options.kvCacheBytes ?? 128 * 2 ** 20;
  const lora = adapter?.spec ?? null;
  const context = servingContext(info, options.maxContext, kvCacheBytes, { ...(fallback === undefined ? {} : { fallback }), lora });
  const shape: TransformerConfig = { ...info.config, maxContext: context.maxContext };
  const notes = [describeHfModel(info), ...info.notes.map((n) => `note: ${n}`)];
  if (context.note !== null) notes.push(context.note);
  notes.push(checkServeMemory(info, shape, kvCacheBytes, lora));
  const model = TransformerModel.fromNamedWeights(shape, await readHfWeights(info.folder));
  if (adapter !== null) {
    model.attachLora(adapter.spec, adapter.weights);
    notes.push(`LoRA r=${adapter.spec.rank} alpha=${adapter.spec.alpha} on ${adapter.spec.targets.join(', ')}`);
  }
  return { model, notes };
}

/** What {@link servedHf} takes besides the model. */
interface HfServeSpec {
  readonly id: string;
  readonly description: string;
  readonly defaults: SamplingDefaults;
  readonly constrainToListedActions: boolean;
  readonly version: number;
}

/**
 * A Hugging Face tokenizer as the server reads text from it (`tokenizerJson`: its tokenizer.json,
 * whose decoder says whether tokens are byte-level).
 * @example const tokens = hfTokenDecoder(files.tokenizer, contents.tokenizerJson);
 */
export function hfTokenDecoder(tokenizer: HfTokenizer, tokenizerJson: unknown): TokenDecoder & { encode(text: string): Int32Array } {
  const decoder = (tokenizerJson as { decoder?: { type?: string; decoders?: { type?: string }[] } }).decoder;
  return {
    decode: (ids, keep) => tokenizer.decode(ids, { skipSpecialTokens: !keep }),
    encode: (text) => tokenizer.encode(text),
    tokenOf: (id) => tokenizer.tokenOf(id),
    byteLevel: decoder?.type === 'ByteLevel' || (decoder?.decoders ?? []).some((d) => d.type === 'ByteLevel'),
    addedIds: new Set(tokenizer.addedTokens.map((t) => t.id)),
    specialIds: new Set(tokenizer.addedTokens.flatMap((t) => (t.special ? [t.id] : []))),
  };
}

/** A Hugging Face model with its tokenizer side. */
function servedHf(opened: { model: TransformerModel; notes: string[] }, contents: ChatModelFileContents, folder: string, options: LoadServedOptions, spec: HfServeSpec): LoadedModel {
  const { model, notes } = opened;
  try {
    const files = parseChatModelFiles(contents, { folder });
    const tokenizer = files.tokenizer;
    if (tokenizer.vocabSize > model.config.vocabSize) throw new CheckpointError(folder, `the tokenizer has ${tokenizer.vocabSize} ids but the model only ${model.config.vocabSize} embedding rows`);
    if (files.stopTokenIds.length === 0) {
      throw new CheckpointError(folder, 'names no end-of-sequence id (generation_config.json or config.json eos_token_id, tokenizer_config.json eos_token): generation could not stop');
    }
    model.restrictOutputs(tokenizer.vocabSize);
    const builder = files.template === undefined ? 'the model has no chat template' : choiceBuilder(files.template, tokenizer, files.stopTokenIds);
    const stopTokenIds = builder instanceof ChatContextBuilder ? builder.stopTokenIds : files.stopTokenIds;
    const endTokenId = builder instanceof ChatContextBuilder ? builder.endOfTurnId : (files.stopTokenIds[0] as number);
    // One prefill call feeds at most the served context: the one full-context prefill `./serve-memory.ts` counts.
    const policy = new TransformerPolicy(model, { endTokenId, stopTokenIds, version: spec.version, cacheMaxBytes: options.kvCacheBytes ?? 128 * 2 ** 20, maxPrefillTokens: model.config.maxContext });
    const tokens = hfTokenDecoder(tokenizer, contents.tokenizerJson);
    const tokConfig = (typeof contents.tokenizerConfig === 'object' && contents.tokenizerConfig !== null ? contents.tokenizerConfig : {}) as Record<string, unknown>;
    return {
      id: spec.id,
      policy,
      maxContext: model.config.maxContext,
      vocabSize: tokenizer.vocabSize,
      stopTokenIds,
      tokens,
      chat: files.template === undefined ? null : templatePrompts(files.template, tokenizer, { constrainToListedActions: spec.constrainToListedActions, builder }),
      ...(files.template === undefined ? { chatUnavailable: `${folder} has no chat template (tokenizer_config.json chat_template or chat_template.jinja): a base model` } : {}),
      scorer: modelScorer(model),
      defaults: spec.defaults,
      tokenizerInfo: { ...tokenizerInfoOf(tokConfig, model.config.maxContext), ...Object.fromEntries(Object.entries(files.specialTokens)), chat_template: files.template?.source ?? null },
      description: spec.description,
      notes: [...notes, ...(typeof builder === 'string' && files.template !== undefined ? [`note: guided_choice unavailable: ${builder}`] : [])],
      dispose: () => model.dispose(),
    };
  } catch (error) {
    model.dispose();
    throw error;
  }
}

/** `tokenizer_config.json` as vLLM's /tokenizer_info answers (special-token strings, the context, the template). */
function tokenizerInfoOf(tokConfig: Record<string, unknown>, maxContext: number): Record<string, unknown> {
  const { added_tokens_decoder: _decoder, ...rest } = tokConfig;
  const str = (v: unknown): string | null => (typeof v === 'string' ? v : typeof (v as { content?: unknown })?.content === 'string' ? ((v as { content: string }).content) : null);
  return {
    tokenizer_class: typeof rest.tokenizer_class === 'string' ? rest.tokenizer_class : 'PreTrainedTokenizerFast',
    ...rest,
    bos_token: str(rest.bos_token),
    eos_token: str(rest.eos_token),
    pad_token: str(rest.pad_token),
    chat_template: typeof rest.chat_template === 'string' ? rest.chat_template : null,
    model_max_length: maxContext,
  };
}
