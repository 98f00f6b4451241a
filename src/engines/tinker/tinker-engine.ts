/**
 * The remote model engine: one LoRA model on a Tinker server, driven through {@link TinkerClient}.
 *
 * Base-model log-probs (`baseLogprobs`) come from sampling the base model by name with
 * `prompt_logprobs` and `max_tokens: 1`, as the official SDK's `compute_logprobs` does: the API
 * has no switch to turn a training model's adapter off, and a `forward` on a second, untrained
 * model would take one of the server's adapter slots (SkyRL has `max_lora_adapters` of them) and
 * rely on `lora_B = 0` at creation, a convention rather than a contract. Sampling needs the targets
 * to be the inputs shifted by one (the usual case); other data is refused by name.
 */
import { InvalidArgumentError, InvalidConfigError } from '../../core/errors.js';
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
import { extractAdapterArchive } from './archive.js';
import { type LoraSettings, type TinkerClient, TinkerModel, type WireForwardInput } from './client.js';
import { fromForwardResult, fromSampleResult, toWireDatum, WireShapeError } from './datum.js';
import { TinkerProtocolError, TinkerRequestError } from './errors.js';
import { TINKER_SERVER_PROFILES, type TinkerServerKind, type TinkerServerProfile } from './profiles.js';
import type { ForwardBackwardOutput } from './wire.js';

/** How to bind the engine to a model. */
export interface TinkerEngineOptions {
  /** The model name the server knows (hosted: `Qwen/Qwen3-8B`; SkyRL: its `--base-model` string). */
  readonly baseModel: string;
  readonly lora: LoraSettings;
  /** Which server's behaviour to assume (default `tinker`); `losses`, `reduction`, `gradClip` override it. */
  readonly server?: TinkerServerKind;
  readonly losses?: readonly EngineLossName[];
  readonly reduction?: TinkerServerProfile['reduction'];
  readonly gradClip?: boolean;
  /** Largest LoRA rank, when the user knows it (SkyRL's `max_lora_rank`); the server's own word wins. */
  readonly maxLoraRank?: number;
  /** Resume: a `saveState` path to load (weights and optimizer) into the new model. */
  readonly resumeFrom?: string;
}

/** A `tinker://<model id>/…` path split into the model and the checkpoint names the archive route may take. */
function checkpointOf(path: string): { modelId: string; ids: string[] } {
  const match = /^tinker:\/\/([^/]+)\/(.+)$/.exec(path);
  if (!match?.[1] || !match[2]) throw new InvalidArgumentError('weights.path', `expected tinker://<model id>/<checkpoint>, got ${JSON.stringify(path)}`);
  const rest = match[2];
  const last = rest.split('/').at(-1) as string;
  // Hosted Tinker names the checkpoint `sampler_weights/<name>`; SkyRL's route takes `<name>` alone.
  return { modelId: match[1], ids: rest === last ? [last] : [rest, last] };
}

/**
 * @example
 * const engine = await TinkerEngine.open(client, { baseModel: 'Qwen/Qwen3-8B', lora: { rank: 32, seed: 0 }, server: 'tinker' });
 * await engine.forwardBackward(data, 'importance_sampling');
 */
export class TinkerEngine implements ModelEngine {
  readonly capabilities: EngineCapabilities;
  private readonly gradClip: boolean;

  private constructor(
    private readonly client: TinkerClient,
    private model: TinkerModel,
    private readonly options: TinkerEngineOptions,
    maxLoraRank: number | undefined,
  ) {
    const profile = TINKER_SERVER_PROFILES[options.server ?? 'tinker'];
    this.capabilities = { losses: options.losses ?? profile.losses, reduction: options.reduction ?? profile.reduction, ...(maxLoraRank !== undefined ? { maxLoraRank } : {}) };
    this.gradClip = options.gradClip ?? profile.gradClip;
  }

  /**
   * Opens a session, checks the base model and rank against what the server offers, creates the
   * model and, when resuming, loads the saved state with its optimizer.
   */
  static async open(client: TinkerClient, options: TinkerEngineOptions, signal?: AbortSignal): Promise<TinkerEngine> {
    await client.createSession(undefined, signal);
    let maxLoraRank = options.maxLoraRank;
    const offered = (await client.getServerCapabilities(signal)).supported_models;
    const names = offered.map((m) => m.model_name).filter((n): n is string => typeof n === 'string');
    if (names.length > 0 && !names.includes(options.baseModel)) {
      throw new InvalidConfigError('model.tinker.baseModel', `${client.server} does not offer ${JSON.stringify(options.baseModel)}; it offers ${names.map((n) => JSON.stringify(n)).join(', ')}`);
    }
    const told = offered.find((m) => m.model_name === options.baseModel)?.max_lora_rank;
    if (typeof told === 'number') maxLoraRank = told;
    if (maxLoraRank !== undefined && options.lora.rank > maxLoraRank) {
      throw new InvalidConfigError('model.lora.rank', `${client.server} takes LoRA ranks up to ${maxLoraRank}, got ${options.lora.rank}`);
    }
    const model = await client.createModel(options.baseModel, options.lora, signal);
    const engine = new TinkerEngine(client, model, options, maxLoraRank);
    if (options.resumeFrom !== undefined) await client.loadWeights(model, options.resumeFrom, true, signal);
    return engine;
  }

  get description(): string {
    return `tinker ${this.client.server} ${this.options.baseModel} LoRA r${this.options.lora.rank} (model ${this.model.id}, ${this.capabilities.reduction} reduction)`;
  }

  /** The server's id of the bound model. */
  get modelId(): string {
    return this.model.id;
  }

  async forward(data: readonly EngineDatum[], loss: EngineLossName, config?: EngineLossConfig, signal?: AbortSignal): Promise<ForwardOutput> {
    const input = this.wireInput(data, loss, config);
    return this.read('forward', data, await this.client.forward(this.model, input, signal));
  }

  async forwardBackward(data: readonly EngineDatum[], loss: EngineLossName, config?: EngineLossConfig, signal?: AbortSignal): Promise<ForwardOutput> {
    const input = this.wireInput(data, loss, config);
    return this.read('forward_backward', data, await this.client.forwardBackward(this.model, input, signal));
  }

  async optimStep(adam: AdamParams, signal?: AbortSignal): Promise<OptimStepOutput> {
    if (adam.gradClipNorm > 0 && !this.gradClip) {
      throw new InvalidArgumentError('gradClipNorm', `${this.client.server} (${this.options.server ?? 'tinker'} profile) does not clip gradients; set it to 0 or use a server that does`);
    }
    const metrics = await this.client.optimStep(
      this.model,
      {
        learning_rate: adam.learningRate,
        beta1: adam.beta1,
        beta2: adam.beta2,
        eps: adam.eps,
        weight_decay: adam.weightDecay,
        ...(this.gradClip ? { grad_clip_norm: adam.gradClipNorm } : {}),
      },
      signal,
    );
    return { metrics };
  }

  async saveWeightsForSampler(name: string, signal?: AbortSignal): Promise<SamplerWeights> {
    return { path: await this.client.saveWeightsForSampler(this.model, name, signal) };
  }

  async sample(weights: SamplerWeights | 'base', requests: readonly EngineSampleRequest[], signal?: AbortSignal): Promise<EngineSampleResult[]> {
    const source = weights === 'base' ? { base_model: this.options.baseModel } : { model_path: weights.path };
    return Promise.all(
      requests.map(async (request, i) => {
        if (request.promptTokens.length === 0) throw new InvalidArgumentError(`requests[${i}].promptTokens`, 'expected at least one token');
        const result = await this.client.sample(
          {
            source,
            promptTokens: Array.from(request.promptTokens),
            numSamples: request.numSamples,
            samplingParams: {
              max_tokens: request.maxTokens,
              temperature: request.temperature,
              top_p: request.topP,
              top_k: request.topK,
              ...(request.seed !== undefined ? { seed: request.seed } : {}),
              ...(request.stopTokenIds.length > 0 ? { stop: [...request.stopTokenIds] } : {}),
            },
            promptLogprobs: request.promptLogprobs === true,
          },
          signal,
        );
        return this.guard('asample', () => fromSampleResult(result, request.promptTokens.length, request.promptLogprobs === true));
      }),
    );
  }

  async baseLogprobs(data: readonly EngineDatum[], signal?: AbortSignal): Promise<readonly Float32Array[]> {
    const prompts = data.map((d, i) => {
      const n = d.inputTokens.length;
      if (n === 0 || d.targetTokens.length !== n) throw new InvalidArgumentError(`data[${i}].targetTokens`, `expected ${n} targets (the input's length), got ${d.targetTokens.length}`);
      for (let t = 0; t + 1 < n; t++) {
        if (d.targetTokens[t] !== d.inputTokens[t + 1]) {
          throw new InvalidArgumentError(`data[${i}].targetTokens`, `base log-probs are read from the prompt log-probs of the sequence, so targets must be the inputs shifted by one (differs at ${t})`);
        }
      }
      const sequence = new Int32Array(n + 1);
      sequence.set(d.inputTokens);
      sequence[n] = d.targetTokens[n - 1] as number;
      return sequence;
    });
    const results = await this.sample(
      'base',
      prompts.map((promptTokens) => ({ promptTokens, numSamples: 1, maxTokens: 1, temperature: 0, topP: 1, topK: -1, stopTokenIds: [], promptLogprobs: true })),
      signal,
    );
    // Prompt log-prob j is log p(sequence[j] | sequence[<j]) = the log-prob of target j − 1.
    return results.map((r) => (r.promptLogprobs as Float32Array).slice(1));
  }

  async saveState(name: string, signal?: AbortSignal): Promise<string> {
    return this.client.saveWeights(this.model, name, signal);
  }

  /**
   * SkyRL and hosted Tinker load weights only as a model's first call: a model that has already
   * worked is replaced by a new one loaded from `path`, and the old one unloaded.
   */
  async loadState(path: string, options: { readonly optimizer: boolean }, signal?: AbortSignal): Promise<void> {
    if (this.model.nextSeqId === 1) {
      await this.client.loadWeights(this.model, path, options.optimizer, signal);
      return;
    }
    const fresh = await this.client.createModel(this.options.baseModel, this.options.lora, signal);
    await this.client.loadWeights(fresh, path, options.optimizer, signal);
    const old = this.model;
    this.model = fresh;
    await this.client.unloadModel(old, signal).catch(() => {
      // The old model's slot is freed when the session ends anyway.
    });
  }

  async downloadAdapter(weights: SamplerWeights, folder: string, signal?: AbortSignal): Promise<void> {
    const { modelId, ids } = checkpointOf(weights.path);
    let archive: Uint8Array | undefined;
    for (const [k, id] of ids.entries()) {
      try {
        archive = await this.client.downloadCheckpointArchive(modelId, id, signal);
        break;
      } catch (error) {
        if (!(error instanceof TinkerRequestError && error.status === 404 && k + 1 < ids.length)) throw error;
      }
    }
    await extractAdapterArchive(archive as Uint8Array, folder, weights.path);
  }

  async close(): Promise<void> {
    try {
      await this.client.unloadModel(this.model);
    } catch (error) {
      // A model the server no longer has (it restarted, or unloaded a silent session) is unloaded already.
      if (!(error instanceof TinkerRequestError && (error.status === 404 || error.status === 410))) throw error;
    } finally {
      await this.client.close();
    }
  }

  private wireInput(data: readonly EngineDatum[], loss: EngineLossName, config?: EngineLossConfig): WireForwardInput {
    if (!this.capabilities.losses.includes(loss)) throw new InvalidArgumentError('loss', `${this.client.server} does not offer '${loss}'; it offers ${this.capabilities.losses.join(', ')}`);
    if (data.length === 0) throw new InvalidArgumentError('data', 'expected at least one datum');
    return {
      loss_fn: loss,
      // SkyRL refuses any config key for a loss that takes none, so an empty config is left out.
      ...(config && Object.keys(config).length > 0 ? { loss_fn_config: { ...config } } : {}),
      data: data.map((d, i) => toWireDatum(d, loss, i)),
    };
  }

  private read(call: string, data: readonly EngineDatum[], result: ForwardBackwardOutput): ForwardOutput {
    return this.guard(call, () => fromForwardResult(result, data));
  }

  private guard<T>(call: string, read: () => T): T {
    try {
      return read();
    } catch (error) {
      if (error instanceof WireShapeError) throw new TinkerProtocolError({ call, server: this.client.server }, error.field, error.detail);
      throw error;
    }
  }
}

export { TinkerModel };
