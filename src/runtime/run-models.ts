/**
 * What a run's models are before the trainer and policy wrap them, shared by the two ways of
 * opening them (turnwise's own model in `policy-stack.ts`, a pretrained one in
 * `pretrained-stack.ts`), so neither imports the other for it.
 */
import type { PolicyText } from '../models/policy-text.js';
import type { TrainableModel } from '../models/train-contract.js';
import type { TransformerConfig, TransformerModel } from '../models/transformer.js';

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
}
