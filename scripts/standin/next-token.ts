/**
 * Next-token training (supervised fine-tuning) of a transformer on token sequences with chosen
 * loss positions: the mean negative log-likelihood of the target tokens, through the same
 * `forwardTrain` (targets gathered before the LM head), global-norm clipping and AdamW the RL
 * trainer uses. Sequences are sorted by length and cut into micro-batches of about
 * `batchTokens` padded tokens (little padding); the order of the batches is shuffled each epoch.
 * Deterministic in `rng`.
 */
import { globalNormScale } from '../../src/algorithms/grad-clip.js';
import type { Rng } from '../../src/core/rng.js';
import { InvalidArgumentError } from '../../src/core/errors.js';
import { tf } from '../../src/backend/tf.js';
import { AdamW } from '../../src/learner/optimizer.js';
import { PAD_ID } from '../../src/learner/pack.js';
import type { TrainBatch } from '../../src/models/train-batch.js';
import type { TrainableModel } from '../../src/learner/train-contract.js';
import type { TranscriptSequence } from './transcripts.js';

/** Options of {@link trainNextToken}. */
export interface NextTokenOptions {
  readonly epochs: number;
  /** Padded tokens per batch (one optimizer step each). */
  readonly batchTokens: number;
  /** Peak learning rate (linear warm-up over the first 5% of steps, then cosine to 10%). */
  readonly lr: number;
  readonly maxGradNorm?: number;
  /** Called after every step with the step, the step count and the batch loss (nats per target token). */
  readonly onStep?: (step: number, steps: number, loss: number) => void;
}

/**
 * A padded batch of sequences (right padding) with their loss positions.
 * @example const batch = nextTokenBatch([{ ids: Int32Array.of(1, 5, 6), targets: Int32Array.of(1) }]);
 */
export function nextTokenBatch(seqs: readonly TranscriptSequence[]): TrainBatch {
  const seqLen = Math.max(...seqs.map((s) => s.ids.length));
  const inputIds = new Int32Array(seqs.length * seqLen).fill(PAD_ID);
  const attentionMask = new Uint8Array(seqs.length * seqLen);
  const positions: number[] = [];
  const targetIds: number[] = [];
  seqs.forEach((s, row) => {
    inputIds.set(s.ids, row * seqLen);
    attentionMask.fill(1, row * seqLen, row * seqLen + s.ids.length);
    for (const p of s.targets) {
      if (!(p >= 0 && p + 1 < s.ids.length)) throw InvalidArgumentError.format('targets', `position ${p} is outside a sequence of ${s.ids.length} tokens`);
      positions.push(row * seqLen + p);
      targetIds.push(s.ids[p + 1] as number);
    }
  });
  return { batchSize: seqs.length, seqLen, inputIds, attentionMask, targetPositions: Int32Array.from(positions), targetIds: Int32Array.from(targetIds), allowedOffsets: null, allowedIds: null };
}

/** Sequences sorted by length, cut into groups of at most `batchTokens` padded tokens. */
function lengthBatches(seqs: readonly TranscriptSequence[], batchTokens: number): TranscriptSequence[][] {
  const sorted = [...seqs].sort((a, b) => a.ids.length - b.ids.length);
  const out: TranscriptSequence[][] = [];
  let current: TranscriptSequence[] = [];
  for (const s of sorted) {
    if (current.length > 0 && (current.length + 1) * s.ids.length > batchTokens) {
      out.push(current);
      current = [];
    }
    current.push(s);
  }
  if (current.length > 0) out.push(current);
  return out;
}

/**
 * Trains `model` by next-token prediction on the sequences' targets; returns the mean loss of each
 * epoch (nats per target token).
 * @example const losses = trainNextToken(model, sequences, { epochs: 3, batchTokens: 8192, lr: 3e-3 }, Rng.fromSeed(1));
 */
export function trainNextToken(model: TrainableModel, seqs: readonly TranscriptSequence[], options: NextTokenOptions, rng: Rng): number[] {
  if (seqs.length === 0) throw InvalidArgumentError.format('sequences', 'nothing to train on');
  const batches = lengthBatches(seqs, options.batchTokens).map(nextTokenBatch);
  const steps = batches.length * options.epochs;
  const warmup = Math.max(1, Math.round(steps * 0.05));
  const lrAt = (s: number) => (s < warmup ? (options.lr * (s + 1)) / warmup : options.lr * (0.1 + 0.45 * (1 + Math.cos((Math.PI * (s - warmup)) / Math.max(1, steps - warmup)))));
  const optimizer = new AdamW({ lr: options.lr, prefix: 'sft' });
  const variables = model.trainableVariables();
  const losses: number[] = [];
  let step = 0;
  try {
    for (let epoch = 0; epoch < options.epochs; epoch++) {
      let sum = 0;
      let count = 0;
      for (const batch of rng.shuffle([...batches])) {
        optimizer.setLearningRate(lrAt(step));
        const { value, grads } = tf.variableGrads(() => {
          const { logprobs, entropy } = model.forwardTrain(batch, 1);
          entropy.dispose();
          return tf.neg(tf.mean(logprobs)) as tf.Scalar;
        }, variables);
        const ordered = variables.map((v) => grads[v.name] as tf.Tensor);
        const { norm, scale } = globalNormScale(ordered, options.maxGradNorm ?? 1);
        if (Number.isFinite(norm)) optimizer.apply(variables, ordered, scale);
        const loss = value.dataSync()[0] as number;
        tf.dispose([value, ...ordered]);
        sum += loss * batch.targetIds.length;
        count += batch.targetIds.length;
        options.onStep?.(step, steps, loss);
        step++;
      }
      losses.push(sum / count);
    }
  } finally {
    optimizer.dispose();
  }
  return losses;
}
