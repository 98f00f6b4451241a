/**
 * Weight files a model folder should not get away with: NaN or ±Inf tensors (F32 and BF16), an I64
 * tensor (reported by its stored dtype), a directory named model.safetensors. (A FIFO so named is in
 * test/e2e/hostile-model-folders.test.ts: making one takes `mkfifo`, a process.)
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CheckpointError } from '../../../src/core/errors.js';
import { Rng } from '../../../src/core/rng.js';
import { firstNonFinite } from '../../../src/models/finite.js';
import { readHfWeights } from '../../../src/models/hf/hf-weights.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-hostile-weights-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A safetensors file from raw tensors of any dtype (the writer under test only writes F32/I32/U8). */
function writeRaw(folder: string, tensors: Record<string, { dtype: string; shape: number[]; bytes: Uint8Array }>): void {
  mkdirSync(folder, { recursive: true });
  const header: Record<string, unknown> = {};
  let offset = 0;
  for (const [name, t] of Object.entries(tensors)) {
    header[name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + t.bytes.length] };
    offset += t.bytes.length;
  }
  const json = Buffer.from(JSON.stringify(header));
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(json.length));
  writeFileSync(join(folder, 'model.safetensors'), Buffer.concat([length, json, ...Object.values(tensors).map((t) => Buffer.from(t.bytes))]));
}

const f32 = (...values: number[]) => new Uint8Array(Float32Array.from(values).buffer);

async function refusal(folder: string): Promise<Error> {
  try {
    await readHfWeights(folder);
  } catch (error) {
    expect(error).toBeInstanceOf(CheckpointError);
    return error as Error;
  }
  throw new Error('expected readHfWeights to refuse the folder');
}

describe('readHfWeights on hostile weight files', () => {
  it('refuses an F32 tensor holding NaN, naming the file, the tensor and the index', async () => {
    const folder = join(dir, 'nan');
    writeRaw(folder, { 'model.norm.weight': { dtype: 'F32', shape: [4], bytes: f32(1, 1, Number.NaN, 1) }, 'lm_head.weight': { dtype: 'F32', shape: [2], bytes: f32(0, 0) } });
    expect((await refusal(folder)).message).toMatch(/nan\/model\.safetensors.*tensor 'model\.norm\.weight' holds 1 non-finite value \(the first, NaN, at index 2\)/);
  });

  it('refuses a BF16 tensor holding +Inf (read as float32, checked after)', async () => {
    const folder = join(dir, 'inf-bf16');
    // bfloat16 1.0 = 0x3f80, +Inf = 0x7f80.
    writeRaw(folder, { w: { dtype: 'BF16', shape: [3], bytes: new Uint8Array(Uint16Array.of(0x3f80, 0x7f80, 0x3f80).buffer) } });
    expect((await refusal(folder)).message).toMatch(/tensor 'w' holds 1 non-finite value \(the first, Infinity, at index 1\)/);
  });

  it('reports an I64 tensor as I64, not as the I32 it was read as', async () => {
    const folder = join(dir, 'i64');
    writeRaw(folder, { ids: { dtype: 'I64', shape: [2], bytes: new Uint8Array(BigInt64Array.of(1n, 2n).buffer) } });
    expect((await refusal(folder)).message).toMatch(/tensor 'ids' has dtype I64; weights must be F32, BF16 or F16/);
  });

  it('refuses a directory named model.safetensors as not a regular file (no bare EISDIR)', async () => {
    const folder = join(dir, 'is-dir');
    mkdirSync(join(folder, 'model.safetensors'), { recursive: true });
    expect((await refusal(folder)).message).toMatch(/is-dir\/model\.safetensors': is a directory, not a regular file/);
  });
});

describe('firstNonFinite', () => {
  const reference = (data: Float32Array): number => data.findIndex((x) => !Number.isFinite(x));

  it('finds what a plain findIndex finds, on seeded arrays of every length up to 40 with NaN, Inf and -Inf anywhere', () => {
    const rng = Rng.fromSeed(11);
    const specials = [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY];
    for (let length = 0; length <= 40; length++) {
      for (let trial = 0; trial < 5; trial++) {
        const data = new Float32Array(length).map(() => (rng.next() - 0.5) * 3e38);
        if (length > 0 && trial > 0) data[Math.floor(rng.next() * length)] = specials[trial % 3] as number;
        expect(firstNonFinite(data)).toBe(reference(data));
      }
    }
  });

  it('looks only at its view of a shared buffer', () => {
    const buffer = Float32Array.of(Number.NaN, 1, 2, 3, Number.NaN);
    expect(firstNonFinite(buffer.subarray(1, 4))).toBe(-1);
    expect(firstNonFinite(buffer.subarray(1))).toBe(3);
  });
});
