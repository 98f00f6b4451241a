/**
 * A decode step — one new token per row over a KV cache — as one native call per layer and one for
 * the LM head (`native/decode_step.c`, issue #31), on the wasm backend with the addon. Why: through
 * tfjs the step dispatched ~25 kernels a layer, read every new key and value back from the heap,
 * uploaded the next token's embeddings and downloaded the logits; at the SmolLM2-135M shape that
 * overhead was 40 % of a B = 1 step and a fifth of a B = 64 one. The native layer makes the same
 * BLAS calls and runs the same native kernels in the same order on views of the weights (the wasm
 * heap) and of the cache (in place), so the logits and the cache are the tfjs path's to the bit
 * (tested), and the logits come back as a plain array (no download).
 *
 * Applies when every row feeds exactly one real token after a non-empty cache (the sampler's decode
 * steps of free generation); anything else — prefill, forced tokens, padding — keeps the tfjs path.
 */
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import type { NativeBlas } from '../../backend/native-blas.js';
import { nativeKernels } from '../../backend/native.js';
import { tf } from '../../backend/tf.js';
import type { KvCache } from '../kv-cache.js';
import { headDim, kvHeads, type TransformerConfig } from './config.js';
import type { BlockWeights, Projection } from './layers.js';
import type { RopeTable } from './rope.js';

/** The weights a native decode step reads (tfjs tensors in the wasm heap). */
export interface NativeDecodeWeights {
  readonly config: TransformerConfig;
  readonly rope: RopeTable;
  block(layer: number): BlockWeights;
  /** `[vocab, d]`. */
  embedding(): tf.Tensor2D;
  /** The final norm `[d]` and the LM head: the embedding itself when tied (`[vocab, d]`), else `[d, vocab]`. */
  head(): { readonly norm: tf.Tensor1D; readonly weight: tf.Tensor2D; readonly tied: boolean };
}

/** The addon's decode-step functions (native/decode_step.c). */
interface DecodeAddon {
  decodeLayer(
    x: Float32Array,
    tensors: (Float32Array | null)[],
    lora: (Float32Array | null)[],
    scales: number[],
    keys: Float32Array,
    values: Float32Array,
    pastMask: Uint8Array,
    newMask: Uint8Array,
    cos: Float32Array,
    sin: Float32Array,
    dims: Int32Array,
    eps: number,
    scratch: Float32Array,
  ): void;
  decodeHead(x: Float32Array, rows: number, d: number, norm: Float32Array, head: Float32Array, vocab: number, tied: boolean, eps: number, logits: Float32Array, scratch: Float32Array): void;
  decodeScratchFloats(dims: Int32Array): number;
}

let enabled = true;
let steps = 0;

/**
 * Turns the native decode step on or off (benchmarks and tests compare both paths in one process).
 * @example setNativeDecodeEnabled(false); // decode steps run through tfjs
 */
export function setNativeDecodeEnabled(on: boolean): void {
  enabled = on;
}

/**
 * Native decode steps run since start-up (tests).
 * @example const before = nativeDecodeSteps(); await policy.greedyActions(requests, 4); // + 3
 */
export function nativeDecodeSteps(): number {
  return steps;
}

function addon(): (NativeBlas & DecodeAddon) | null {
  if (!enabled) return null;
  const blas = nativeKernels() as (NativeBlas & Partial<DecodeAddon>) | null;
  return blas !== null && typeof blas.decodeLayer === 'function' ? (blas as NativeBlas & DecodeAddon) : null;
}

/** Projection order of the native layer: q, k, v, o, gate, up, down. */
const projections = (w: BlockWeights): Projection[] => [w.q, w.k, w.v, w.o, w.gate, w.up, w.down];

/**
 * Runs decode steps natively for one model; keeps its scratch buffers between steps.
 * @example const logits = decoder.step(cache, nextIds); // [rows * vocab], or null: use extend()
 */
export class NativeDecoder {
  private scratch = new Float32Array(0);
  private logits = new Float32Array(0);

  constructor(private readonly weights: NativeDecodeWeights) {}

  /**
   * Feeds `ids[r]` (one real token per row) to `cache` and returns the next-token logits
   * `[rows * vocab]` (a buffer this decoder reuses: read it before the next step), or null when the
   * native step does not apply here (no addon, another backend, an empty cache, a position past
   * the model's context), in which case nothing was changed.
   */
  step(cache: KvCache, ids: Int32Array): Float32Array | null {
    const blas = addon();
    const { config } = this.weights;
    const rows = cache.rows;
    if (blas === null || rows === 0 || ids.length !== rows || cache.length === 0) return null;
    const positions = cache.nextPositions;
    for (const p of positions) if (p >= config.maxContext) return null;
    const backend = tf.backend() as BackendWasm;
    const view = (t: tf.Tensor | undefined): Float32Array | null => (t === undefined ? null : (backend.typedArrayFromHeap(t) as Float32Array));
    const { dModel: d, nLayers, nHeads, vocabSize: vocab, rmsNormEps: eps } = config;
    const hd = headDim(config);
    const embedding = view(this.weights.embedding()) as Float32Array;
    // Embeddings of the new tokens: the residual stream.
    const x = new Float32Array(rows * d);
    for (let r = 0; r < rows; r++) {
      const id = ids[r] as number;
      if (!(id >= 0 && id < vocab)) return null;
      x.set(embedding.subarray(id * d, (id + 1) * d), r * d);
    }
    cache.reserve(1);
    const slot = cache.length;
    let highest = 0;
    for (const p of positions) if (p > highest) highest = p;
    this.weights.rope.ensure(highest + 1);
    const cos = new Float32Array(rows * hd);
    const sin = new Float32Array(rows * hd);
    const { cos: cosTable, sin: sinTable } = this.weights.rope;
    for (let r = 0; r < rows; r++) {
      const from = (positions[r] as number) * hd;
      cos.set(cosTable.subarray(from, from + hd), r * hd);
      sin.set(sinTable.subarray(from, from + hd), r * hd);
    }
    const ones = new Uint8Array(rows).fill(1);
    const pastMask = cache.keyMask; // read before advance() marks the new slot
    const first = this.weights.block(0);
    const rank = projections(first).find((p) => p.lora !== undefined)?.lora?.a.shape[1] ?? 0;
    const dims = Int32Array.of(rows, d, nHeads, kvHeads(config), hd, config.ffnHidden, slot, cache.capacity, rank);
    const need = blas.decodeScratchFloats(dims);
    if (this.scratch.length < need) this.scratch = new Float32Array(need);
    for (let layer = 0; layer < nLayers; layer++) {
      const w = layer === 0 ? first : this.weights.block(layer);
      const p = projections(w);
      // Views taken now: nothing below allocates in the heap, so none is detached before the call.
      const tensors = [w.inputNorm, w.q.weight, w.q.bias, w.k.weight, w.k.bias, w.v.weight, w.v.bias, w.o.weight, w.o.bias, w.qNorm, w.kNorm, w.postNorm, w.gate.weight, w.gate.bias, w.up.weight, w.up.bias, w.down.weight, w.down.bias].map(view);
      const lora = p.flatMap((pr) => [view(pr.lora?.a), view(pr.lora?.b)]);
      const scales = p.map((pr) => pr.lora?.scale ?? 0);
      const { key, value } = cache.layerBuffers(layer);
      blas.decodeLayer(x, tensors, lora, scales, key, value, pastMask, ones, cos, sin, dims, eps, this.scratch);
    }
    const head = this.weights.head();
    if (this.logits.length < rows * vocab) this.logits = new Float32Array(rows * vocab);
    blas.decodeHead(x, rows, d, view(head.norm) as Float32Array, view(head.weight) as Float32Array, vocab, head.tied, eps, this.logits, this.scratch);
    cache.advance(ones, 1);
    steps++;
    return this.logits.subarray(0, rows * vocab);
  }
}
