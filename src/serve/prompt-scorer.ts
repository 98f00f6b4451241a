/**
 * Prompt log-probs for the legacy completions' `echo` + `logprobs` (what lm-evaluation-harness's
 * log-likelihood scoring reads): one full forward pass over the prompt (`forwardLogits`), then on
 * the backend a log-softmax over the ids the model can emit, the log-prob of each next token and,
 * when asked, the top-k alternatives. Only `[T]` and `[T, k]` come back to the CPU, never `[T, V]`.
 * These are the model's own log-probs (temperature 1), exact rather than sampled.
 */
import { tf } from '../models/backend/tf.js';
import type { TransformerModel } from '../models/transformer.js';
import type { PromptScorer, PromptScores } from './served-model.js';

/**
 * A scorer over `model` (with its adapters, if any).
 * @example const { logprobs } = await modelScorer(model).score(ids, 0); // logprobs[i] = log p(ids[i + 1] | ids[..i])
 */
export function modelScorer(model: TransformerModel): PromptScorer {
  return {
    async score(ids: Int32Array, topK: number): Promise<PromptScores> {
      const t = ids.length - 1;
      if (t <= 0) return { logprobs: new Float32Array(0), top: topK > 0 ? { k: topK, ids: new Int32Array(0), logprobs: new Float32Array(0) } : null };
      const v = model.config.vocabSize;
      const out = model.outputVocab;
      const logits = model.forwardLogits(ids.subarray(0, t), new Uint8Array(t).fill(1), 1, t); // [1, t, V]
      const targets = new Int32Array(t);
      for (let i = 0; i < t; i++) targets[i] = i * out + (ids[i + 1] as number);
      const scored = tf.tidy(() => {
        let rows = tf.reshape(logits, [t, v]) as tf.Tensor2D;
        if (out < v) rows = tf.slice(rows, [0, 0], [t, out]); // ids past the tokenizer's are never emitted
        const logp = tf.logSoftmax(rows); // [t, out]
        const picked = tf.gather(tf.reshape(logp, [t * out]), tf.tensor1d(targets, 'int32')); // [t]
        if (topK <= 0) return [picked];
        const best = tf.topk(logp, Math.min(topK, out)); // sorted; ties: lower id first
        return [picked, best.values, best.indices];
      });
      logits.dispose();
      const [chosen, values, indices] = [scored[0] as tf.Tensor, scored[1] ?? null, scored[2] ?? null];
      try {
        const logprobs = (await chosen.data()) as Float32Array;
        if (values === null || indices === null) return { logprobs, top: null };
        const k = Math.min(topK, out);
        return { logprobs, top: { k, ids: Int32Array.from((await indices.data()) as Int32Array), logprobs: (await values.data()) as Float32Array } };
      } finally {
        tf.dispose(scored);
      }
    },
  };
}
