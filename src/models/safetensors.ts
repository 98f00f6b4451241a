/**
 * The safetensors format (https://github.com/huggingface/safetensors), read and written in plain
 * TypeScript so checkpoints open in PyTorch/NumPy (`safetensors.numpy.load_file`) and back.
 *
 * Layout: 8-byte little-endian u64 header length N; N bytes of UTF-8 JSON
 * `{ "__metadata__"?: {str: str}, name: { dtype, shape, data_offsets: [begin, end] } }`, padded
 * with spaces; then the byte buffer, little-endian, offsets relative to its start. As the Rust
 * reference does, the writer pads the header so the buffer starts 8-byte aligned and lays tensors
 * out by dtype size (largest first), then by name, so every tensor is aligned with no holes; the
 * header's keys are in name order. The reader accepts any order but, like the reference, rejects
 * overlaps, holes and a buffer that is not fully covered.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { CheckpointError } from '../core/errors.js';

/** A tensor as stored: dtype tag, shape and row-major little-endian data. */
export type SafeTensor =
  | { readonly dtype: 'F32'; readonly shape: number[]; readonly data: Float32Array }
  | { readonly dtype: 'I32'; readonly shape: number[]; readonly data: Int32Array }
  | { readonly dtype: 'U8'; readonly shape: number[]; readonly data: Uint8Array };

/**
 * What the writer accepts: the loose form of {@link SafeTensor}; dtype and array class are checked
 * at run time (a mismatch is a CheckpointError naming the tensor).
 */
export interface TensorRecord {
  /** `BF16` and `F16` take their 16-bit patterns as a `Uint16Array` (see {@link toBfloat16}, {@link toFloat16}). */
  readonly dtype: 'F32' | 'I32' | 'U8' | 'BF16' | 'F16';
  readonly shape: number[];
  readonly data: Float32Array | Int32Array | Uint8Array | Uint16Array;
}

/** A decoded file: tensors by name and the optional string metadata (empty when absent). */
export interface SafetensorsFile {
  readonly tensors: Record<string, SafeTensor>;
  readonly metadata: Record<string, string>;
}

/** Largest header accepted, as in the Rust reference (guards against absurd allocations). */
export const MAX_HEADER_BYTES = 100_000_000;

const WRITE_SIZES = { F32: 4, I32: 4, BF16: 2, F16: 2, U8: 1 } as const;
/** Dtypes the reader accepts, with their byte size; F16, BF16 and I64 are converted on read. */
const READ_SIZES: Record<string, number> = { F32: 4, F16: 2, BF16: 2, I32: 4, I64: 8, U8: 1 };
const ARRAY_TYPES = { F32: Float32Array, I32: Int32Array, BF16: Uint16Array, F16: Uint16Array, U8: Uint8Array } as const;

const product = (shape: readonly number[]) => shape.reduce((p, d) => p * d, 1);

/**
 * Encodes tensors (and optional string metadata) into safetensors bytes.
 * @throws CheckpointError naming the tensor whose dtype, shape or data is inconsistent.
 * @example
 * const bytes = encodeSafetensors({ w: { dtype: 'F32', shape: [2], data: new Float32Array([1, 2]) } });
 */
export function encodeSafetensors(
  tensors: Record<string, TensorRecord>,
  metadata?: Record<string, string>,
  location = '<memory>',
): Uint8Array {
  const names = Object.keys(tensors).sort();
  for (const name of names) checkForWrite(name, tensors[name], location);
  const layout = [...names].sort((x, y) => WRITE_SIZES[tensors[y].dtype] - WRITE_SIZES[tensors[x].dtype] || (x < y ? -1 : 1));
  const offsets = new Map<string, [number, number]>();
  let end = 0;
  for (const name of layout) {
    const begin = end;
    end += tensors[name].data.byteLength;
    offsets.set(name, [begin, end]);
  }
  const header: Record<string, unknown> = {};
  if (metadata !== undefined && Object.keys(metadata).length > 0) {
    for (const [k, v] of Object.entries(metadata)) {
      if (typeof v !== 'string') throw new CheckpointError(location, `metadata '${k}' must be a string, got ${typeof v}`);
    }
    header.__metadata__ = metadata;
  }
  for (const name of names) {
    const t = tensors[name];
    header[name] = { dtype: t.dtype, shape: t.shape, data_offsets: offsets.get(name) };
  }
  let json = new TextEncoder().encode(JSON.stringify(header));
  const padded = Math.ceil(json.length / 8) * 8; // buffer starts 8-aligned, as the reference pads
  if (padded !== json.length) {
    const spaced = new Uint8Array(padded).fill(0x20);
    spaced.set(json);
    json = spaced;
  }
  const out = new Uint8Array(8 + json.length + end);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
  out.set(json, 8);
  const base = 8 + json.length;
  for (const name of names) {
    const { data } = tensors[name];
    // The host is little-endian on every platform Node supports here; copy the raw bytes.
    out.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), base + offsets.get(name)![0]);
  }
  return out;
}

function checkForWrite(name: string, t: TensorRecord | undefined, location: string): void {
  if (name === '' || name === '__metadata__') throw new CheckpointError(location, `invalid tensor name ${JSON.stringify(name)}`);
  if (t === undefined || !(t.dtype in WRITE_SIZES)) {
    throw new CheckpointError(location, `tensor '${name}': dtype must be F32, BF16, F16, I32 or U8, got ${String(t?.dtype)}`);
  }
  if (!Array.isArray(t.shape) || !t.shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
    throw new CheckpointError(location, `tensor '${name}': shape must be non-negative integers, got ${JSON.stringify(t.shape)}`);
  }
  if (!(t.data instanceof ARRAY_TYPES[t.dtype])) {
    throw new CheckpointError(location, `tensor '${name}': dtype ${t.dtype} needs a ${ARRAY_TYPES[t.dtype].name}, got ${t.data?.constructor?.name}`);
  }
  if (t.data.length !== product(t.shape)) {
    throw new CheckpointError(location, `tensor '${name}': shape [${t.shape}] has ${product(t.shape)} elements but data has ${t.data.length}`);
  }
}

interface HeaderEntry {
  readonly name: string;
  readonly dtype: string;
  readonly shape: number[];
  readonly begin: number;
  readonly end: number;
}

/**
 * Decodes safetensors bytes. F16 and BF16 become F32 (exactly: both are subsets of float32); I64
 * becomes I32 when every value fits.
 * @throws CheckpointError naming the tensor at fault (bad dtype, shape, offsets, overlap) or the
 * header problem (length out of bounds, not JSON).
 * @example
 * const { tensors, metadata } = decodeSafetensors(bytes);
 */
export function decodeSafetensors(bytes: Uint8Array, location = '<memory>'): SafetensorsFile {
  if (bytes.length < 8) throw new CheckpointError(location, `file is ${bytes.length} bytes, shorter than the 8-byte header length`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = view.getBigUint64(0, true);
  if (n < 2n || n > BigInt(MAX_HEADER_BYTES) || n > BigInt(bytes.length - 8)) {
    throw new CheckpointError(location, `header length ${n} is out of bounds (2..${Math.min(MAX_HEADER_BYTES, bytes.length - 8)} for a ${bytes.length}-byte file)`);
  }
  const headerLen = Number(n);
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(8, 8 + headerLen)));
  } catch (err) {
    throw new CheckpointError(location, `header is not valid UTF-8 JSON: ${(err as Error).message}`, { cause: err });
  }
  if (header === null || typeof header !== 'object' || Array.isArray(header)) {
    throw new CheckpointError(location, 'header must be a JSON object');
  }
  const buffer = bytes.subarray(8 + headerLen);
  const metadata = parseMetadata((header as Record<string, unknown>).__metadata__, location);
  const entries: HeaderEntry[] = [];
  for (const [name, raw] of Object.entries(header)) {
    if (name !== '__metadata__') entries.push(parseEntry(name, raw, buffer.length, location));
  }
  checkCoverage(entries, buffer.length, location);
  const tensors: Record<string, SafeTensor> = {};
  for (const e of entries) tensors[e.name] = convert(e, buffer.subarray(e.begin, e.end), location);
  return { tensors, metadata };
}

function parseMetadata(raw: unknown, location: string): Record<string, string> {
  if (raw === undefined) return {};
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new CheckpointError(location, '__metadata__ must be an object of strings');
  for (const [k, v] of Object.entries(raw)) {
    if (typeof v !== 'string') throw new CheckpointError(location, `__metadata__ '${k}' must be a string, got ${JSON.stringify(v)}`);
  }
  return { ...(raw as Record<string, string>) };
}

function parseEntry(name: string, raw: unknown, bufferLength: number, location: string): HeaderEntry {
  const fail = (detail: string) => new CheckpointError(location, `tensor '${name}': ${detail}`);
  if (raw === null || typeof raw !== 'object') throw fail('header entry must be an object');
  const { dtype, shape, data_offsets: offsets } = raw as Record<string, unknown>;
  if (typeof dtype !== 'string' || !(dtype in READ_SIZES)) {
    throw fail(`unsupported dtype ${JSON.stringify(dtype)} (supported: ${Object.keys(READ_SIZES).join(', ')})`);
  }
  if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
    throw fail(`shape must be an array of non-negative integers, got ${JSON.stringify(shape)}`);
  }
  if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every((o) => Number.isSafeInteger(o) && o >= 0)) {
    throw fail(`data_offsets must be [begin, end] non-negative integers, got ${JSON.stringify(offsets)}`);
  }
  const [begin, end] = offsets as [number, number];
  if (begin > end || end > bufferLength) throw fail(`data_offsets [${begin}, ${end}] are outside the ${bufferLength}-byte data buffer`);
  const expected = product(shape) * READ_SIZES[dtype];
  if (end - begin !== expected) throw fail(`shape [${shape}] x ${dtype} needs ${expected} bytes but data_offsets span ${end - begin}`);
  return { name, dtype, shape: shape as number[], begin, end };
}

/** Offsets must tile the buffer exactly: no overlap, no hole, nothing left over (as the reference). */
function checkCoverage(entries: HeaderEntry[], bufferLength: number, location: string): void {
  const sorted = [...entries].sort((x, y) => x.begin - y.begin || x.end - y.end);
  let cursor = 0;
  let previous: HeaderEntry | null = null;
  for (const e of sorted) {
    if (e.begin < cursor) {
      throw new CheckpointError(location, `tensor '${e.name}': data_offsets [${e.begin}, ${e.end}] overlap tensor '${previous?.name}' [${previous?.begin}, ${previous?.end}]`);
    }
    if (e.begin > cursor) throw new CheckpointError(location, `tensor '${e.name}': ${e.begin - cursor}-byte hole before its data at offset ${cursor}`);
    cursor = e.end;
    previous = e;
  }
  if (cursor !== bufferLength) throw new CheckpointError(location, `data buffer has ${bufferLength - cursor} bytes not owned by any tensor`);
}

function convert(e: HeaderEntry, raw: Uint8Array, location: string): SafeTensor {
  const count = product(e.shape);
  // new Uint8Array(raw) copies into a fresh, aligned ArrayBuffer (offsets in a file need not be
  // aligned). Not raw.slice(): on a Node Buffer that is a view into a shared pool.
  const copy = () => new Uint8Array(raw).buffer;
  switch (e.dtype) {
    case 'F32':
      return { dtype: 'F32', shape: e.shape, data: new Float32Array(copy(), 0, count) };
    case 'I32':
      return { dtype: 'I32', shape: e.shape, data: new Int32Array(copy(), 0, count) };
    case 'U8':
      return { dtype: 'U8', shape: e.shape, data: new Uint8Array(raw) };
    case 'F16': {
      const dv = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
      const data = new Float32Array(count);
      for (let i = 0; i < count; i++) data[i] = halfToFloat(dv.getUint16(2 * i, true));
      return { dtype: 'F32', shape: e.shape, data };
    }
    case 'BF16': {
      // bfloat16 is the upper half of a float32: shift the 16 bits into place.
      const halves = new Uint16Array(new Uint8Array(raw).buffer, 0, count);
      const bits = new Uint32Array(count);
      for (let i = 0; i < count; i++) bits[i] = halves[i] << 16;
      return { dtype: 'F32', shape: e.shape, data: new Float32Array(bits.buffer) };
    }
    default: {
      // I64 (the only other accepted dtype): narrow to Int32, refusing values that do not fit.
      const dv = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
      const data = new Int32Array(count);
      for (let i = 0; i < count; i++) {
        const v = dv.getBigInt64(8 * i, true);
        if (v < -2147483648n || v > 2147483647n) {
          throw new CheckpointError(location, `tensor '${e.name}': I64 value ${v} at index ${i} does not fit in Int32`);
        }
        data[i] = Number(v);
      }
      return { dtype: 'I32', shape: e.shape, data };
    }
  }
}

/**
 * float32 values as bfloat16 bit patterns, rounded to nearest even as PyTorch's `.to(torch.bfloat16)`
 * rounds (NaN stays a quiet NaN): what a BF16 safetensors file stores.
 * @example toBfloat16(Float32Array.of(1, -2.5)) // Uint16Array [0x3f80, 0xc020]
 */
export function toBfloat16(values: Float32Array): Uint16Array {
  const bits = new Uint32Array(values.buffer, values.byteOffset, values.length);
  const out = new Uint16Array(values.length);
  for (let i = 0; i < bits.length; i++) {
    const b = bits[i];
    if ((b & 0x7fffffff) > 0x7f800000) out[i] = (b >>> 16) | 0x40; // NaN
    else out[i] = (b + 0x7fff + ((b >>> 16) & 1)) >>> 16;
  }
  return out;
}

/**
 * float32 values as IEEE binary16 bit patterns, rounded to nearest even (overflow to infinity,
 * subnormals kept), as PyTorch's `.to(torch.float16)`.
 * @example toFloat16(Float32Array.of(1, 65520)) // Uint16Array [0x3c00, 0x7c00]
 */
export function toFloat16(values: Float32Array): Uint16Array {
  const bits = new Uint32Array(values.buffer, values.byteOffset, values.length);
  const out = new Uint16Array(values.length);
  for (let i = 0; i < bits.length; i++) {
    const b = bits[i];
    const sign = (b >>> 16) & 0x8000;
    const exp = (b >>> 23) & 0xff;
    const mant = b & 0x7fffff;
    if (exp === 0xff) {
      out[i] = sign | 0x7c00 | (mant === 0 ? 0 : 0x200);
      continue;
    }
    const e = exp - 127 + 15;
    if (e >= 0x1f) {
      out[i] = sign | 0x7c00;
    } else if (e <= 0) {
      if (e < -10) {
        out[i] = sign;
        continue;
      }
      // Subnormal: shift the mantissa (with its implicit 1) into place, rounding to nearest even.
      const m = mant | 0x800000;
      const shift = 14 - e;
      const half = 1 << (shift - 1);
      const rest = m & ((1 << shift) - 1);
      let h = m >>> shift;
      if (rest > half || (rest === half && (h & 1) === 1)) h++;
      out[i] = sign | h;
    } else {
      let h = (e << 10) | (mant >>> 13);
      const rest = mant & 0x1fff;
      if (rest > 0x1000 || (rest === 0x1000 && (h & 1) === 1)) h++; // a carry into the exponent is the right rounding
      out[i] = sign | h;
    }
  }
  return out;
}

/** IEEE 754 binary16 to number, including subnormals, infinities and NaN. */
function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 0x1f) return frac === 0 ? sign * Number.POSITIVE_INFINITY : Number.NaN;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

/**
 * Writes a safetensors file.
 * @throws CheckpointError naming the path and the tensor at fault.
 * @example
 * await writeSafetensors('run/ckpt/model.safetensors', { wte: { dtype: 'F32', shape: [256, 128], data } }, { step: '100' });
 */
export async function writeSafetensors(
  path: string,
  tensors: Record<string, TensorRecord>,
  metadata?: Record<string, string>,
): Promise<void> {
  const bytes = encodeSafetensors(tensors, metadata, path);
  try {
    await writeFile(path, bytes);
  } catch (err) {
    throw new CheckpointError(path, `cannot write: ${(err as Error).message}`, { cause: err });
  }
}

/**
 * Reads a safetensors file (see {@link decodeSafetensors} for conversions).
 * @throws CheckpointError naming the path, and the tensor at fault when there is one.
 * @example
 * const { tensors, metadata } = await readSafetensors('run/ckpt/model.safetensors');
 */
export async function readSafetensors(path: string): Promise<SafetensorsFile> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(path);
  } catch (err) {
    throw new CheckpointError(path, `cannot read: ${(err as Error).message}`, { cause: err });
  }
  return decodeSafetensors(bytes, path);
}
