/**
 * The training forward's inputs: validation of a {@link TrainBatch} against the model config and
 * the two host-side arrays the forward derives from it (the dense-targets shortcut and the
 * allowed-set constraint mask). Split from transformer.ts so that file holds the model alone.
 */
import { InvalidArgumentError } from '../../core/errors.js';
import type { TrainBatch } from '../train-batch.js';
import type { TransformerConfig } from './config.js';
import { MASK_VALUE } from './layers.js';

/**
 * Checks a {@link TrainBatch} against the model config; throws {@link InvalidArgumentError} naming the field.
 * @example validateTrainBatch(packBatch(seqs), model.config) // throws on e.g. `batch.targetPositions` out of range
 */
export function validateTrainBatch(batch: TrainBatch, config: TransformerConfig): void {
  const { batchSize: b, seqLen: t } = batch;
  if (!Number.isInteger(b) || b < 1) throw InvalidArgumentError.format('batch.batchSize', `expected a positive integer, got ${b}`);
  if (!Number.isInteger(t) || t < 1 || t > config.maxContext) {
    throw InvalidArgumentError.format('batch.seqLen', `expected 1..${config.maxContext}, got ${t}`);
  }
  if (batch.inputIds.length !== b * t) throw InvalidArgumentError.format('batch.inputIds', `expected ${b * t} ids, got ${batch.inputIds.length}`);
  if (batch.attentionMask.length !== b * t) {
    throw InvalidArgumentError.format('batch.attentionMask', `expected ${b * t} entries, got ${batch.attentionMask.length}`);
  }
  const v = config.vocabSize;
  for (const id of batch.inputIds) if (id < 0 || id >= v) throw InvalidArgumentError.format('batch.inputIds', `id ${id} outside [0, ${v})`);
  const n = batch.targetIds.length;
  if (batch.targetPositions.length !== n) {
    throw InvalidArgumentError.format('batch.targetPositions', `expected ${n} entries (one per target), got ${batch.targetPositions.length}`);
  }
  for (const p of batch.targetPositions) if (p < 0 || p >= b * t) throw InvalidArgumentError.format('batch.targetPositions', `${p} outside [0, ${b * t})`);
  for (const id of batch.targetIds) if (id < 0 || id >= v) throw InvalidArgumentError.format('batch.targetIds', `id ${id} outside [0, ${v})`);
  const { allowedOffsets: off, allowedIds: ids } = batch;
  if ((off === null) !== (ids === null)) throw InvalidArgumentError.format('batch.allowedOffsets', 'allowedOffsets and allowedIds must both be set or both null');
  if (off !== null && ids !== null) {
    if (off.length !== n + 1) throw InvalidArgumentError.format('batch.allowedOffsets', `expected ${n + 1} offsets, got ${off.length}`);
    if (off[0] !== 0 || off[n] !== ids.length) throw InvalidArgumentError.format('batch.allowedOffsets', `must run from 0 to ${ids.length}`);
    for (let i = 0; i < n; i++) if (off[i + 1] < off[i]) throw InvalidArgumentError.format('batch.allowedOffsets', `decreasing at ${i}`);
    for (const id of ids) if (id < 0 || id >= v) throw InvalidArgumentError.format('batch.allowedIds', `id ${id} outside [0, ${v})`);
  }
}

/**
 * True when the targets are exactly positions 0..B·T-1 in order: the forward then skips the gather (issue #10).
 * @example everyPosition({ ...batch, batchSize: 1, seqLen: 3, targetPositions: Int32Array.from([0, 1, 2]) }) // true
 */
export function everyPosition(batch: TrainBatch): boolean {
  const p = batch.targetPositions;
  if (p.length !== batch.batchSize * batch.seqLen) return false;
  for (let i = 0; i < p.length; i++) if (p[i] !== i) return false;
  return true;
}

/**
 * [N, V] additive constraint mask from the batch's allowed-ids CSR: 0 on allowed ids, {@link MASK_VALUE}
 * elsewhere, a free row for an empty range; null when no target is constrained.
 * @example constraintMask(batch, 40) // [N * 40] or null
 */
export function constraintMask(batch: TrainBatch, v: number): Float32Array | null {
  const { allowedOffsets: off, allowedIds: ids } = batch;
  if (off === null || ids === null || ids.length === 0) return null;
  const n = batch.targetIds.length;
  const out = new Float32Array(n * v);
  for (let i = 0; i < n; i++) {
    if (off[i + 1] === off[i]) continue; // empty range: unconstrained
    out.fill(MASK_VALUE, i * v, (i + 1) * v);
    for (let j = off[i]; j < off[i + 1]; j++) out[i * v + ids[j]] = 0;
  }
  return out;
}
