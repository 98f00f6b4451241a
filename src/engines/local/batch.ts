/**
 * Engine data as one padded training batch: every datum a row (right-padded with id 0), every
 * position of a row a target, so the forward's log-probs come back in datum order, `n` per datum.
 */
import { InvalidArgumentError } from '../../core/errors.js';
import type { TrainBatch } from '../../models/train-batch.js';
import type { EngineDatum } from '../engine.js';
import type { LossConstants } from './losses.js';

/** A batch and where each datum's targets sit in its flat target list. */
export interface DatumBatch {
  readonly batch: TrainBatch;
  /** [data + 1] offsets of each datum's targets in the flat list (datum d: offsets[d] .. offsets[d + 1]). */
  readonly offsets: Int32Array;
}

/**
 * Checks that each datum's arrays agree in length and fit the model, naming the field at fault.
 * @example checkData(data, 512, 2048)
 */
export function checkData(data: readonly EngineDatum[], vocabSize: number, maxContext: number): void {
  if (data.length === 0) throw InvalidArgumentError.format('data', 'no data');
  data.forEach((d, i) => {
    const n = d.inputTokens.length;
    const field = `data[${i}]`;
    if (n === 0) throw InvalidArgumentError.format(`${field}.model_input`, 'no tokens');
    if (n > maxContext) throw InvalidArgumentError.format(`${field}.model_input`, `sequence length ${n} exceeds the model's context of ${maxContext}`);
    const arrays: Array<[string, ArrayLike<number> | undefined]> = [
      ['target_tokens', d.targetTokens],
      ['weights', d.weights],
      ['logprobs', d.samplingLogprobs],
      ['advantages', d.advantages],
    ];
    for (const [name, values] of arrays) {
      if (values !== undefined && values.length !== n) throw InvalidArgumentError.format(`${field}.loss_fn_inputs.${name}`, `has ${values.length} values; the model input has ${n} tokens`);
    }
    for (const [name, ids] of [['model_input', d.inputTokens] as const, ['loss_fn_inputs.target_tokens', d.targetTokens] as const]) {
      for (const id of ids) if (!(id >= 0 && id < vocabSize)) throw InvalidArgumentError.format(`${field}.${name}`, `token id ${id} outside the vocabulary [0, ${vocabSize})`);
    }
    for (const w of d.weights) if (!Number.isFinite(w)) throw InvalidArgumentError.format(`${field}.loss_fn_inputs.weights`, `non-finite weight ${w}`);
  });
}

/**
 * The padded batch of `data` (checked with {@link checkData} first).
 * @example const { batch, offsets } = datumBatch(data);
 */
export function datumBatch(data: readonly EngineDatum[]): DatumBatch {
  const b = data.length;
  const t = Math.max(...data.map((d) => d.inputTokens.length));
  const inputIds = new Int32Array(b * t);
  const attentionMask = new Uint8Array(b * t);
  const offsets = new Int32Array(b + 1);
  data.forEach((d, i) => {
    offsets[i + 1] = (offsets[i] as number) + d.inputTokens.length;
  });
  const total = offsets[b] as number;
  const targetPositions = new Int32Array(total);
  const targetIds = new Int32Array(total);
  data.forEach((d, i) => {
    const n = d.inputTokens.length;
    inputIds.set(d.inputTokens, i * t);
    attentionMask.fill(1, i * t, i * t + n);
    const at = offsets[i] as number;
    for (let k = 0; k < n; k++) targetPositions[at + k] = i * t + k;
    targetIds.set(d.targetTokens, at);
  });
  return { batch: { batchSize: b, seqLen: t, inputIds, attentionMask, targetPositions, targetIds, allowedOffsets: null, allowedIds: null }, offsets };
}

/**
 * The flat loss constants of `data` (sampling log-probs and advantages only when every datum has them).
 * @example lossConstants(data).weights.length // total tokens
 */
export function lossConstants(data: readonly EngineDatum[]): LossConstants {
  const join = (pick: (d: EngineDatum) => Float32Array | undefined): Float32Array | null => {
    const parts = data.map(pick);
    if (parts.some((p) => p === undefined)) return null;
    const out = new Float32Array(parts.reduce((n, p) => n + (p as Float32Array).length, 0));
    let at = 0;
    for (const p of parts as Float32Array[]) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  };
  return { weights: join((d) => d.weights) as Float32Array, samplingLogprobs: join((d) => d.samplingLogprobs), advantages: join((d) => d.advantages) };
}
