/**
 * The local engine's two passes over a batch of engine data: log-probs of the targets (no
 * gradient), and log-probs plus the gradient of the reduced loss with respect to the model's
 * trainable variables (its adapters).
 *
 * How per-token losses become one objective (`LossReduction`, see src/engines/engine.ts):
 * - `sum`: Σ_d Σ_t loss[d][t];
 * - `sequence-mean`: Σ_d Σ_t loss[d][t] / max(Σ_t w[d][t], 1e-9) (the division by the number of
 *   data happens at the optimizer step, over everything accumulated since the last one).
 */
import { tf } from '../../backend/tf.js';
import type { TransformerModel } from '../../models/transformer/model.js';
import type { EngineDatum, LossReduction } from '../engine.js';
import { datumBatch, lossConstants } from './batch.js';
import { elementwiseLossTensor, type ResolvedLoss } from './losses.js';

/** Smallest weight sum a sequence is divided by under `sequence-mean` (SkyRL's guard). */
export const MIN_WEIGHT_SUM = 1e-9;

/**
 * Padded tokens one forward (and backward) pass holds at most. A request with more data runs in
 * consecutive micro-batches whose log-probs are joined and whose gradients are added: every
 * per-token loss enters the objective with its own datum's factor, so the split changes only the
 * float summation order. (One padded batch of 64 sequences of 1,000 tokens overran the wasm heap.)
 */
export const MICRO_BATCH_TOKENS = 8192;

/**
 * `data` cut into consecutive micro-batches of at most `budget` padded tokens (a longer datum alone).
 * @example microBatches(data, 8192).length
 */
export function microBatches(data: readonly EngineDatum[], budget = MICRO_BATCH_TOKENS): EngineDatum[][] {
  const chunks: EngineDatum[][] = [];
  let current: EngineDatum[] = [];
  let longest = 0;
  for (const d of data) {
    const n = d.inputTokens.length;
    if (current.length > 0 && (current.length + 1) * Math.max(longest, n) > budget) {
      chunks.push(current);
      current = [];
      longest = 0;
    }
    current.push(d);
    longest = Math.max(longest, n);
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

/**
 * [data][n] log-prob of each target under `model` (adapters as they are; wrap in
 * `model.withAdaptersOff` for the base).
 * @example const [lp] = targetLogprobs(model, [datum]);
 */
export function targetLogprobs(model: TransformerModel, data: readonly EngineDatum[], budget = MICRO_BATCH_TOKENS): Float32Array[] {
  return microBatches(data, budget).flatMap((chunk) => chunkLogprobs(model, chunk));
}

function chunkLogprobs(model: TransformerModel, data: readonly EngineDatum[]): Float32Array[] {
  const { batch, offsets } = datumBatch(data);
  const flat = tf.tidy(() => Float32Array.from(model.forwardTrain(batch, 1).logprobs.dataSync() as Float32Array));
  return split(flat, offsets);
}

/** Log-probs before the update and the gradient of the reduced loss, in `model.trainableVariables()` order. */
export interface LossGradients {
  readonly logprobs: Float32Array[];
  readonly grads: Float32Array[];
}

/**
 * One backward pass (module comment for the reduction).
 * @example const { logprobs, grads } = lossGradients(model, data, resolved, 'sequence-mean');
 */
export function lossGradients(model: TransformerModel, data: readonly EngineDatum[], loss: ResolvedLoss, reduction: LossReduction, budget = MICRO_BATCH_TOKENS): LossGradients {
  const parts = microBatches(data, budget).map((chunk) => chunkGradients(model, chunk, loss, reduction));
  const [first, ...rest] = parts;
  if (first === undefined) throw new Error('lossGradients: no data');
  for (const part of rest) {
    part.grads.forEach((g, i) => {
      const sum = first.grads[i] as Float32Array;
      for (let k = 0; k < g.length; k++) sum[k] = (sum[k] as number) + (g[k] as number);
    });
  }
  return { logprobs: parts.flatMap((p) => p.logprobs), grads: first.grads };
}

function chunkGradients(model: TransformerModel, data: readonly EngineDatum[], loss: ResolvedLoss, reduction: LossReduction): LossGradients {
  const { batch, offsets } = datumBatch(data);
  const constants = lossConstants(data);
  const scale = tokenScale(data, offsets, reduction);
  const vars = model.trainableVariables();
  let flat = new Float32Array(0);
  const grads = tf.tidy(() => {
    const { grads: named } = tf.variableGrads(() => {
      const lp = model.forwardTrain(batch, 1).logprobs;
      flat = Float32Array.from(lp.dataSync() as Float32Array);
      const perToken = elementwiseLossTensor(loss, lp, constants);
      return tf.sum(tf.mul(perToken, tf.tensor1d(scale))) as tf.Scalar;
    }, vars);
    return vars.map((v) => {
      const g = named[v.name];
      return g === undefined ? new Float32Array(v.size) : Float32Array.from(g.dataSync() as Float32Array);
    });
  });
  return { logprobs: split(flat, offsets), grads };
}

/** [N] the factor each token's loss enters the objective with. */
function tokenScale(data: readonly EngineDatum[], offsets: Int32Array, reduction: LossReduction): Float32Array {
  const scale = new Float32Array(offsets[data.length] as number).fill(1);
  if (reduction === 'sum') return scale;
  data.forEach((d, i) => {
    let sum = 0;
    for (const w of d.weights) sum += w;
    scale.fill(1 / Math.max(sum, MIN_WEIGHT_SUM), offsets[i] as number, offsets[i + 1] as number);
  });
  return scale;
}

function split(flat: Float32Array, offsets: Int32Array): Float32Array[] {
  return Array.from({ length: offsets.length - 1 }, (_, i) => flat.slice(offsets[i] as number, offsets[i + 1] as number));
}
