/**
 * Prompt log-probs for the legacy completions' `echo` + `logprobs` (what lm-evaluation-harness's
 * log-likelihood scoring reads): one full forward pass over the prompt (`forwardLogits`), then on
 * the backend a log-softmax over the model's whole output vocabulary — every embedding row, as
 * transformers and vLLM normalise, so the numbers compare with theirs where a vocabulary is padded
 * past the tokenizer's ids (Qwen2.5: 271 rows) — the log-prob of each next token and, when asked,
 * the top-k alternatives among the tokenizer's ids. Only `[T]` and `[T, k]` come back to the CPU,
 * never `[T, V]`. These are the model's own log-probs (temperature 1), exact rather than sampled.
 */
import { tf } from '../backend/tf.js';
import type { TransformerModel } from '../models/transformer/model.js';
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
      for (let i = 0; i < t; i++) targets[i] = i * v + (ids[i + 1] as number);
      const scored = tf.tidy(() => {
        const logp = tf.logSoftmax(tf.reshape(logits, [t, v]) as tf.Tensor2D); // [t, V]: normalised over every row
        const picked = tf.gather(tf.reshape(logp, [t * v]), tf.tensor1d(targets, 'int32')); // [t]
        if (topK <= 0) return [picked];
        // Alternatives among the ids a tokenizer can name (padded rows have no token).
        const named = out < v ? tf.slice(logp, [0, 0], [t, out]) : logp;
        const best = tf.topk(named, Math.min(topK, out)); // sorted; ties: lower id first
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
