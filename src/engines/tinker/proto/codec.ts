/**
 * Protobuf bodies of the official Tinker SDK (schema.ts) to and from the JSON wire's shapes, so a
 * server or client handles one form after the edge:
 * - `ForwardBackwardRequest` bytes ⇄ the JSON `forward_backward` request (+ `forward_only`);
 * - the JSON forward output → `ForwardBackwardOutput` bytes (one `ArrayRecord`, each field a
 *   float32 `BatchedTensor` of every datum end to end) and back;
 * - an engine sampling result → `SampleResponse` bytes (prompt log-probs one per prompt token,
 *   NaN first) and back.
 * Raw arrays are little-endian, as the SDK writes them with numpy on the machines it runs on.
 */
import type protobuf from 'protobufjs';
import { InvalidArgumentError } from '../../../core/errors.js';
import type { EngineSampleResult } from '../../engine.js';
import type { Datum, ForwardBackwardOutput, TensorData } from '../wire/tensors.js';
import type { ForwardBackwardRequest } from '../wire/training.js';
import { tinkerMessage } from './schema.js';

const DTYPE = { unspecified: 0, float32: 1, int64: 2, int32: 3, bfloat16: 4 } as const;
const STOP_REASON = { stop: 0, length: 1 } as const;

/** A decoded `forward_backward` body: the JSON request and whether it asked for a forward only. */
export interface DecodedForwardBackward {
  readonly request: ForwardBackwardRequest;
  readonly forwardOnly: boolean;
}

/**
 * Decodes a protobuf `ForwardBackwardRequest` into the JSON request shape (tensors become number
 * arrays; sparse CSR tensors stay sparse for the wire converters to expand).
 * @example const { request, forwardOnly } = decodeForwardBackwardRequest(body);
 */
export function decodeForwardBackwardRequest(bytes: Uint8Array): DecodedForwardBackward {
  const type = tinkerMessage('ForwardBackwardRequest');
  let raw: Record<string, unknown>;
  try {
    raw = type.toObject(type.decode(bytes), { longs: Number, enums: Number, defaults: true, arrays: true, objects: true, oneofs: true });
  } catch (err) {
    throw InvalidArgumentError.format('body', `not a protobuf ForwardBackwardRequest: ${(err as Error).message}`);
  }
  const data = (raw.data as Array<Record<string, unknown>>).map((d, i): Datum => ({
    model_input: { chunks: (d.model_input as Array<Record<string, unknown>>).map((c, k) => chunkFromProto(c, `data[${i}].model_input[${k}]`)) },
    loss_fn_inputs: Object.fromEntries(Object.entries(d.loss_fn_inputs as Record<string, Record<string, unknown>>).map(([name, t]) => [name, tensorFromProto(t, `data[${i}].loss_fn_inputs.${name}`)])),
  }));
  const config = raw.loss_fn_config as Record<string, number>;
  const request = {
    model_id: raw.model_id as string,
    seq_id: raw.seq_id as number,
    forward_backward_input: { loss_fn: raw.loss_fn as ForwardBackwardRequest['forward_backward_input']['loss_fn'], loss_fn_config: Object.keys(config).length > 0 ? config : null, data },
  };
  return { request, forwardOnly: raw.forward_only === true };
}

/**
 * Encodes a JSON `forward_backward` request as the SDK does (token ids int32, tensors dense in their dtype).
 * @example const body = encodeForwardBackwardRequest(request, false);
 */
export function encodeForwardBackwardRequest(request: ForwardBackwardRequest, forwardOnly: boolean): Uint8Array {
  const input = request.forward_backward_input;
  const message = {
    model_id: request.model_id,
    seq_id: request.seq_id ?? 0,
    loss_fn: input.loss_fn,
    loss_fn_config: input.loss_fn_config ?? {},
    forward_only: forwardOnly,
    data: input.data.map((d) => ({
      model_input: d.model_input.chunks.map((c) => {
        if (c.type !== 'encoded_text') throw InvalidArgumentError.format('model_input', `chunk type '${c.type}' has no protobuf encoding here`);
        return { encoded_text: { tokens: bytesOf(Int32Array.from((c as { tokens: number[] }).tokens)) } };
      }),
      loss_fn_inputs: Object.fromEntries(Object.entries(d.loss_fn_inputs).map(([name, t]) => [name, tensorToProto(t)])),
    })),
  };
  const type = tinkerMessage('ForwardBackwardRequest');
  return type.encode(type.fromObject(message)).finish();
}

/**
 * Encodes a forward output as `ForwardBackwardOutput` bytes.
 * @example const bytes = encodeForwardBackwardOutput(forwardOutputToWire(out));
 */
export function encodeForwardBackwardOutput(out: ForwardBackwardOutput): Uint8Array {
  const names = out.loss_fn_outputs.length === 0 ? [] : Object.keys(out.loss_fn_outputs[0] as object);
  const fields: Record<string, unknown> = {};
  for (const name of names) {
    const parts = out.loss_fn_outputs.map((record) => Float32Array.from((record[name] as TensorData).data));
    const offsets = new BigInt64Array(parts.length + 1);
    parts.forEach((p, i) => {
      offsets[i + 1] = (offsets[i] as bigint) + BigInt(p.byteLength);
    });
    fields[name] = { data: bytesOf(concatFloat(parts)), offsets: bytesOf(offsets), dtype: DTYPE.float32, trailing_shape: [] };
  }
  const message = {
    loss_fn_output_type: out.loss_fn_output_type,
    loss_fn_outputs: out.loss_fn_outputs.length === 0 ? [] : [{ type_tag: out.loss_fn_output_type, fields, num_datums: out.loss_fn_outputs.length }],
    metrics: out.metrics,
  };
  const type = tinkerMessage('ForwardBackwardOutput');
  return type.encode(type.fromObject(message)).finish();
}

/**
 * Decodes `ForwardBackwardOutput` bytes into the JSON shape (as the SDK reads them: per datum, per field).
 * @example decodeForwardBackwardOutput(bytes).loss_fn_outputs[0].logprobs.data
 */
export function decodeForwardBackwardOutput(bytes: Uint8Array): ForwardBackwardOutput {
  const type = tinkerMessage('ForwardBackwardOutput');
  const raw = type.toObject(type.decode(bytes), { longs: Number, enums: Number, defaults: true, arrays: true, objects: true });
  const outputs: Array<Record<string, TensorData>> = [];
  for (const record of raw.loss_fn_outputs as Array<{ fields: Record<string, { data: Uint8Array; offsets: Uint8Array; dtype: number }>; num_datums: number }>) {
    const start = outputs.length;
    for (let i = 0; i < record.num_datums; i++) outputs.push({});
    for (const [name, bt] of Object.entries(record.fields)) {
      if (bt.dtype !== DTYPE.float32) throw InvalidArgumentError.format(`loss_fn_outputs.${name}.dtype`, `only float32 is read here, got ${bt.dtype}`);
      const values = new Float32Array(aligned(bt.data));
      const offsets = new BigInt64Array(aligned(bt.offsets));
      for (let i = 0; i + 1 < offsets.length; i++) {
        const part = Array.from(values.subarray(Number(offsets[i]) / 4, Number(offsets[i + 1]) / 4));
        (outputs[start + i] as Record<string, TensorData>)[name] = { data: part, dtype: 'float32', shape: [part.length] };
      }
    }
  }
  return { loss_fn_output_type: raw.loss_fn_output_type as string, loss_fn_outputs: outputs, metrics: raw.metrics as Record<string, number> };
}

/**
 * Encodes an engine sampling result as `SampleResponse` bytes.
 * @example const bytes = encodeSampleResponse(result);
 */
export function encodeSampleResponse(result: EngineSampleResult): Uint8Array {
  const message: Record<string, unknown> = {
    sequences: result.sequences.map((s) => ({ stop_reason: STOP_REASON[s.stopReason], tokens: bytesOf(Int32Array.from(s.tokens)), logprobs: bytesOf(Float32Array.from(s.logprobs)) })),
    prompt_cache_hit_tokens: 0,
  };
  if (result.promptLogprobs !== null) message.prompt_logprobs = bytesOf(Float32Array.from(result.promptLogprobs));
  const type = tinkerMessage('SampleResponse');
  return type.encode(type.fromObject(message)).finish();
}

/**
 * Decodes `SampleResponse` bytes (as the SDK reads them).
 * @example decodeSampleResponse(bytes).sequences[0].tokens
 */
export function decodeSampleResponse(bytes: Uint8Array): EngineSampleResult {
  const type = tinkerMessage('SampleResponse');
  const msg = type.decode(bytes) as protobuf.Message & { sequences: Array<{ stop_reason: number; tokens: Uint8Array; logprobs?: Uint8Array }>; prompt_logprobs?: Uint8Array };
  // proto3 `optional`: present only when the field was on the wire (an own property once decoded)
  const hasPrompt = Object.hasOwn(msg, 'prompt_logprobs') && msg.prompt_logprobs !== null;
  return {
    sequences: msg.sequences.map((s) => ({
      tokens: new Int32Array(aligned(s.tokens)),
      logprobs: s.logprobs === undefined ? new Float32Array(0) : new Float32Array(aligned(s.logprobs)),
      stopReason: s.stop_reason === STOP_REASON.stop ? 'stop' : 'length',
    })),
    promptLogprobs: hasPrompt && msg.prompt_logprobs !== undefined ? new Float32Array(aligned(msg.prompt_logprobs)) : null,
  };
}

function chunkFromProto(c: Record<string, unknown>, field: string): Datum['model_input']['chunks'][number] {
  const text = c.encoded_text as { tokens: Uint8Array } | undefined;
  if (c.chunk === 'encoded_text' && text !== undefined) return { type: 'encoded_text', tokens: Array.from(new Int32Array(aligned(text.tokens))) };
  if (c.chunk === 'image') return { type: 'image', data: '', format: String((c.image as { format?: string }).format ?? '') };
  if (c.chunk === 'dmel') return { type: 'dmel' };
  throw InvalidArgumentError.format(field, 'empty chunk');
}

function tensorFromProto(t: Record<string, unknown>, field: string): TensorData {
  const dtype = t.dtype as number;
  const shape = (t.shape as number[]).length > 0 ? (t.shape as number[]) : null;
  const wireDtype = dtype === DTYPE.int64 || dtype === DTYPE.int32 ? 'int64' : 'float32';
  if (t.encoding === 'sparse_csr') {
    const s = t.sparse_csr as { values: Uint8Array; crow_indices: Uint8Array; col_indices: Uint8Array };
    return { data: valuesOf(s.values, dtype, field), dtype: wireDtype, shape, sparse_crow_indices: int64s(s.crow_indices), sparse_col_indices: int64s(s.col_indices) };
  }
  return { data: valuesOf((t.dense as Uint8Array | undefined) ?? new Uint8Array(0), dtype, field), dtype: wireDtype, shape };
}

function tensorToProto(t: TensorData): Record<string, unknown> {
  const dtype = t.dtype === 'int64' ? DTYPE.int64 : DTYPE.float32;
  const values = (v: number[]) => bytesOf(t.dtype === 'int64' ? BigInt64Array.from(v, (x) => BigInt(x)) : Float32Array.from(v));
  const out: Record<string, unknown> = { dtype, shape: t.shape ?? [t.data.length] };
  if (t.sparse_crow_indices !== null && t.sparse_crow_indices !== undefined) {
    out.sparse_csr = { values: values(t.data), crow_indices: bytesOf(BigInt64Array.from(t.sparse_crow_indices, (x) => BigInt(x))), col_indices: bytesOf(BigInt64Array.from(t.sparse_col_indices ?? [], (x) => BigInt(x))) };
  } else out.dense = values(t.data);
  return out;
}

function valuesOf(bytes: Uint8Array, dtype: number, field: string): number[] {
  const buf = aligned(bytes);
  if (dtype === DTYPE.float32) return Array.from(new Float32Array(buf));
  if (dtype === DTYPE.int64) return Array.from(new BigInt64Array(buf), (x) => Number(x));
  if (dtype === DTYPE.int32) return Array.from(new Int32Array(buf));
  if (dtype === DTYPE.bfloat16) return Array.from(new Uint16Array(buf), (h) => new Float32Array(new Uint32Array([h << 16]).buffer)[0] as number);
  throw InvalidArgumentError.format(`${field}.dtype`, `unknown dtype ${dtype}`);
}

function int64s(bytes: Uint8Array): number[] {
  return Array.from(new BigInt64Array(aligned(bytes)), (x) => Number(x));
}

/** A copy of `bytes` in a fresh buffer (typed-array views need aligned offsets). */
function aligned(bytes: Uint8Array): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}

function bytesOf(values: Int32Array | Float32Array | BigInt64Array): Uint8Array {
  return new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
}

function concatFloat(parts: readonly Float32Array[]): Float32Array {
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
