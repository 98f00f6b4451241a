/**
 * The training loss head — LM head, then each target's log-prob and each row's entropy — in chunks
 * of rows (issue #31), so that the `[rows, vocab]` logits never exist whole. Why: at a 151,936-id
 * vocabulary (Qwen2.5) the head of a 1,024-target micro-batch holds three such maps (logits,
 * probabilities, their gradient): 1.9 GB of a 4 GiB wasm heap that also holds 2 GB of weights. Here
 * the forward keeps only the head's input; the backward recomputes each chunk's logits and turns
 * them into that chunk's input gradient (and the head weight's, when it trains) before the next.
 *
 * Same math as `targetLogProbsAndEntropy(project(normed) / T + mask)`: the forward's values are the
 * unchunked ones (row by row the same products), the gradients equal to float rounding (the weight
 * gradient is a sum over chunks instead of one product; tested).
 */
import { tf } from '../../backend/tf.js';
import { nativeLossHeadGradient } from '../../backend/native-log-softmax.js';
import { targetLogProbsAndEntropy } from './layers.js';

/** Bytes of `[rows, vocab]` float32 maps one chunk may hold (the training head's three: logits, probabilities, gradient; the serve scorer's five). */
export const HEAD_CHUNK_BYTES = 192 * 2 ** 20;

let budgetBytes = HEAD_CHUNK_BYTES;

/**
 * Sets the chunk budget (tests and benches compare chunked and whole heads on small models); default {@link HEAD_CHUNK_BYTES}.
 * @example setHeadChunkBytes(3 * 4 * vocab * 8); // chunks of 8 rows
 */
export function setHeadChunkBytes(bytes: number): void {
  if (!(Number.isFinite(bytes) && bytes > 0)) throw new RangeError(`head chunk bytes: expected > 0, got ${bytes}`);
  budgetBytes = bytes;
}

/**
 * Rows per chunk for a vocabulary: the most whose `maps` `[rows, vocab]` maps (the path's own count;
 * three for the training head) fit the budget ({@link HEAD_CHUNK_BYTES}).
 * @example headChunkRows(151936) // 110
 */
export function headChunkRows(vocab: number, budget = budgetBytes, maps = 3): number {
  return Math.max(1, Math.floor(budget / (maps * 4 * vocab)));
}

/** The LM head as the training forward applies it. */
export interface HeadSpec {
  /** Tied: the embedding `[vocab, d]` (logits = x · Wᵀ); untied: `lm_head` stored `[d, vocab]`. */
  readonly weight: tf.Tensor2D;
  readonly tied: boolean;
  /** Logits are divided by this (1: no division). */
  readonly temperature: number;
  /** `[vocab]` added to every row's logits (ids past the tokenizer's), or null. */
  readonly additive: tf.Tensor1D | null;
}

/** One chunk's logits, as the unchunked forward computes them. */
function chunkLogits(x: tf.Tensor2D, head: HeadSpec): tf.Tensor2D {
  let z: tf.Tensor2D = head.tied ? tf.matMul(x, head.weight, false, true) : tf.matMul(x, head.weight);
  if (head.temperature !== 1) z = tf.div(z, head.temperature);
  if (head.additive !== null) z = tf.add(z, head.additive);
  return z;
}

/** d stats / d z for one chunk, given the upstream `dy` `[2, rows]` (row 0: log-probs, row 1: entropies). */
function chunkLogitGradient(z: tf.Tensor2D, targets: Int32Array, dy: tf.Tensor2D): tf.Tensor2D {
  const native = nativeLossHeadGradient(z, targets, dy);
  if (native !== null) return native;
  // tfjs form (layers.ts' targetLogProbsAndEntropy backward): p = softmax(z), H = -Σ p log p.
  const [n, v] = z.shape;
  const logp = tf.logSoftmax(z);
  const p = tf.exp(logp);
  const h = tf.neg(tf.sum(tf.mul(p, logp), 1, true)); // [n, 1]
  const oneHot = tf.oneHot(tf.tensor1d(targets, 'int32'), v) as tf.Tensor2D;
  const [dLogprob, dEntropy] = tf.split(tf.transpose(dy), 2, 1) as [tf.Tensor2D, tf.Tensor2D]; // [n, 1] each
  const fromLogprob = tf.mul(dLogprob, tf.sub(oneHot, p));
  const fromEntropy = tf.mul(dEntropy, tf.mul(p, tf.add(logp, h)));
  return tf.reshape(tf.sub(fromLogprob, fromEntropy), [n, v]) as tf.Tensor2D;
}

/**
 * `[2, N]`: row 0 each target's log-prob, row 1 each row's entropy, under `softmax(x · head / T +
 * additive)`, computed `chunkRows` rows at a time forward and backward. Differentiable in `x`, and
 * in the head weight when it is a trainable variable.
 * @example const both = chunkedTargetStats(normed, targetIds, { weight: embedding, tied: true, temperature: 1, additive: null }, 110);
 */
export function chunkedTargetStats(x: tf.Tensor2D, targetIds: Int32Array, head: HeadSpec, chunkRows: number): tf.Tensor2D {
  const n = x.shape[0];
  const chunks: Array<[number, number]> = [];
  for (let start = 0; start < n; start += chunkRows) chunks.push([start, Math.min(n, start + chunkRows)]);
  const slice = (t: tf.Tensor2D, [a, b]: [number, number]) => tf.slice(t, [a, 0], [b - a, t.shape[1]]) as tf.Tensor2D;
  const trainsHead = head.weight instanceof tf.Variable && head.weight.trainable;
  const op = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const xs = args[0] as tf.Tensor2D;
    const save = args[args.length - 1] as tf.GradSaveFunc;
    save([xs]);
    // Forward: each chunk's logits live only while its stats are computed.
    const parts = chunks.map((range) => tf.tidy(() => targetLogProbsAndEntropy(chunkLogits(slice(xs, range), head), targetIds.subarray(range[0], range[1]))));
    const value = tf.concat(parts, 1) as tf.Tensor2D;
    tf.dispose(parts);
    return {
      value,
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
        const xSaved = saved[0] as tf.Tensor2D;
        let dWeight: tf.Tensor2D | null = null;
        const dxParts = chunks.map((range) =>
          tf.tidy(() => {
            const xc = slice(xSaved, range);
            const dyc = tf.slice(dy, [0, range[0]], [2, range[1] - range[0]]) as tf.Tensor2D;
            let dz = chunkLogitGradient(chunkLogits(xc, head), targetIds.subarray(range[0], range[1]), dyc);
            if (head.temperature !== 1) dz = tf.div(dz, head.temperature);
            if (trainsHead) {
              const part = head.tied ? tf.matMul(dz, xc, true, false) : tf.matMul(xc, dz, true, false); // [V, d] or [d, V]
              const next = dWeight === null ? part : tf.add(dWeight, part);
              if (dWeight !== null) dWeight.dispose();
              dWeight = tf.keep(next as tf.Tensor2D);
            }
            return head.tied ? tf.matMul(dz, head.weight) : tf.matMul(dz, head.weight, false, true); // [rows, d]
          }),
        );
        const dx = tf.concat(dxParts, 0);
        tf.dispose(dxParts);
        return trainsHead ? [dx, dWeight as unknown as tf.Tensor] : [dx];
      },
    };
  });
  return (trainsHead ? op(x, head.weight) : op(x)) as tf.Tensor2D;
}
