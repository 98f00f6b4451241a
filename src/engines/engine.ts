/**
 * The model-engine boundary: where a run's model work (sampling, log-probs, gradients, optimizer
 * steps) happens, behind the primitives of the Tinker training API. Everything about episodes,
 * rewards, advantages and horizons stays in turnwise; an engine only sees token-level data.
 *
 * Two kinds of implementation:
 * - a remote engine: any server speaking the Tinker API (hosted Tinker, SkyRL tx on a user's GPUs,
 *   or `turnwise tinker serve`), through the client in `./tinker/`;
 * - an in-process engine: turnwise's own tfjs model with LoRA adapters, which is also what
 *   `turnwise tinker serve` puts behind the HTTP API.
 *
 * One engine instance is bound to one trained model (a LoRA adapter on a base model). Token ids
 * go in and come out as typed arrays; text never crosses this boundary.
 */

/** The per-token losses an engine may offer (Tinker's `loss_fn` names). */
export type EngineLossName = 'cross_entropy' | 'importance_sampling' | 'ppo' | 'cispo' | 'dro';

/** Every loss name of the Tinker API, for validation and error messages. */
export const ENGINE_LOSS_NAMES = ['cross_entropy', 'importance_sampling', 'ppo', 'cispo', 'dro'] as const satisfies readonly EngineLossName[];

/**
 * How an engine reduces per-token losses into the gradient of one optimizer step. Servers differ:
 * - `sum`: the gradient of `Σ_d Σ_t loss[d][t]` over every datum since the last optimizer step
 *   (Tinker's documented rule);
 * - `sequence-mean`: SkyRL tx's rule: each datum's `Σ_t loss[t] / max(Σ_t weights[t], 1e-9)`,
 *   summed, and the accumulated gradient divided by the number of data at the optimizer step.
 */
export type LossReduction = 'sum' | 'sequence-mean';

/** The reduction rules, for validation and error messages. */
export const LOSS_REDUCTIONS = ['sum', 'sequence-mean'] as const satisfies readonly LossReduction[];

/**
 * One training sequence (Tinker's `Datum`): `inputTokens[t]` predicts `targetTokens[t]`.
 * All arrays have the same length n.
 */
export interface EngineDatum {
  /** [n] model input ids. */
  readonly inputTokens: Int32Array;
  /** [n] target ids (usually the input shifted left by one). */
  readonly targetTokens: Int32Array;
  /** [n] per-token weights; 0 excludes a token (prompt, observations, chat scaffolding). */
  readonly weights: Float32Array;
  /** [n] log-probs of the targets under the behaviour (sampling) policy; needed by the policy-gradient losses. */
  readonly samplingLogprobs?: Float32Array;
  /** [n] per-token advantages; needed by the policy-gradient losses. */
  readonly advantages?: Float32Array;
}

/** Scalar settings of a loss (Tinker's `loss_fn_config`), e.g. `{ clip_low_threshold: 0.8, clip_high_threshold: 1.2 }` for `ppo`. */
export type EngineLossConfig = Readonly<Record<string, number>>;

/** What a forward (or forward-backward) pass returns, one entry per datum. */
export interface ForwardOutput {
  /** [data][n] log-prob of each target under the weights before this call. */
  readonly logprobs: readonly Float32Array[];
  /** [data][n] the loss of each token (weights applied). */
  readonly elementwiseLoss: readonly Float32Array[];
  /** Scalars the engine reports (names are the engine's own; may be empty). */
  readonly metrics: Readonly<Record<string, number>>;
}

/** Adam(W) settings of one optimizer step; the engine applies exactly these. */
export interface AdamParams {
  readonly learningRate: number;
  readonly beta1: number;
  readonly beta2: number;
  readonly eps: number;
  /** Decoupled weight decay. */
  readonly weightDecay: number;
  /** Global gradient-norm clip; 0 = none. */
  readonly gradClipNorm: number;
}

/** What an optimizer step reports (names are the engine's own, e.g. SkyRL's `skyrl.ai/grad_norm`). */
export interface OptimStepOutput {
  readonly metrics: Readonly<Record<string, number>>;
}

/** Weights saved for sampling: what `sample` is pointed at. */
export interface SamplerWeights {
  /** The engine's name for them (a `tinker://…` path on a Tinker server). */
  readonly path: string;
}

/** One sampling request: a prompt as token ids and how to continue it. */
export interface EngineSampleRequest {
  /** [promptLen] prompt ids (the chat context builder's, never re-tokenized). */
  readonly promptTokens: Int32Array;
  readonly numSamples: number;
  readonly maxTokens: number;
  /** 0 = greedy. */
  readonly temperature: number;
  /** Nucleus mass in (0, 1]; 1 = off. */
  readonly topP: number;
  /** Top-k cutoff; -1 = off. */
  readonly topK: number;
  /** Ids that end generation (included in the result when produced). */
  readonly stopTokenIds: readonly number[];
  /** Sample i uses seed + i; absent = the engine picks. */
  readonly seed?: number;
  /** Also return the log-prob of each prompt token given its prefix. */
  readonly promptLogprobs?: boolean;
}

/** One generated continuation. */
export interface EngineSequence {
  /** [k] generated ids, the stop id included when generation stopped on one. */
  readonly tokens: Int32Array;
  /** [k] log-prob of each generated id under the model's raw (untempered) distribution. */
  readonly logprobs: Float32Array;
  readonly stopReason: 'stop' | 'length';
}

/** The answer to one sampling request. */
export interface EngineSampleResult {
  readonly sequences: readonly EngineSequence[];
  /** [promptLen] log-prob of each prompt token given its prefix, NaN at position 0; null when not asked. */
  readonly promptLogprobs: Float32Array | null;
}

/** What an engine can do, for refusing a config at parse time instead of mid-run. */
export interface EngineCapabilities {
  readonly losses: readonly EngineLossName[];
  readonly reduction: LossReduction;
  /** Largest LoRA rank the engine accepts, when it says. */
  readonly maxLoraRank?: number;
}

/**
 * A model engine bound to one trained model. Calls on one engine are applied in the order they
 * were made (a forward after an optimizer step sees the new weights).
 * @example
 * const out = await engine.forwardBackward(data, 'ppo', { clip_low_threshold: 0.8, clip_high_threshold: 1.2 });
 * await engine.optimStep({ learningRate: 1e-5, beta1: 0.9, beta2: 0.95, eps: 1e-12, weightDecay: 0, gradClipNorm: 0 });
 * const weights = await engine.saveWeightsForSampler('step-000001');
 * const [result] = await engine.sample(weights, [request]);
 */
export interface ModelEngine {
  /** One line for logs and the run header (never a secret). */
  readonly description: string;
  readonly capabilities: EngineCapabilities;
  /** Log-probs and per-token losses under the current weights; no gradient. */
  forward(data: readonly EngineDatum[], loss: EngineLossName, config?: EngineLossConfig, signal?: AbortSignal): Promise<ForwardOutput>;
  /** As {@link forward}, and accumulates the loss's gradient (reduced by `capabilities.reduction`) until the next {@link optimStep}. */
  forwardBackward(data: readonly EngineDatum[], loss: EngineLossName, config?: EngineLossConfig, signal?: AbortSignal): Promise<ForwardOutput>;
  /** Applies the accumulated gradient with Adam(W) and clears it. */
  optimStep(adam: AdamParams, signal?: AbortSignal): Promise<OptimStepOutput>;
  /** Saves the current weights for sampling under `name` (unique per model). */
  saveWeightsForSampler(name: string, signal?: AbortSignal): Promise<SamplerWeights>;
  /** Samples from saved weights, or from the base model (`'base'`, e.g. for a KL reference). */
  sample(weights: SamplerWeights | 'base', requests: readonly EngineSampleRequest[], signal?: AbortSignal): Promise<EngineSampleResult[]>;
  /** Log-probs of `data`'s targets under the base model (adapters off), e.g. for a KL penalty. */
  baseLogprobs(data: readonly EngineDatum[], signal?: AbortSignal): Promise<readonly Float32Array[]>;
  /** Saves the full training state (weights and optimizer) under `name`; returns the path to load it from. */
  saveState(name: string, signal?: AbortSignal): Promise<string>;
  /** Restores a state saved by {@link saveState} (with the optimizer's moments when `optimizer`). */
  loadState(path: string, options: { readonly optimizer: boolean }, signal?: AbortSignal): Promise<void>;
  /** Writes the sampler weights as PEFT files (`adapter_config.json`, `adapter_model.safetensors`) into `folder`. */
  downloadAdapter(weights: SamplerWeights, folder: string, signal?: AbortSignal): Promise<void>;
  /** Releases the model on the engine (a remote server may unload it) and any connections. */
  close(): Promise<void>;
}

/** What opening an engine for a run needs (the server settings stay with the factory). */
export interface EngineOpenRequest {
  /** The engine's name of the base model. */
  readonly baseModel: string;
  readonly loraRank: number;
  /** Seed of the adapter initialisation. */
  readonly seed: number;
  /** A training state saved by {@link ModelEngine.saveState} to continue from (weights and optimizer), or null for a fresh adapter. */
  readonly resumeFrom: string | null;
}

/**
 * Opens the engine of a run: the Tinker client for `model.engine: tinker`; tests and embedders pass
 * their own (e.g. an in-process engine).
 * @example const engine = await factory({ baseModel: 'Qwen/Qwen3-4B', loraRank: 32, seed: 1, resumeFrom: null });
 */
export type EngineFactory = (request: EngineOpenRequest) => Promise<ModelEngine>;
