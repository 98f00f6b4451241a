/**
 * turnwise's own model as a {@link ModelEngine}: a LoRA adapter (alpha 32, every attention and MLP
 * projection, rank from the caller) over a Hugging Face base, on the tfjs backend in this process.
 * It is what `turnwise tinker serve` puts behind the HTTP API, and what a run or a test uses
 * in-process without HTTP (`LocalLoraEngine.open`).
 *
 * Semantics follow the Tinker API as the fixture server implements it: gradients accumulate over
 * forward_backward calls until optim_step, reduced by the base's rule; optim_step is optax's AdamW
 * (optax-adamw.ts) with t counting this model's steps and reports `turnwise/grad_norm` (the global
 * norm of the step's gradient before clipping) and `turnwise/learning_rate`; sampling follows
 * sampling.ts. Calls run one at a time in the order they were made.
 */
import { cp, mkdir } from 'node:fs/promises';
import { InvalidArgumentError } from '../../core/errors.js';
import { Rng } from '../../core/rng.js';
import { tf } from '../../backend/tf.js';
import type { LoraSpec, LoraTarget } from '../../models/lora/lora.js';
import type { NamedWeight, TransformerModel } from '../../models/transformer/model.js';
import type {
  AdamParams,
  EngineCapabilities,
  EngineDatum,
  EngineLossConfig,
  EngineLossName,
  EngineSampleRequest,
  EngineSampleResult,
  ForwardOutput,
  ModelEngine,
  OptimStepOutput,
  SamplerWeights,
} from '../engine.js';
import { parseTinkerPath, tinkerPath } from '../tinker/wire.js';
import { checkData } from './batch.js';
import { checkCheckpointName, checkpointExists, checkpointFolder, readPeftAdapter, readTrainingState, writeSamplerCheckpoint, writeTrainingCheckpoint } from './checkpoint-files.js';
import { elementwiseLossValues, LOCAL_LOSSES, requireLossInputs, resolveLoss } from './losses.js';
import { type LocalLoraBaseOptions, LocalLoraBase } from './lora-base.js';
import { adamWStep, type AdamWState, checkAdamParams, initialAdamWState } from './optax-adamw.js';
import { lossGradients, targetLogprobs } from './passes.js';
import { sampleFromModel } from './sampling.js';

/** Metric names of an optimizer step. */
export const GRAD_NORM_METRIC = 'turnwise/grad_norm';
export const LEARNING_RATE_METRIC = 'turnwise/learning_rate';

/** One model on a base. */
export interface LocalLoraModelOptions {
  /** The model's id in `tinker://<modelId>/…` paths (default `local`). */
  readonly modelId?: string;
  /** LoRA rank (1..the base's maxLoraRank). */
  readonly rank: number;
  /** Seeds the adapter's A and the sampling of requests that give no seed (default 0). */
  readonly seed?: number;
  /** Start from these PEFT adapter files instead of fresh adapters (a folder; rank must match). */
  readonly initialAdapterFolder?: string;
  /** Adapt only these projections (default all seven: attention and MLP). */
  readonly targets?: readonly LoraTarget[];
}

/**
 * The engine (module comment).
 * @example
 * const engine = await LocalLoraEngine.open('models/qwen3-tiny', { rank: 8, reduction: 'sequence-mean' });
 * await engine.forwardBackward(data, 'cross_entropy');
 * await engine.optimStep({ learningRate: 1e-2, beta1: 0.9, beta2: 0.95, eps: 1e-12, weightDecay: 0, gradClipNorm: 0 });
 */
export class LocalLoraEngine implements ModelEngine {
  readonly description: string;
  readonly capabilities: EngineCapabilities;
  readonly modelId: string;
  private readonly spec: LoraSpec;
  private readonly model: TransformerModel;
  private adam: AdamWState;
  private accumulated: Float32Array[] | null = null;
  private accumulatedData = 0;
  private readonly fallbackSeeds: Rng;
  private tail: Promise<unknown> = Promise.resolve();
  private closed = false;

  /** A model on `base`; the adapter comes from `initial` when given (see {@link LocalLoraEngine.create}). */
  private constructor(
    readonly base: LocalLoraBase,
    options: LocalLoraModelOptions,
    initial: Awaited<ReturnType<typeof readPeftAdapter>> | null,
    private readonly ownsBase: boolean,
  ) {
    this.modelId = options.modelId ?? 'local';
    checkCheckpointName(this.modelId, 'model_id');
    this.spec = { ...base.loraSpec(options.rank), ...(options.targets === undefined ? {} : { targets: [...options.targets] }) };
    if (initial !== null && initial.spec.rank !== options.rank) throw InvalidArgumentError.format('initialAdapterFolder', `adapter rank ${initial.spec.rank} differs from rank ${options.rank}`);
    const seed = options.seed ?? 0;
    this.model = base.adapterModel(this.spec, seed, initial?.weights);
    this.adam = initialAdamWState(this.model.trainableVariables().map((v) => v.size));
    this.fallbackSeeds = Rng.fromSeed(seed).fork('sample-seeds');
    this.capabilities = { losses: [...LOCAL_LOSSES], reduction: base.reduction, maxLoraRank: base.maxLoraRank };
    this.description = `turnwise local LoRA engine (rank ${options.rank}, alpha 32${base.sharedA ? ', q/k/v and gate/up share lora_A' : ''}, ${base.reduction} reduction) on ${base.name}`;
  }

  /** A model on a shared base (the server's way: several models, one base). */
  static async create(base: LocalLoraBase, options: LocalLoraModelOptions): Promise<LocalLoraEngine> {
    const initial = options.initialAdapterFolder === undefined ? null : await readPeftAdapter(options.initialAdapterFolder);
    return new LocalLoraEngine(base, options, initial, false);
  }

  /** Loads a base from `folder` and one model on it; {@link close} frees both. */
  static async open(folder: string, options: LocalLoraModelOptions & LocalLoraBaseOptions): Promise<LocalLoraEngine> {
    const base = await LocalLoraBase.load(folder, options);
    try {
      const initial = options.initialAdapterFolder === undefined ? null : await readPeftAdapter(options.initialAdapterFolder);
      return new LocalLoraEngine(base, options, initial, true);
    } catch (err) {
      base.close();
      throw err;
    }
  }

  /** Optimizer steps taken. */
  get step(): number {
    return this.adam.step;
  }

  forward(data: readonly EngineDatum[], loss: EngineLossName, config?: EngineLossConfig, signal?: AbortSignal): Promise<ForwardOutput> {
    return this.serial(signal, () => {
      const resolved = this.checkedLoss(data, loss, config);
      return this.output(data, resolved, targetLogprobs(this.model, data));
    });
  }

  forwardBackward(data: readonly EngineDatum[], loss: EngineLossName, config?: EngineLossConfig, signal?: AbortSignal): Promise<ForwardOutput> {
    return this.serial(signal, () => {
      const resolved = this.checkedLoss(data, loss, config);
      const { logprobs, grads } = lossGradients(this.model, data, resolved, this.base.reduction);
      if (this.accumulated === null) this.accumulated = grads;
      else for (const [k, acc] of this.accumulated.entries()) addInto(acc, grads[k] as Float32Array);
      this.accumulatedData += data.length;
      return this.output(data, resolved, logprobs);
    });
  }

  optimStep(adam: AdamParams, signal?: AbortSignal): Promise<OptimStepOutput> {
    return this.serial(signal, () => {
      checkAdamParams(adam);
      const vars = this.model.trainableVariables();
      const grads = this.accumulated ?? vars.map((v) => new Float32Array(v.size));
      if (this.base.reduction === 'sequence-mean' && this.accumulatedData > 0) for (const g of grads) scaleInto(g, 1 / this.accumulatedData);
      const params = vars.map((v) => Float32Array.from(v.dataSync() as Float32Array));
      const gradNorm = adamWStep(params, grads, this.adam, adam);
      vars.forEach((v, k) => {
        const t = tf.tensor(params[k] as Float32Array, v.shape);
        v.assign(t);
        t.dispose();
      });
      this.accumulated = null;
      this.accumulatedData = 0;
      return { metrics: { [GRAD_NORM_METRIC]: gradNorm, [LEARNING_RATE_METRIC]: adam.learningRate } };
    });
  }

  saveWeightsForSampler(name: string, signal?: AbortSignal): Promise<SamplerWeights> {
    return this.serial(signal, async () => {
      checkCheckpointName(name);
      if (await checkpointExists(this.base.checkpointsDir, this.modelId, 'sampler', name)) throw InvalidArgumentError.format('path', `sampler weights '${name}' already exist for model ${this.modelId}`);
      await writeSamplerCheckpoint(this.base.checkpointsDir, this.modelId, name, this.spec, this.model.namedWeights(), this.base.name);
      return { path: tinkerPath({ modelId: this.modelId, kind: 'sampler', name }) };
    });
  }

  sample(weights: SamplerWeights | 'base', requests: readonly EngineSampleRequest[], signal?: AbortSignal): Promise<EngineSampleResult[]> {
    return this.serial(signal, async () => {
      const model = weights === 'base' ? this.base.model : await this.samplerFor(weights.path);
      return requests.map((r) => sampleFromModel(model, r, this.fallbackSeeds.int(2 ** 31)));
    });
  }

  baseLogprobs(data: readonly EngineDatum[], signal?: AbortSignal): Promise<readonly Float32Array[]> {
    return this.serial(signal, () => {
      checkData(data, this.model.config.vocabSize, this.model.config.maxContext);
      return this.model.withAdaptersOff(() => targetLogprobs(this.model, data));
    });
  }

  saveState(name: string, signal?: AbortSignal): Promise<string> {
    return this.serial(signal, async () => {
      checkCheckpointName(name);
      const state = { adam: this.adam, sharedA: this.base.sharedA, rank: this.spec.rank };
      await writeTrainingCheckpoint(this.base.checkpointsDir, this.modelId, name, this.spec, this.model.namedWeights(), state, this.base.name);
      return tinkerPath({ modelId: this.modelId, kind: 'training', name });
    });
  }

  loadState(path: string, options: { readonly optimizer: boolean }, signal?: AbortSignal): Promise<void> {
    return this.serial(signal, async () => {
      const parsed = parseTinkerPath(path);
      if (parsed === null || parsed.kind !== 'training') throw InvalidArgumentError.format('path', `expected tinker://<model>/weights/<name>, got ${JSON.stringify(path)}`);
      const folder = checkpointFolder(this.base.checkpointsDir, parsed.modelId, 'training', parsed.name);
      const adapter = await readPeftAdapter(folder).catch((err: Error) => {
        throw InvalidArgumentError.format('path', `no training checkpoint ${path} (${err.message})`);
      });
      const state = await readTrainingState(folder);
      if (adapter.spec.rank !== this.spec.rank || adapter.spec.targets.join() !== this.spec.targets.join()) throw InvalidArgumentError.format('path', `checkpoint (rank ${adapter.spec.rank}, ${adapter.spec.targets.join('/')}) differs from this model (rank ${this.spec.rank}, ${this.spec.targets.join('/')})`);
      if (state.sharedA !== this.base.sharedA) throw InvalidArgumentError.format('path', `checkpoint ${state.sharedA ? 'ties' : 'does not tie'} lora_A; this server ${this.base.sharedA ? 'does' : 'does not'}`);
      this.model.loadNamedWeights(adapter.weights);
      const sizes = this.model.trainableVariables().map((v) => v.size);
      if (options.optimizer) {
        if (state.adam.m.length !== sizes.length || state.adam.m.some((m, i) => m.length !== sizes[i])) throw InvalidArgumentError.format('path', 'optimizer state does not match this model');
        this.adam = state.adam;
      } else this.adam = initialAdamWState(sizes);
      this.accumulated = null;
      this.accumulatedData = 0;
    });
  }

  downloadAdapter(weights: SamplerWeights, folder: string, signal?: AbortSignal): Promise<void> {
    return this.serial(signal, async () => {
      const parsed = parseTinkerPath(weights.path);
      if (parsed === null || parsed.kind !== 'sampler') throw InvalidArgumentError.format('path', `expected sampler weights, got ${JSON.stringify(weights.path)}`);
      await mkdir(folder, { recursive: true });
      await cp(checkpointFolder(this.base.checkpointsDir, parsed.modelId, 'sampler', parsed.name), folder, { recursive: true });
    });
  }

  /** The adapter as PEFT tensors (copies), e.g. to compare with a reference. */
  adapterWeights(): Map<string, NamedWeight> {
    return this.model.namedWeights();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.tail.catch(() => undefined);
    this.model.dispose();
    if (this.ownsBase) this.base.close();
  }

  /** Runs `work` after every earlier call (one at a time, in call order). */
  private serial<T>(signal: AbortSignal | undefined, work: () => T | Promise<T>): Promise<T> {
    const run = this.tail.then(
      () => this.start(signal, work),
      () => this.start(signal, work),
    );
    this.tail = run.catch(() => undefined);
    return run;
  }

  private start<T>(signal: AbortSignal | undefined, work: () => T | Promise<T>): T | Promise<T> {
    if (this.closed) throw InvalidArgumentError.format('engine', `model ${this.modelId} is closed`);
    signal?.throwIfAborted();
    return work();
  }

  private checkedLoss(data: readonly EngineDatum[], loss: EngineLossName, config: EngineLossConfig | undefined) {
    const resolved = resolveLoss(loss, config);
    checkData(data, this.model.config.vocabSize, this.model.config.maxContext);
    data.forEach((d, i) => {
      requireLossInputs(d, resolved, `data[${i}]`);
    });
    return resolved;
  }

  private output(data: readonly EngineDatum[], loss: ReturnType<typeof resolveLoss>, logprobs: Float32Array[]): ForwardOutput {
    const elementwiseLoss = data.map((d, i) => elementwiseLossValues(loss, logprobs[i] as Float32Array, d));
    let total = 0;
    for (const l of elementwiseLoss) for (const x of l) total += x;
    return { logprobs, elementwiseLoss, metrics: { 'loss:sum': total } };
  }

  private async samplerFor(path: string): Promise<TransformerModel> {
    const parsed = parseTinkerPath(path);
    if (parsed === null || parsed.kind !== 'sampler') throw InvalidArgumentError.format('model_path', `expected tinker://<model>/sampler_weights/<name>, got ${JSON.stringify(path)}`);
    return this.base.samplerModel(parsed.modelId, parsed.name);
  }
}

function addInto(acc: Float32Array, g: Float32Array): void {
  for (let i = 0; i < acc.length; i++) acc[i] = (acc[i] as number) + (g[i] as number);
}

function scaleInto(g: Float32Array, s: number): void {
  for (let i = 0; i < g.length; i++) g[i] = (g[i] as number) * s;
}
