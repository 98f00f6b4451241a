/**
 * The Tinker API's token-level data on the JSON wire: `TensorData`, model-input chunks, `Datum`,
 * and the per-datum outputs of a forward pass, as zod schemas, plus converters between them and
 * the typed arrays of `src/engines/engine.ts`.
 *
 * Wire facts these follow (the official SDK's types; SkyRL tx's server, which reads only `data`):
 * - a tensor is `{ data: number[], dtype: 'int64' | 'float32', shape?: number[] }`, flattened
 *   row-major; the SDK may send a 2-D tensor as sparse CSR (`sparse_crow_indices`,
 *   `sparse_col_indices`, only the non-zero values in `data`);
 * - a datum's `loss_fn_inputs` are named `target_tokens`, `weights` (absent = all 1), `logprobs`
 *   (the sampling policy's) and `advantages`; its `model_input` is a list of chunks, of which
 *   only `encoded_text` carries token ids.
 */
import { z } from 'zod';
import { InvalidArgumentError } from '../../../core/errors.js';
import type { EngineDatum, ForwardOutput } from '../../engine.js';

/** The two element types of the public wire. */
export const wireDtype = z.enum(['int64', 'float32']);
export type WireDtype = z.infer<typeof wireDtype>;

/** A tensor: flat row-major values, their dtype and (optionally) shape; sparse CSR for some 2-D tensors. */
export const tensorData = z.object({
  data: z.array(z.number()),
  dtype: wireDtype,
  shape: z.array(z.number().int().nonnegative()).nullish(),
  sparse_crow_indices: z.array(z.number().int().nonnegative()).nullish(),
  sparse_col_indices: z.array(z.number().int().nonnegative()).nullish(),
});
export type TensorData = z.infer<typeof tensorData>;

/** Token ids: the only chunk a text model reads. */
export const encodedTextChunk = z.object({
  type: z.literal('encoded_text').default('encoded_text'),
  tokens: z.array(z.number().int().nonnegative()),
});
export type EncodedTextChunk = z.infer<typeof encodedTextChunk>;

/** An image (base64 bytes on JSON), as the SDK sends for vision models; a text server refuses it by name. */
export const imageChunk = z.looseObject({
  type: z.literal('image'),
  data: z.string(),
  format: z.string(),
  expected_tokens: z.number().int().nullish(),
});

/** The other chunk kinds the SDK knows (image asset pointers, audio): carried so a server can name them when it refuses them. */
export const otherChunk = z.looseObject({ type: z.enum(['image_asset_pointer', 'dmel']) });

/** One chunk of a model input. */
export const modelInputChunk = z.union([encodedTextChunk, imageChunk, otherChunk]);
export type ModelInputChunk = z.infer<typeof modelInputChunk>;

/** A model input: chunks, concatenated in order. */
export const modelInput = z.object({ chunks: z.array(modelInputChunk) });
export type ModelInput = z.infer<typeof modelInput>;

/** One training sequence. */
export const datum = z.object({
  model_input: modelInput,
  loss_fn_inputs: z.record(z.string(), tensorData),
});
export type Datum = z.infer<typeof datum>;

/** What one forward (or forward-backward) call returns. */
export const forwardBackwardOutput = z.looseObject({
  /** SkyRL says `"scalar"`, the SDK's docs name output record classes; clients ignore it. */
  loss_fn_output_type: z.string(),
  /** One record per datum: `logprobs` and `elementwise_loss`, each `[n]` float32. */
  loss_fn_outputs: z.array(z.record(z.string(), tensorData)),
  metrics: z.record(z.string(), z.number()).default({}),
});
export type ForwardBackwardOutput = z.infer<typeof forwardBackwardOutput>;

/** The names of a datum's inputs. */
export const LOSS_FN_INPUT_NAMES = ['target_tokens', 'weights', 'logprobs', 'advantages'] as const;

/**
 * A 1-D tensor of values (an int64 one when `dtype` says so).
 * @example tensorOf(Int32Array.of(5, 6), 'int64') // { data: [5, 6], dtype: 'int64', shape: [2] }
 */
export function tensorOf(values: ArrayLike<number>, dtype: WireDtype): TensorData {
  return { data: Array.from(values), dtype, shape: [values.length] };
}

/**
 * The dense flat values of a tensor (expands sparse CSR), checked against its shape.
 * @example denseValues(t, 'loss_fn_inputs.weights') // number[]
 */
export function denseValues(tensor: TensorData, field: string): number[] {
  const shape = tensor.shape ?? null;
  const size = shape === null ? null : shape.reduce((a, b) => a * b, 1);
  const crow = tensor.sparse_crow_indices ?? null;
  if (crow === null) {
    if (size !== null && size !== tensor.data.length) throw InvalidArgumentError.format(field, `shape [${shape?.join(', ')}] holds ${size} values, data has ${tensor.data.length}`);
    return tensor.data;
  }
  const cols = tensor.sparse_col_indices ?? null;
  if (cols === null) throw InvalidArgumentError.format(`${field}.sparse_col_indices`, 'required with sparse_crow_indices');
  if (shape === null || shape.length !== 2) throw InvalidArgumentError.format(`${field}.shape`, 'a sparse CSR tensor needs a 2-D shape');
  const [rows, width] = shape as [number, number];
  if (crow.length !== rows + 1 || cols.length !== tensor.data.length || crow[rows] !== tensor.data.length) {
    throw InvalidArgumentError.format(field, `inconsistent sparse CSR: ${rows} rows, ${crow.length} row pointers, ${cols.length} column indices, ${tensor.data.length} values`);
  }
  const out = new Array<number>(rows * width).fill(0);
  for (let r = 0; r < rows; r++) {
    for (let k = crow[r] as number; k < (crow[r + 1] as number); k++) {
      const c = cols[k] as number;
      if (c >= width) throw InvalidArgumentError.format(`${field}.sparse_col_indices`, `column ${c} outside width ${width}`);
      out[r * width + c] = tensor.data[k] as number;
    }
  }
  return out;
}

/**
 * The token ids of a model input (its `encoded_text` chunks, in order); refuses other chunk kinds by name.
 * @example modelInputTokens({ chunks: [{ type: 'encoded_text', tokens: [1, 2] }] }, 'model_input') // Int32Array [1, 2]
 */
export function modelInputTokens(input: ModelInput, field: string): Int32Array {
  const parts: number[] = [];
  input.chunks.forEach((chunk, i) => {
    if (chunk.type !== 'encoded_text') throw InvalidArgumentError.format(`${field}.chunks[${i}].type`, `chunk type '${chunk.type}' is not supported by a text-only model (only 'encoded_text')`);
    for (const t of (chunk as EncodedTextChunk).tokens) parts.push(t);
  });
  return Int32Array.from(parts);
}

/**
 * A model input of token ids (one `encoded_text` chunk).
 * @example modelInputOf(Int32Array.of(1, 2)) // { chunks: [{ type: 'encoded_text', tokens: [1, 2] }] }
 */
export function modelInputOf(tokens: ArrayLike<number>): ModelInput {
  return { chunks: [{ type: 'encoded_text', tokens: Array.from(tokens) }] };
}

/**
 * An engine datum on the wire: `model_input` = its input tokens; `target_tokens`, `weights` and,
 * when present, the sampling `logprobs` and `advantages` as loss inputs.
 * @example datumToWire({ inputTokens, targetTokens, weights })
 */
export function datumToWire(d: EngineDatum): Datum {
  const inputs: Record<string, TensorData> = {
    target_tokens: tensorOf(d.targetTokens, 'int64'),
    weights: tensorOf(d.weights, 'float32'),
  };
  if (d.samplingLogprobs !== undefined) inputs.logprobs = tensorOf(d.samplingLogprobs, 'float32');
  if (d.advantages !== undefined) inputs.advantages = tensorOf(d.advantages, 'float32');
  return { model_input: modelInputOf(d.inputTokens), loss_fn_inputs: inputs };
}

/**
 * A wire datum as an engine datum. `target_tokens` is required, `weights` defaults to all 1, and
 * every given input must have the input's length (SkyRL pads or cuts a mismatched target
 * silently; this refuses it, naming the field). An unknown input name is refused too.
 * @example datumFromWire(body.forward_backward_input.data[0], 'forward_backward_input.data[0]')
 */
export function datumFromWire(w: Datum, field: string): EngineDatum {
  const inputTokens = modelInputTokens(w.model_input, `${field}.model_input`);
  const n = inputTokens.length;
  if (n === 0) throw InvalidArgumentError.format(`${field}.model_input`, 'no tokens');
  for (const name of Object.keys(w.loss_fn_inputs)) {
    if (!(LOSS_FN_INPUT_NAMES as readonly string[]).includes(name)) throw InvalidArgumentError.format(`${field}.loss_fn_inputs.${name}`, `unknown input (known: ${LOSS_FN_INPUT_NAMES.join(', ')})`);
  }
  const read = (name: (typeof LOSS_FN_INPUT_NAMES)[number]): number[] | undefined => {
    const t = w.loss_fn_inputs[name];
    if (t === undefined) return undefined;
    const values = denseValues(t, `${field}.loss_fn_inputs.${name}`);
    if (values.length !== n) throw InvalidArgumentError.format(`${field}.loss_fn_inputs.${name}`, `has ${values.length} values; the model input has ${n} tokens`);
    return values;
  };
  const targets = read('target_tokens');
  if (targets === undefined) throw InvalidArgumentError.format(`${field}.loss_fn_inputs.target_tokens`, 'required');
  for (const t of targets) if (!Number.isInteger(t) || t < 0) throw InvalidArgumentError.format(`${field}.loss_fn_inputs.target_tokens`, `expected token ids, got ${t}`);
  const weights = read('weights');
  const logprobs = read('logprobs');
  const advantages = read('advantages');
  return {
    inputTokens,
    targetTokens: Int32Array.from(targets),
    weights: weights === undefined ? new Float32Array(n).fill(1) : Float32Array.from(weights),
    ...(logprobs === undefined ? {} : { samplingLogprobs: Float32Array.from(logprobs) }),
    ...(advantages === undefined ? {} : { advantages: Float32Array.from(advantages) }),
  };
}

/**
 * An engine's forward output on the wire: per datum `logprobs` and `elementwise_loss` as float32 `[n]`.
 * @example forwardOutputToWire(out).loss_fn_outputs[0].logprobs.data
 */
export function forwardOutputToWire(out: ForwardOutput): ForwardBackwardOutput {
  return {
    loss_fn_output_type: 'scalar',
    loss_fn_outputs: out.logprobs.map((lp, i) => ({
      elementwise_loss: tensorOf(out.elementwiseLoss[i] as Float32Array, 'float32'),
      logprobs: tensorOf(lp, 'float32'),
    })),
    metrics: { ...out.metrics },
  };
}

/**
 * A forward output from the wire; each record must carry `logprobs` (`elementwise_loss` may be
 * absent: a server that does not report it gives zeros).
 * @example forwardOutputFromWire(await retrieve(id)).logprobs[0]
 */
export function forwardOutputFromWire(w: ForwardBackwardOutput): ForwardOutput {
  const logprobs: Float32Array[] = [];
  const elementwiseLoss: Float32Array[] = [];
  w.loss_fn_outputs.forEach((record, i) => {
    const lp = record.logprobs;
    if (lp === undefined) throw InvalidArgumentError.format(`loss_fn_outputs[${i}].logprobs`, 'missing from the server’s answer');
    const values = Float32Array.from(denseValues(lp, `loss_fn_outputs[${i}].logprobs`));
    logprobs.push(values);
    const loss = record.elementwise_loss;
    elementwiseLoss.push(loss === undefined ? new Float32Array(values.length) : Float32Array.from(denseValues(loss, `loss_fn_outputs[${i}].elementwise_loss`)));
  });
  return { logprobs, elementwiseLoss, metrics: { ...w.metrics } };
}
