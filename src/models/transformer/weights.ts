/**
 * The weight inventory of the decoder under Hugging Face Llama names, and conversion between the
 * HF layout (Linear weights stored [out, in]) and the layout used here (Linear weights stored
 * [in, out], so every projection is a plain `x · W` — the fast, untransposed matmul on wasm).
 */
import { CheckpointError } from '../../core/errors.js';
import type { Rng } from '../../core/rng.js';
import { headDim, keyValueWidth, queryWidth, type TransformerConfig } from './config.js';

/** One named weight: HF name and shape, whether it is stored transposed here, and its init. */
export interface WeightSpec {
  /** Hugging Face Llama tensor name, e.g. `model.layers.0.self_attn.q_proj.weight`. */
  readonly name: string;
  /** Shape as HF stores it. */
  readonly hfShape: readonly number[];
  /** True for Linear weights: stored here as [in, out] = the transpose of `hfShape`. */
  readonly transposed: boolean;
  /** `ones` for norm gains, `zeros` for biases; otherwise N(0, std²). */
  readonly init: { readonly kind: 'ones' } | { readonly kind: 'zeros' } | { readonly kind: 'normal'; readonly std: number };
}

/** A tensor as plain data, in HF layout (row-major). */
export interface NamedWeight {
  readonly shape: number[];
  readonly data: Float32Array;
}

/**
 * All weights of a config in a fixed order (embedding, blocks, final norm, head).
 * Init follows GPT-2/nanoGPT: N(0, 0.02), residual output projections scaled by 1/sqrt(2·nLayers).
 * @example weightSpecs(cfg).map((s) => s.name) // ['model.embed_tokens.weight', ...]
 */
export function weightSpecs(config: TransformerConfig): WeightSpec[] {
  const { vocabSize: v, dModel: d, ffnHidden: f, nLayers } = config;
  const q = queryWidth(config);
  const kv = keyValueWidth(config);
  const hd = headDim(config);
  const std = 0.02;
  const residualStd = std / Math.sqrt(2 * nLayers);
  const linear = (name: string, out: number, inp: number, s: number): WeightSpec => ({
    name,
    hfShape: [out, inp],
    transposed: true,
    init: { kind: 'normal', std: s },
  });
  const bias = (name: string, out: number): WeightSpec => ({ name, hfShape: [out], transposed: false, init: { kind: 'zeros' } });
  const norm = (name: string, width = d): WeightSpec => ({ name, hfShape: [width], transposed: false, init: { kind: 'ones' } });
  const specs: WeightSpec[] = [{ name: 'model.embed_tokens.weight', hfShape: [v, d], transposed: false, init: { kind: 'normal', std } }];
  for (let i = 0; i < nLayers; i++) {
    const p = `model.layers.${i}`;
    specs.push(
      norm(`${p}.input_layernorm.weight`),
      linear(`${p}.self_attn.q_proj.weight`, q, d, std),
      linear(`${p}.self_attn.k_proj.weight`, kv, d, std),
      linear(`${p}.self_attn.v_proj.weight`, kv, d, std),
    );
    if (config.qkvBias) specs.push(bias(`${p}.self_attn.q_proj.bias`, q), bias(`${p}.self_attn.k_proj.bias`, kv), bias(`${p}.self_attn.v_proj.bias`, kv));
    if (config.qkNorm) specs.push(norm(`${p}.self_attn.q_norm.weight`, hd), norm(`${p}.self_attn.k_norm.weight`, hd));
    specs.push(linear(`${p}.self_attn.o_proj.weight`, d, q, residualStd));
    if (config.outputBias) specs.push(bias(`${p}.self_attn.o_proj.bias`, d));
    specs.push(
      norm(`${p}.post_attention_layernorm.weight`),
      linear(`${p}.mlp.gate_proj.weight`, f, d, std),
      linear(`${p}.mlp.up_proj.weight`, f, d, std),
      linear(`${p}.mlp.down_proj.weight`, d, f, residualStd),
    );
    if (config.mlpBias) specs.push(bias(`${p}.mlp.gate_proj.bias`, f), bias(`${p}.mlp.up_proj.bias`, f), bias(`${p}.mlp.down_proj.bias`, d));
  }
  specs.push(norm('model.norm.weight'));
  if (!config.tieEmbeddings) specs.push(linear('lm_head.weight', v, d, std));
  return specs;
}

/**
 * Shape of a weight as stored here ([in, out] for Linear weights).
 * @example storedShape({ name: 'lm_head.weight', hfShape: [512, 64], transposed: true, init }) // [64, 512]
 */
export function storedShape(spec: WeightSpec): number[] {
  return spec.transposed ? [spec.hfShape[1], spec.hfShape[0]] : [...spec.hfShape];
}

/**
 * Initial values of one weight in stored layout, drawn from `rng.fork('init', index)` so that a
 * seed fixes every tensor independently of the others.
 * @example initialValues(spec, rng.fork('init', 3))
 */
export function initialValues(spec: WeightSpec, rng: Rng): Float32Array {
  const size = spec.hfShape.reduce((a, b) => a * b, 1);
  const out = new Float32Array(size);
  if (spec.init.kind === 'ones') return out.fill(1);
  if (spec.init.kind === 'zeros') return out;
  for (let i = 0; i < size; i++) out[i] = rng.normal() * spec.init.std;
  return out;
}

/**
 * Row-major 2-D transpose: [rows, cols] -> [cols, rows].
 * @example transpose2d(new Float32Array([1, 2, 3, 4, 5, 6]), 2, 3) // [1, 4, 2, 5, 3, 6]
 */
export function transpose2d(data: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) out[c * rows + r] = data[r * cols + c];
  }
  return out;
}

/**
 * Stored data -> HF layout (a copy for Linear weights, the same array otherwise).
 * @example toHfLayout(spec, variable.dataSync() as Float32Array) // { shape: spec.hfShape, data }
 */
export function toHfLayout(spec: WeightSpec, stored: Float32Array): NamedWeight {
  const data = spec.transposed ? transpose2d(stored, spec.hfShape[1], spec.hfShape[0]) : stored;
  return { shape: [...spec.hfShape], data };
}

/**
 * HF layout -> stored data, checking the shape; a mismatch throws {@link CheckpointError} naming
 * the tensor.
 * @example fromHfLayout(spec, { shape: [16, 16], data })
 */
export function fromHfLayout(spec: WeightSpec, weight: NamedWeight): Float32Array {
  const same = weight.shape.length === spec.hfShape.length && weight.shape.every((n, i) => n === spec.hfShape[i]);
  if (!same) {
    throw new CheckpointError(spec.name, `shape mismatch: expected [${spec.hfShape.join(', ')}], got [${weight.shape.join(', ')}]`);
  }
  const size = spec.hfShape.reduce((a, b) => a * b, 1);
  if (weight.data.length !== size) {
    throw new CheckpointError(spec.name, `expected ${size} values for shape [${spec.hfShape.join(', ')}], got ${weight.data.length}`);
  }
  return spec.transposed ? transpose2d(weight.data, spec.hfShape[0], spec.hfShape[1]) : Float32Array.from(weight.data);
}
