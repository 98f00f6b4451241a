/**
 * What a run's models are before the trainer and policy wrap them, shared by the two ways of
 * opening them (turnwise's own model in `policy-stack.ts`, a pretrained one in
 * `pretrained-stack.ts`), so neither imports the other for it.
 */
import type { LoraSpec } from '../models/lora/lora.js';
import type { PolicyText } from '../models/policy-text.js';
import type { TrainableModel } from '../learner/train-contract.js';
import type { TransformerConfig, TransformerModel } from '../models/transformer/model.js';

/** The models of a run before the trainer and policy wrap them. */
export interface RunModels {
  readonly text: PolicyText;
  readonly shape: TransformerConfig;
  readonly learner: TransformerModel;
  readonly sampler: TransformerModel;
  /** The KL reference (klCoef > 0), or null. */
  readonly reference: TrainableModel | null;
  /** Models to free with the stack (the reference when it is a model of its own). */
  readonly owned: readonly TransformerModel[];
  readonly notes: readonly string[];
  /** How a pretrained model's sampler is served (absent: turnwise's own model, `runtime.inferenceWorkers`). */
  readonly serving?: PretrainedServing;
}

/** Where a pretrained model samples: its inference workers, the base they read, the ids they may emit. */
export interface PretrainedServing {
  /** Inference workers; 0 samples on the learner's thread. */
  readonly workers: number;
  /** A LoRA run's base, which each worker reads from the folder (the weights it receives are the adapters). */
  readonly base?: { readonly folder: string; readonly lora: LoraSpec };
  /** Ids the model may emit, when fewer than its embedding rows. */
  readonly outputs?: number;
  /** Most new tokens one prefill call feeds. */
  readonly maxPrefillTokens: number;
}
