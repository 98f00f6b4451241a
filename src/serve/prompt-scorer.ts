/**
 * Prompt log-probs for the legacy completions' `echo` + `logprobs` (what lm-evaluation-harness's
 * log-likelihood scoring reads): one forward pass over the prompt, then, a chunk of positions at a
 * time (`forwardLogitChunks`), on the backend a log-softmax over the model's whole output
 * vocabulary — every embedding row, as transformers and vLLM normalise, so the numbers compare with theirs where a vocabulary is padded
 * past the tokenizer's ids (Qwen2.5: 271 rows) — the log-prob of each next token and, when asked,
 * the top-k alternatives among the tokenizer's ids. Only `[T]` and `[T, k]` come back to the CPU,
 * never `[T, V]`. These are the model's own log-probs (temperature 1), exact rather than sampled.
 */
import { tf } from '../backend/tf.js';
import { scoringChunkRows } from './scoring-chunk-rows.js';
import type { TransformerModel } from '../models/transformer/model.js';
import type { PromptScorer, PromptScores } from './served-model.js';

/** How {@link modelScorer} runs. */
export interface ScorerOptions {
  /** Prompt positions whose `[rows, vocab]` logits exist at once. Default `scoringChunkRows(vocab)` (the chunk budget over this path's five maps). */
  readonly chunkRows?: number;
}

/**
 * A scorer over `model` (with its adapters, if any). The decoder runs once over the prompt; the LM
 * head, the log-softmax and the top-k run a chunk of positions at a time, so the prompt's
 * `[T, vocab]` logits never exist whole (at Qwen2.5's 151,936 ids, 2,048 positions are 1.2 GB, and
 * the log-softmax as much again). Row by row the same numbers as one pass over all positions.
 * @example const { logprobs } = await modelScorer(model).score(ids, 0); // logprobs[i] = log p(ids[i + 1] | ids[..i])
 */
export function modelScorer(model: TransformerModel, options: ScorerOptions = {}): PromptScorer {
  return {
    async score(ids: Int32Array, topK: number): Promise<PromptScores> {
      const t = ids.length - 1;
      if (t <= 0) return { logprobs: new Float32Array(0), top: topK > 0 ? { k: topK, ids: new Int32Array(0), logprobs: new Float32Array(0) } : null };
      const v = model.config.vocabSize;
      const out = model.outputVocab;
      const k = Math.min(topK, out);
      const chunks = model.forwardLogitChunks(ids.subarray(0, t), new Uint8Array(t).fill(1), 1, t, options.chunkRows ?? scoringChunkRows(v), (logits, start) => {
        const rows = logits.shape[0];
        const targets = new Int32Array(rows);
        for (let i = 0; i < rows; i++) targets[i] = i * v + (ids[start + i + 1] as number);
        const logp = tf.logSoftmax(logits); // [rows, V]: normalised over every row
        const picked = tf.gather(tf.reshape(logp, [rows * v]), tf.tensor1d(targets, 'int32')); // [rows]
        if (topK <= 0) return [picked];
        // Alternatives among the ids a tokenizer can name (padded rows have no token).
        const named = out < v ? tf.slice(logp, [0, 0], [rows, out]) : logp;
        const best = tf.topk(named, k); // sorted; ties: lower id first
        return [picked, best.values, best.indices];
      });
      try {
        const logprobs = new Float32Array(t);
        const top = topK > 0 ? { k, ids: new Int32Array(t * k), logprobs: new Float32Array(t * k) } : null;
        let at = 0;
        for (const [picked, values, indices] of chunks) {
          const chosen = (await (picked as tf.Tensor).data()) as Float32Array;
          logprobs.set(chosen, at);
          if (top !== null) {
            top.ids.set((await (indices as tf.Tensor).data()) as Int32Array, at * k);
            top.logprobs.set((await (values as tf.Tensor).data()) as Float32Array, at * k);
          }
          at += chosen.length;
        }
        return { logprobs, top };
      } finally {
        tf.dispose(chunks);
      }
    },
  };
}
