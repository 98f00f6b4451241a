/**
 * The weights of a Hugging Face model folder: `model.safetensors`, or the shards a
 * `model.safetensors.index.json` names (`weight_map`: tensor -> file). F32, BF16 and F16 are read
 * as float32 (src/models/safetensors.ts); anything else is an error naming the tensor, and so is a
 * tensor holding NaN or ±Inf (`../finite.ts`). Every weight file must be a regular file: a directory
 * or a FIFO named `model.safetensors` is refused before it is opened (a FIFO would block forever).
 */
import { open, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { CheckpointError } from '../../core/errors.js';
import { nonRegularKind } from '../../core/file-kind.js';
import { assertFiniteTensor } from '../finite.js';
import { readSafetensors } from '../safetensors.js';
import type { NamedWeight } from '../transformer/weights.js';

/** The files a folder's weights live in, and their total size on disk. */
export interface WeightFiles {
  readonly files: readonly string[];
  readonly bytes: number;
  /** Stored dtype of each tensor (`F32`, `BF16`, `F16`), read from the headers. */
  readonly dtypes: ReadonlyMap<string, string>;
}

const INDEX = 'model.safetensors.index.json';
const SINGLE = 'model.safetensors';

/**
 * Finds the weight files of `folder` and reads their headers (not the data), so that memory can
 * be estimated before anything large is allocated.
 * @example const { files, bytes } = await weightFiles('models/SmolLM2-135M');
 */
export async function weightFiles(folder: string): Promise<WeightFiles> {
  const indexPath = join(folder, INDEX);
  let files: string[];
  await refuseNonRegular(indexPath);
  const index = await readFile(indexPath, 'utf8').catch(() => null);
  if (index !== null) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(index);
    } catch (err) {
      throw new CheckpointError(indexPath, `not valid JSON: ${(err as Error).message}`, { cause: err });
    }
    const map = (parsed as { weight_map?: unknown }).weight_map;
    if (map === null || typeof map !== 'object' || Array.isArray(map)) throw new CheckpointError(indexPath, "expected a 'weight_map' object of tensor -> file");
    const names = Object.values(map as Record<string, unknown>);
    if (!names.every((f) => typeof f === 'string' && f.length > 0 && !f.includes('/') && !f.includes('\\'))) {
      throw new CheckpointError(indexPath, 'weight_map values must be file names in the same folder');
    }
    files = [...new Set(names as string[])].sort();
  } else {
    files = [SINGLE];
  }
  let bytes = 0;
  const dtypes = new Map<string, string>();
  for (const file of files) {
    const path = join(folder, file);
    await refuseNonRegular(path);
    const info = await stat(path).catch((err: Error) => {
      throw new CheckpointError(path, index === null ? `no ${SINGLE} and no ${INDEX} in the folder` : `shard named by ${INDEX} is missing: ${err.message}`, { cause: err });
    });
    bytes += info.size;
    for (const [name, dtype] of await headerDtypes(path)) dtypes.set(name, dtype);
  }
  return { files, bytes, dtypes };
}

/**
 * Reads every tensor of the folder as float32, HF names and layout. With an index, a tensor the
 * index maps to one shard but that sits in another (or twice) is an error.
 * @example const weights = await readHfWeights('models/SmolLM2-135M'); weights.get('model.norm.weight')
 */
export async function readHfWeights(folder: string): Promise<Map<string, NamedWeight>> {
  const { files, dtypes } = await weightFiles(folder);
  const out = new Map<string, NamedWeight>();
  for (const file of files) {
    const path = join(folder, file);
    const { tensors } = await readSafetensors(path);
    for (const [name, tensor] of Object.entries(tensors)) {
      // The stored dtype, not the one it was read as (an I64 tensor is read as I32).
      if (tensor.dtype !== 'F32') throw new CheckpointError(path, `tensor '${name}' has dtype ${dtypes.get(name) ?? tensor.dtype}; weights must be F32, BF16 or F16`);
      if (out.has(name)) throw new CheckpointError(path, `tensor '${name}' appears in more than one shard`);
      assertFiniteTensor(path, name, tensor.data);
      out.set(name, { shape: [...tensor.shape], data: tensor.data });
    }
  }
  return out;
}

/** A weight file that exists but is a directory, a FIFO, … is refused before it is opened. */
async function refuseNonRegular(path: string): Promise<void> {
  const kind = await nonRegularKind(path);
  if (typeof kind === 'string') throw new CheckpointError(path, `is ${kind}, not a regular file`);
}

/** Each tensor's dtype from a safetensors header (reads only the header bytes). */
async function headerDtypes(path: string): Promise<Map<string, string>> {
  const handle = await open(path, 'r');
  try {
    const lengthBytes = Buffer.alloc(8);
    await handle.read(lengthBytes, 0, 8, 0);
    const length = Number(lengthBytes.readBigUInt64LE(0));
    if (!(length >= 2 && length <= 100_000_000)) throw new CheckpointError(path, `header length ${length} is out of bounds`);
    const header = Buffer.alloc(length);
    await handle.read(header, 0, length, 8);
    let parsed: Record<string, { dtype?: unknown }>;
    try {
      parsed = JSON.parse(header.toString('utf8'));
    } catch (err) {
      throw new CheckpointError(path, `header is not valid JSON: ${(err as Error).message}`, { cause: err });
    }
    const out = new Map<string, string>();
    for (const [name, entry] of Object.entries(parsed)) if (name !== '__metadata__') out.set(name, String(entry?.dtype));
    return out;
  } finally {
    await handle.close();
  }
}
