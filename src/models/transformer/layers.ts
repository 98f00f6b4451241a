/**
 * The Llama building blocks as pure tfjs functions: RMSNorm, rotary embeddings (RoPE), SwiGLU and
 * masked multi-head attention. Written for the wasm backend's fast paths: no
 * `pow`, no einsum, no split/unstack along the batch; heads via reshape + transpose + batched matMul,
 * and RoPE's `rotate_half` as a matMul with a fixed ±1 permutation matrix instead of slice + concat.
 */
import { nativeAttention, nativeAttentionInference } from '../../backend/native-attention.js';
import { nativeApplyRope, nativeRmsNorm, nativeSwiGluGate } from '../../backend/native-layers.js';
import { nativeLoraProject } from '../../backend/native-lora.js';
import { nativeTargetLogProbsAndEntropy } from '../../backend/native-log-softmax.js';
import { tf } from '../../backend/tf.js';
import { RopeTable, ropeInverseFrequencies } from './rope.js';

/** Additive value for masked logits / attention scores: exp(-1e9 - max) is exactly 0 in float32. */
export const MASK_VALUE = -1e9;

/**
 * RMSNorm (Zhang & Sennrich 2019, as in Llama): `x / sqrt(mean(x²) + eps) * weight`.
 * @example rmsNorm(x, w, 1e-5) // x: [..., d], w: [d] -> [..., d]
 */
export function rmsNorm<T extends tf.Tensor>(x: T, weight: tf.Tensor1D, eps: number): T {
  const native = nativeRmsNorm(x, weight, eps); // one kernel each way on wasm with the addon
  if (native !== null) return native;
  const meanSquare = tf.mean(tf.square(x), -1, true); // [..., 1]
  return scaleColumns(tf.mul(x, tf.rsqrt(tf.add(meanSquare, eps))), weight) as T;
}

/**
 * `x * weight` (weight [d] scaling the last axis) whose weight gradient, the column sums of
 * `dy * x`, is one `[1, rows] x [rows, d]` matrix product. Why: tfjs reduces over the rows with
 * its `Sum` kernel, which on wasm transposes first (about 1 ms per [2048, 64] here, five per step:
 * 6 % of a training step); the product runs on the fast matmul path. Same value and gradients.
 * @example scaleColumns(normed, weight) // [..., d] * [d]
 */
export function scaleColumns(x: tf.Tensor, weight: tf.Tensor1D): tf.Tensor {
  const op = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const [xs, w, save] = args as [tf.Tensor, tf.Tensor1D, tf.GradSaveFunc];
    save([xs, w]);
    return {
      value: tf.mul(xs, w),
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
        const [xSaved, wSaved] = saved as [tf.Tensor, tf.Tensor1D];
        const d = wSaved.shape[0];
        const rows = xSaved.size / d;
        const columnSums = tf.matMul(tf.ones([1, rows]), tf.reshape(tf.mul(dy, xSaved), [rows, d])); // [1, d]
        return [tf.mul(dy, wSaved), tf.reshape(columnSums, [d])];
      },
    };
  });
  return op(x, weight);
}

/**
 * SwiGLU MLP (Shazeer 2020): `down(silu(x·gate) * (x·up))`, weights stored [in, out].
 * @example swiGlu(x, gate, up, down) // x: [n, d], gate/up: [d, f], down: [f, d] -> [n, d]
 */
export function swiGlu(x: tf.Tensor2D, gate: tf.Tensor2D, up: tf.Tensor2D, down: tf.Tensor2D): tf.Tensor2D {
  return tf.matMul(siluGate(tf.matMul(x, gate), tf.matMul(x, up)), down); // [n, d]
}

/** `silu(g) * u`, the SwiGLU gate: one native kernel each way on wasm with the addon. */
function siluGate(g: tf.Tensor2D, u: tf.Tensor2D): tf.Tensor2D {
  return nativeSwiGluGate(g, u) ?? tf.mul(tf.mul(g, tf.sigmoid(g)), u);
}

/**
 * One linear layer, weight stored [in, out]: `x · W (+ b) (+ scale · (x · A) · B)` — the bias
 * and the LoRA pair (A [in, r], B [r, out]) only where the model has them.
 */
export interface Projection {
  readonly weight: tf.Tensor2D;
  readonly bias?: tf.Tensor1D;
  readonly lora?: { readonly a: tf.Tensor2D; readonly b: tf.Tensor2D; readonly scale: number };
}

/** A fused projection (no LoRA: merged in). */
export interface FusedProjection {
  readonly weight: tf.Tensor2D;
  readonly bias?: tf.Tensor1D;
}

/**
 * Applies a {@link Projection}: `[n, in] -> [n, out]`. `dropLoraInput` (LoRA dropout, training
 * only) is applied to the adapter's input alone, as PEFT does.
 * @example project(h, { weight: wq, bias: bq }) // [n, d] -> [n, q]
 */
export function project(x: tf.Tensor2D, p: Projection, dropLoraInput?: (x: tf.Tensor2D) => tf.Tensor2D): tf.Tensor2D {
  const adapterInput = p.lora !== undefined && dropLoraInput !== undefined ? dropLoraInput(x) : undefined;
  const fused = p.lora === undefined ? null : nativeLoraProject(x, p.weight, p.lora.a, p.lora.b, p.lora.scale, adapterInput);
  if (fused !== null) return p.bias === undefined ? fused : tf.add(fused, p.bias);
  let y: tf.Tensor2D = tf.matMul(x, p.weight);
  if (p.bias !== undefined) y = tf.add(y, p.bias);
  if (p.lora !== undefined) y = tf.add(y, tf.mul(tf.matMul(tf.matMul(adapterInput ?? x, p.lora.a), p.lora.b), p.lora.scale));
  return y;
}

/** True when a projection is a bare weight (the fused fast paths apply). */
export function isPlain(p: Projection): boolean {
  return p.bias === undefined && p.lora === undefined;
}

/** One decoder block's weights (HF Llama names in the comments), Linear weights stored [in, out]. */
export interface BlockWeights {
  /** `input_layernorm` [d]. */
  readonly inputNorm: tf.Tensor1D;
  /** `self_attn.{q,k,v,o}_proj`: q [d, heads * hd], k/v [d, kvHeads * hd], o [heads * hd, d]. */
  readonly q: Projection;
  readonly k: Projection;
  readonly v: Projection;
  readonly o: Projection;
  /** `self_attn.{q,k}_norm` [hd] (Qwen3), per-head RMSNorm before RoPE. */
  readonly qNorm?: tf.Tensor1D;
  readonly kNorm?: tf.Tensor1D;
  /** `post_attention_layernorm` [d]. */
  readonly postNorm: tf.Tensor1D;
  /** `mlp.{gate,up}_proj` [d, f] and `mlp.down_proj` [f, d]. */
  readonly gate: Projection;
  readonly up: Projection;
  readonly down: Projection;
}

/** Per layer: attention of the roped queries/keys and values `[b, h, t, hd]` -> context `[b, h, t, hd]`. */
export type AttentionFn = (layer: number, query: tf.Tensor4D, key: tf.Tensor4D, value: tf.Tensor4D) => tf.Tensor4D;

/**
 * The rest of a decoder block once attention has run: the o-projection added to the residual
 * stream, then a SwiGLU MLP on its RMSNorm added again. Shared by the training forward and both
 * sampling paths so that they cannot drift apart.
 * @example x = mlpResidual(x, context, block, 1e-5) // x: [n, d], context: [n, heads * hd] -> [n, d]
 */
export function mlpResidual(x: tf.Tensor2D, context: tf.Tensor2D, w: BlockWeights, eps: number, drop?: (x: tf.Tensor2D) => tf.Tensor2D): tf.Tensor2D {
  const attended: tf.Tensor2D = tf.add(x, project(context, w.o, drop)); // [n, d]
  const normed = rmsNorm(attended, w.postNorm, eps);
  if (isPlain(w.gate) && isPlain(w.up) && isPlain(w.down)) return tf.add(attended, swiGlu(normed, w.gate.weight, w.up.weight, w.down.weight));
  const inner = siluGate(project(normed, w.gate, drop), project(normed, w.up, drop)); // [n, f]
  return tf.add(attended, project(inner, w.down, drop));
}

/**
 * The RoPE cos/sin table for positions below `maxContext` with plain (unscaled) frequencies
 * `θ^(-2i/hd)`: a convenience over {@link RopeTable} (transformer/rope.ts), which models use.
 * @example const table = ropeTable(128, 16, 10000); table.cos[5 * 16 + 3] // cos(5 * θ^(-6/16))
 */
export function ropeTable(maxContext: number, headDim: number, theta: number): { cos: Float32Array; sin: Float32Array } {
  const shape = { vocabSize: 1, dModel: headDim, nLayers: 1, nHeads: 1, ffnHidden: 1, maxContext, ropeTheta: theta, rmsNormEps: 1, tieEmbeddings: false };
  const table = new RopeTable(ropeInverseFrequencies(shape), maxContext);
  table.ensure(maxContext);
  return { cos: table.cos, sin: table.sin };
}

/**
 * The [hd, hd] matrix R with `x · R = rotate_half(x) = cat(-x[half:], x[:half])`.
 * @example rotateHalfMatrix(4) // x=[a,b,c,d] -> x·R = [-c,-d,a,b]
 */
export function rotateHalfMatrix(headDim: number): Float32Array {
  const half = headDim / 2;
  const r = new Float32Array(headDim * headDim); // [in, out]
  for (let j = 0; j < half; j++) {
    r[(j + half) * headDim + j] = -1;
    r[j * headDim + j + half] = 1;
  }
  return r;
}

/** Per-token RoPE factors for a batch, broadcastable over heads. */
export interface RopeFactors {
  /** [batch, 1, seqLen, headDim] */
  readonly cos: tf.Tensor4D;
  /** [batch, 1, seqLen, headDim] */
  readonly sin: tf.Tensor4D;
  /** [headDim, headDim] rotate_half matrix. */
  readonly rotate: tf.Tensor2D;
}

/**
 * Gathers the RoPE table rows for the given position ids (on the CPU: no gather kernel needed).
 * @example ropeFactors(table, positions, 2, 8, 16, rot) // positions: [2 * 8]
 */
export function ropeFactors(
  table: { cos: Float32Array; sin: Float32Array },
  positions: Int32Array,
  batch: number,
  seqLen: number,
  headDim: number,
  rotate: tf.Tensor2D,
): RopeFactors {
  const cos = new Float32Array(batch * seqLen * headDim);
  const sin = new Float32Array(batch * seqLen * headDim);
  for (let n = 0; n < batch * seqLen; n++) {
    const src = positions[n] * headDim;
    cos.set(table.cos.subarray(src, src + headDim), n * headDim);
    sin.set(table.sin.subarray(src, src + headDim), n * headDim);
  }
  return {
    cos: tf.tensor4d(cos, [batch, 1, seqLen, headDim]),
    sin: tf.tensor4d(sin, [batch, 1, seqLen, headDim]),
    rotate,
  };
}

/**
 * Applies RoPE (HF `apply_rotary_pos_emb`): `x * cos + rotate_half(x) * sin`.
 * @example applyRope(q, factors) // q: [batch, heads, seqLen, headDim] -> same shape
 */
export function applyRope(x: tf.Tensor4D, rope: RopeFactors): tf.Tensor4D {
  const native = nativeApplyRope(x, rope.cos, rope.sin);
  if (native !== null) return native;
  const [b, h, t, hd] = x.shape;
  const rotated = tf.matMul(tf.reshape(x, [b * h * t, hd]), rope.rotate).reshape([b, h, t, hd]); // [b, h, t, hd]
  return tf.add(tf.mul(x, rope.cos), tf.mul(rotated, rope.sin));
}

/**
 * [batch, seqLen, d] -> [batch, heads, seqLen, headDim].
 * @example splitHeads(x2d, 2, 8, 4) // x2d: [2 * 8, d]
 */
export function splitHeads(x: tf.Tensor2D, batch: number, seqLen: number, heads: number): tf.Tensor4D {
  const hd = x.shape[1] / heads;
  return tf.transpose(tf.reshape(x, [batch, seqLen, heads, hd]), [0, 2, 1, 3]);
}

/**
 * [batch, heads, seqLen, headDim] -> [batch * seqLen, d].
 * @example mergeHeads(ctx) // ctx: [2, 4, 8, 16] -> [16, 64]
 */
export function mergeHeads(x: tf.Tensor4D): tf.Tensor2D {
  const [b, h, t, hd] = x.shape;
  return tf.reshape(tf.transpose(x, [0, 2, 1, 3]), [b * t, h * hd]);
}

/** What an attention call is for: `train` keeps what its gradient needs, `infer` (no gradient taken through it) keeps nothing. */
export type AttentionUse = 'train' | 'infer';

/**
 * Scaled dot-product attention with an additive mask (0 = attend, {@link MASK_VALUE} = blocked).
 * Grouped-query attention when `k`/`v` have fewer heads than `q` (query head `h` reads key/value
 * head `h / (heads / kvHeads)`, as transformers' `repeat_kv`). On wasm with the addon one native
 * kernel each way (backend/native-attention.ts); elsewhere the tfjs form, in which the query heads
 * of a group are folded into the query axis (`[b, kvHeads, group * tq, hd]`, a free reshape), so
 * keys and values are never repeated.
 * @example attend(q, k, v, mask) // q: [b, h, tq, hd], k/v: [b, kvHeads, tk, hd], mask: [b, 1, tq, tk]
 */
export function attend(q: tf.Tensor4D, k: tf.Tensor4D, v: tf.Tensor4D, mask: tf.Tensor4D, use: AttentionUse = 'train'): tf.Tensor4D {
  const native = use === 'infer' ? nativeAttentionInference(q, k, v, mask) : nativeAttention(q, k, v, mask);
  if (native !== null) return native;
  const [b, h, tq, hd] = q.shape;
  const kvh = k.shape[1];
  const scaled = tf.mul(q, 1 / Math.sqrt(hd)); // scale q, the smaller operand
  if (kvh === h) return tf.matMul(tf.softmax(tf.add(tf.matMul(scaled, k, false, true), mask)), v); // scores [b, h, tq, tk] -> [b, h, tq, hd]
  const g = h / kvh;
  const tk = k.shape[2];
  const grouped = tf.reshape(scaled, [b, kvh, g * tq, hd]);
  const scores: tf.Tensor4D = tf.reshape(tf.matMul(grouped, k, false, true), [b, h, tq, tk]); // [b, h, tq, tk]
  const probs = tf.reshape(tf.softmax(tf.add(scores, mask)), [b, kvh, g * tq, tk]);
  return tf.reshape(tf.matMul(probs, v), [b, h, tq, hd]);
}

/**
 * Additive attention mask for `seqLen` new queries per row over `keySlots` key slots: slots
 * `[0, past)` hold cached keys (`pastMask`, row stride `pastStride`), slots `[past, past + seqLen)`
 * the new keys (query `i` sees new key `j` when `j <= i` and `newMask[b, j] = 1`), and any slot
 * after that is unused. With `past = 0` this is the causal + key-padding mask of a full forward.
 * @example attentionMask(new Uint8Array(0), 0, mask, 2, 8) // -> [2 * 8 * 8] additive values
 */
export function attentionMask(
  pastMask: Uint8Array,
  past: number,
  newMask: Uint8Array,
  batch: number,
  seqLen: number,
  keySlots = past + seqLen,
  pastStride = past,
): Float32Array {
  const out = new Float32Array(batch * seqLen * keySlots).fill(MASK_VALUE); // [batch, seqLen, keySlots]
  for (let b = 0; b < batch; b++) {
    for (let i = 0; i < seqLen; i++) {
      const row = (b * seqLen + i) * keySlots;
      for (let j = 0; j < past; j++) if (pastMask[b * pastStride + j] === 1) out[row + j] = 0;
      for (let j = 0; j <= i; j++) if (newMask[b * seqLen + j] === 1) out[row + past + j] = 0;
    }
  }
  return out;
}

/**
 * Embedding lookup `table[ids]` whose forward copies rows on the CPU from `tableData` (the
 * table's values, read back once per weights version) instead of running the wasm Gather kernel
 * (~30 ns per element there); the gradient is the same as `tf.gather`'s (unsortedSegmentSum).
 * @example embedRows(embedding, ids, embedding.dataSync() as Float32Array) // [n, d]
 */
export function embedRows(table: tf.Tensor2D, ids: Int32Array, tableData: Float32Array): tf.Tensor2D {
  const [vocab, d] = table.shape;
  const lookup = tf.customGrad(() => {
    return {
      value: tf.tensor2d(gatherRows(tableData, ids, d), [ids.length, d]),
      gradFunc: (dy: tf.Tensor) => [tf.unsortedSegmentSum(dy, tf.tensor1d(ids, 'int32'), vocab)],
    };
  });
  return lookup(table) as tf.Tensor2D;
}

/**
 * Rows `ids` of a `[vocab, d]` table, as `[ids.length, d]`. A module-level function, not a loop in
 * the caller's closure: V8 keeps optimised code for a function that lives on, while a closure made
 * per call that runs its long loop once per call was recompiled (on-stack) over and over.
 */
function gatherRows(table: Float32Array, ids: Int32Array, d: number): Float32Array {
  const rows = new Float32Array(ids.length * d);
  for (let i = 0; i < ids.length; i++) rows.set(table.subarray(ids[i] * d, (ids[i] + 1) * d), i * d);
  return rows;
}

/**
 * Position ids from a padding mask: `start[b] + cumsum(mask) - 1`, clamped at `start[b]` so pads
 * before the first real token (left padding) get a valid id. Works for left and right padding.
 * @example positionsFromMask(new Uint8Array([0, 1, 1]), 1, 3, new Int32Array([0])) // [0, 0, 1]
 */
export function positionsFromMask(mask: Uint8Array, batch: number, seqLen: number, start: Int32Array): Int32Array {
  const out = new Int32Array(batch * seqLen);
  for (let b = 0; b < batch; b++) {
    let count = 0;
    for (let t = 0; t < seqLen; t++) {
      count += mask[b * seqLen + t];
      out[b * seqLen + t] = start[b] + Math.max(count - 1, 0);
    }
  }
  return out;
}

/**
 * Log-prob of each target and entropy of each row of `softmax(logits)`, as one op with an
 * analytic gradient. Why: autodiff of `logSoftmax` + entropy runs three `exp` and a max-gradient
 * `Equal` over [N, V]; on wasm those broadcast kernels dominated the training step. Forward:
 * `logp = z - max - log Σ exp(z - max)`. Backward, with `p = exp(logp)` and `H = -Σ p·logp`:
 * `∂logp[t]/∂z = onehot(t) - p` and `∂H/∂z = -p·(logp + H)`. Masked logits (≈ -1e9) have p = 0
 * and get zero gradient. Returns `[2, N]`: row 0 the log-probs, row 1 the entropies. On wasm with
 * the native addon the same math runs natively (`backend/native-log-softmax.ts`, tested equal).
 * @example targetLogProbsAndEntropy(logits, targetIds) // logits [N, V], targetIds [N] -> [2, N]
 */
export function targetLogProbsAndEntropy(logits: tf.Tensor2D, targetIds: Int32Array): tf.Tensor2D {
  const native = nativeTargetLogProbsAndEntropy(logits, targetIds);
  if (native !== null) return native;
  const [n, v] = logits.shape;
  const oneHotValues = new Float32Array(n * v); // [N, V]
  for (let i = 0; i < n; i++) oneHotValues[i * v + (targetIds[i] as number)] = 1;
  const oneHot = tf.tensor2d(oneHotValues, [n, v]);
  const op = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const [z, target, save] = args as [tf.Tensor2D, tf.Tensor2D, tf.GradSaveFunc];
    const shifted = tf.sub(z, tf.max(z, 1, true));
    const expShifted = tf.exp(shifted); // [N, V]
    const total = tf.sum(expShifted, 1, true); // [N, 1]
    const logp = tf.sub(shifted, tf.log(total));
    const probs = tf.div(expShifted, total);
    const logprobs = tf.sum(tf.mul(logp, target), 1, true); // [N, 1]
    const entropy = tf.neg(tf.sum(tf.mul(probs, logp), 1, true)); // [N, 1]
    save([probs, logp, entropy, target]);
    return {
      value: tf.transpose(tf.concat([logprobs, entropy], 1)), // [2, N]
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
        const [p, lp, h, t] = saved;
        const n = p.shape[0];
        const dyT = tf.transpose(dy); // [N, 2]
        const dLogprob = tf.reshape(tf.matMul(dyT, tf.tensor2d([1, 0], [2, 1])), [n, 1]);
        const dEntropy = tf.reshape(tf.matMul(dyT, tf.tensor2d([0, 1], [2, 1])), [n, 1]);
        const fromLogprob = tf.mul(dLogprob, tf.sub(t, p));
        const fromEntropy = tf.mul(dEntropy, tf.mul(p, tf.add(lp, h)));
        return [tf.sub(fromLogprob, fromEntropy), tf.zerosLike(t)];
      },
    };
  });
  return op(logits, oneHot) as tf.Tensor2D;
}
