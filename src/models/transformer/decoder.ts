/**
 * The decoder stack of {@link TransformerModel}: token embedding, the pre-RMSNorm blocks (rotary
 * attention + SwiGLU MLP), the final norm and the LM head, read straight from the model's
 * {@link WeightStore}. Every forward of the model (training, scoring, sampling) runs through it; how
 * each layer runs — recorded for gradients, checkpointed (checkpointed-layer.ts) or freed as it
 * goes (inference) — is the caller's choice of {@link DecoderOptions}.
 */
import { InvalidArgumentError } from '../../core/errors.js';
import { tf } from '../../backend/tf.js';
import { checkpointedLayer } from './checkpointed-layer.js';
import { headDim, kvHeads, type TransformerConfig } from './config.js';
import {
  type AttentionFn,
  applyRope,
  attend,
  type BlockWeights,
  embedRows,
  mergeHeads,
  mlpResidual,
  type Projection,
  project,
  type RopeFactors,
  rmsNorm,
  ropeFactors,
  rotateHalfMatrix,
  splitHeads,
} from './layers.js';
import { RopeTable, ropeInverseFrequencies } from './rope.js';
import type { WeightStore } from './weight-store.js';

/** LoRA dropout of one layer's adapter inputs (deterministic: the same masks when a checkpointed layer runs again). */
export type LayerDropout = (layer: number) => ((x: tf.Tensor2D) => tf.Tensor2D) | undefined;

/** How the decoder stack runs. */
export interface DecoderOptions {
  /** LoRA dropout of the training forward. */
  readonly drop?: LayerDropout;
  /** Inference only (nothing records gradients): free each layer's intermediates as it goes. */
  readonly release?: boolean;
  /** Training with activation checkpointing (checkpointed-layer.ts): the attention mask every layer reads. */
  readonly checkpointMask?: tf.Tensor4D;
}

/** Embedding tables up to this many values are looked up on the CPU (see `embedRows`). */
const CPU_EMBED_LIMIT = 8_000_000;

/**
 * The decoder of one model over its weight store; owns the rotary table and the half-rotation matrix.
 * @example const hidden = decoder.run(ids, b, t, decoder.ropeFor(positions, b, t), (_, q, k, v) => attend(q, k, v, mask)); // [b*t, d]
 */
export class Decoder {
  readonly rope: RopeTable;
  private readonly rotate: tf.Tensor2D; // [headDim, headDim]
  private embedCache: { dataId: object; data: Float32Array } | null = null;
  private disposed = false;

  constructor(
    private readonly config: TransformerConfig,
    private readonly store: WeightStore,
  ) {
    const hd = headDim(config);
    this.rope = new RopeTable(ropeInverseFrequencies(config), config.maxContext);
    this.rotate = tf.keep(tf.tensor2d(rotateHalfMatrix(hd), [hd, hd]));
  }

  /** The decoder stack: embeddings -> blocks; returns the residual stream `[batch * seqLen, d]`. */
  run(ids: Int32Array, batch: number, seqLen: number, rope: RopeFactors, attention: AttentionFn, options: DecoderOptions = {}): tf.Tensor2D {
    const { drop, release, checkpointMask } = options;
    let x = this.embed(ids); // [B*T, d]
    for (let i = 0; i < this.config.nLayers; i++) {
      if (checkpointMask !== undefined && !release) {
        // The layer reads the rope factors and mask it is handed: in the backward pass, the saved copies.
        x = checkpointedLayer(x, [rope.cos, rope.sin, checkpointMask], this.layerVariables(i), (h, [cos, sin, m]) =>
          this.layer(i, h, batch, seqLen, { cos: cos as tf.Tensor4D, sin: sin as tf.Tensor4D, rotate: rope.rotate }, (_, q, k, v) => attend(q, k, v, m as tf.Tensor4D), {
            drop: drop?.(i),
          }),
        );
      } else if (release) {
        // Inference: free each layer's intermediates as soon as the next residual stream exists
        // (one tidy over the whole stack would hold every layer's, ~2.4 GB for a 64-row prefill at 135M).
        const next = tf.tidy(() => this.layer(i, x, batch, seqLen, rope, attention, {}));
        x.dispose();
        x = next;
      } else {
        x = this.layer(i, x, batch, seqLen, rope, attention, { drop: drop?.(i) });
      }
    }
    return x;
  }

  /** One decoder block on the residual stream `x` `[B*T, d]`. */
  private layer(i: number, x: tf.Tensor2D, batch: number, seqLen: number, rope: RopeFactors, attention: AttentionFn, options: { drop?: (x: tf.Tensor2D) => tf.Tensor2D }): tf.Tensor2D {
    const { nHeads, rmsNormEps: eps } = this.config;
    const nKv = kvHeads(this.config);
    const { drop } = options;
    const w = this.block(i);
    const h = rmsNorm(x, w.inputNorm, eps); // [B*T, d]
    let q = splitHeads(project(h, w.q, drop), batch, seqLen, nHeads); // [B, H, T, hd]
    let k = splitHeads(project(h, w.k, drop), batch, seqLen, nKv); // [B, Hkv, T, hd]
    if (w.qNorm !== undefined && w.kNorm !== undefined) {
      q = rmsNorm(q, w.qNorm, eps);
      k = rmsNorm(k, w.kNorm, eps);
    }
    const v = splitHeads(project(h, w.v, drop), batch, seqLen, nKv);
    return mlpResidual(x, mergeHeads(attention(i, applyRope(q, rope), applyRope(k, rope), v)), w, eps, drop); // context [B*T, H*hd]
  }

  /** The trainable variables decoder layer `layer` reads (its adapters, or all its weights when the model trains in full). */
  private layerVariables(layer: number): tf.Variable[] {
    const w = this.block(layer);
    const tensors: (tf.Tensor | undefined)[] = [w.inputNorm, w.qNorm, w.kNorm, w.postNorm];
    for (const p of [w.q, w.k, w.v, w.o, w.gate, w.up, w.down]) tensors.push(p.weight, p.bias, p.lora?.a, p.lora?.b);
    return tensors.filter((t): t is tf.Variable => t instanceof tf.Variable && t.trainable);
  }

  /** The weights of decoder block `layer` (the variables themselves, read by every forward path). */
  block(layer: number): BlockWeights {
    const p = `model.layers.${layer}`;
    const proj = (name: string): Projection => {
      const bias = this.store.find(`${p}.${name}.bias`) as tf.Tensor as tf.Tensor1D | undefined;
      const lora = this.store.loraOf(`${p}.${name}`);
      return { weight: this.weight2d(`${p}.${name}.weight`), ...(bias === undefined ? {} : { bias }), ...(lora === undefined ? {} : { lora }) };
    };
    const qkNorm = this.config.qkNorm === true;
    return {
      inputNorm: this.weight1d(`${p}.input_layernorm.weight`),
      q: proj('self_attn.q_proj'),
      k: proj('self_attn.k_proj'),
      v: proj('self_attn.v_proj'),
      o: proj('self_attn.o_proj'),
      ...(qkNorm ? { qNorm: this.weight1d(`${p}.self_attn.q_norm.weight`), kNorm: this.weight1d(`${p}.self_attn.k_norm.weight`) } : {}),
      postNorm: this.weight1d(`${p}.post_attention_layernorm.weight`),
      gate: proj('mlp.gate_proj'),
      up: proj('mlp.up_proj'),
      down: proj('mlp.down_proj'),
    };
  }

  /** Token embeddings `[n, d]`: a CPU row copy for tables that fit (see `embedRows`), else `tf.gather`. */
  embed(ids: Int32Array): tf.Tensor2D {
    const table = this.weight2d('model.embed_tokens.weight');
    if (table.size > CPU_EMBED_LIMIT) return tf.gather(table, tf.tensor1d(ids, 'int32'));
    // Variables get a new dataId on every assign (optimizer step, load), so this re-reads once per version.
    if (this.embedCache?.dataId !== table.dataId) this.embedCache = { dataId: table.dataId, data: table.dataSync() as Float32Array };
    return embedRows(table, ids, this.embedCache.data);
  }

  /** Final norm + LM head on selected rows: `[n, d] -> [n, vocab]`. */
  head(hidden: tf.Tensor2D): tf.Tensor2D {
    return this.project(this.finalNorm(hidden));
  }

  /** Final RMSNorm: `[n, d] -> [n, d]`. */
  finalNorm(hidden: tf.Tensor2D): tf.Tensor2D {
    return rmsNorm(hidden, this.weight1d('model.norm.weight'), this.config.rmsNormEps);
  }

  /** LM head on normed rows: `[n, d] -> [n, vocab]`. */
  project(normed: tf.Tensor2D): tf.Tensor2D {
    if (this.config.tieEmbeddings) return tf.matMul(normed, this.weight2d('model.embed_tokens.weight'), false, true);
    return tf.matMul(normed, this.weight2d('lm_head.weight')); // stored [d, V]
  }

  /** The LM head's weight: `lm_head.weight` `[d, V]`, or the embedding `[V, d]` when tied. */
  headWeight(): tf.Tensor2D {
    return this.weight2d(this.config.tieEmbeddings ? 'model.embed_tokens.weight' : 'lm_head.weight');
  }

  /** Rotary factors for the given positions (`[batch * seqLen]`), growing the table as needed. */
  ropeFor(positions: Int32Array, batch: number, seqLen: number): RopeFactors {
    this.checkPositions(positions);
    let highest = 0;
    for (const p of positions) if (p > highest) highest = p;
    this.rope.ensure(highest + 1);
    return ropeFactors(this.rope, positions, batch, seqLen, headDim(this.config), this.rotate);
  }

  private checkPositions(positions: Int32Array): void {
    for (const p of positions) {
      if (p >= this.config.maxContext) {
        throw InvalidArgumentError.format('inputIds', `position ${p} exceeds maxContext ${this.config.maxContext}`);
      }
    }
  }

  /** A weight by its HF name, as the variable itself. */
  weight(name: string): tf.Variable {
    if (this.disposed) throw InvalidArgumentError.format('model', 'used after dispose()');
    return this.store.get(name);
  }

  weight1d(name: string): tf.Tensor1D {
    return this.weight(name) as tf.Tensor as tf.Tensor1D;
  }

  weight2d(name: string): tf.Tensor2D {
    return this.weight(name) as tf.Tensor as tf.Tensor2D;
  }

  /** Frees the half-rotation matrix; the weights belong to the store. */
  dispose(): void {
    if (this.disposed) return;
    this.rotate.dispose();
    this.embedCache = null;
    this.disposed = true;
  }
}
