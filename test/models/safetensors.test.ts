import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CheckpointError } from '../../src/core/errors.js';
import { decodeSafetensors, encodeSafetensors, readSafetensors, toBfloat16, toFloat16, writeSafetensors } from '../../src/models/safetensors.js';

/** Builds a file from a header object (or raw header text) and a data buffer, unpadded. */
function build(header: unknown, data: number[] = [], rawHeader?: string): Uint8Array {
  const json = new TextEncoder().encode(rawHeader ?? JSON.stringify(header));
  const out = new Uint8Array(8 + json.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
  out.set(json, 8);
  out.set(data, 8 + json.length);
  return out;
}

function expectCheckpointError(fn: () => unknown, pattern: RegExp): void {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(CheckpointError);
  expect((caught as Error).message).toMatch(pattern);
}

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe('safetensors', () => {
  it('round-trips F32, I32 and U8 tensors and metadata through a file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'turnwise-st-'));
    dirs.push(dir);
    const path = join(dir, 'model.safetensors');
    const tensors = {
      'h.0.attn.w': { dtype: 'F32' as const, shape: [3, 2], data: new Float32Array([1.5, -2, 3.25, 0, -0, 1e-30]) },
      ids: { dtype: 'I32' as const, shape: [4], data: new Int32Array([-2147483648, 0, 7, 2147483647]) },
      mask: { dtype: 'U8' as const, shape: [1, 3], data: new Uint8Array([0, 1, 255]) },
      empty: { dtype: 'F32' as const, shape: [0, 4], data: new Float32Array(0) },
      scalar: { dtype: 'F32' as const, shape: [], data: new Float32Array([42]) },
    };
    await writeSafetensors(path, tensors, { format: 'pt', step: '12' });
    const back = await readSafetensors(path);
    expect(back.metadata).toEqual({ format: 'pt', step: '12' });
    expect(Object.keys(back.tensors).sort()).toEqual(Object.keys(tensors).sort());
    for (const [name, t] of Object.entries(tensors)) {
      const got = back.tensors[name];
      expect(got.dtype, name).toBe(t.dtype);
      expect(got.shape, name).toEqual(t.shape);
      expect(got.data.constructor, name).toBe(t.data.constructor);
      expect(Array.from(got.data), name).toEqual(Array.from(t.data));
    }
  });

  it('writes a 2x2 F32 tensor byte for byte as the format specifies', () => {
    const bytes = encodeSafetensors({ t: { dtype: 'F32', shape: [2, 2], data: new Float32Array([1, 2, 3, 4]) } });
    const json = '{"t":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}}'; // 57 bytes
    expect(json.length).toBe(57);
    const expected = [
      ...[64, 0, 0, 0, 0, 0, 0, 0], // u64 LE header length: 57 padded to 64
      ...Array.from(json, (c) => c.charCodeAt(0)),
      ...new Array(7).fill(0x20), // space padding so the data starts 8-byte aligned
      ...[0x00, 0x00, 0x80, 0x3f], // 1.0f LE
      ...[0x00, 0x00, 0x00, 0x40], // 2.0f
      ...[0x00, 0x00, 0x40, 0x40], // 3.0f
      ...[0x00, 0x00, 0x80, 0x40], // 4.0f
    ];
    expect(Array.from(bytes)).toEqual(expected);
  });

  it('pads the header with spaces to 8 bytes and aligns every tensor without holes', () => {
    const bytes = encodeSafetensors(
      {
        a: { dtype: 'U8', shape: [3], data: new Uint8Array([1, 2, 3]) },
        b: { dtype: 'F32', shape: [1], data: new Float32Array([5]) },
      },
      { note: 'x' },
    );
    const n = Number(new DataView(bytes.buffer).getBigUint64(0, true));
    expect(n % 8).toBe(0);
    const text = new TextDecoder().decode(bytes.subarray(8, 8 + n));
    expect(text.trimEnd().length).toBeLessThanOrEqual(n);
    expect(text.slice(text.trimEnd().length)).toMatch(/^ *$/);
    const header = JSON.parse(text);
    expect(Object.keys(header)).toEqual(['__metadata__', 'a', 'b']); // keys in name order
    expect(header.b.data_offsets).toEqual([0, 4]); // the 4-byte dtype first, so it stays aligned
    expect(header.a.data_offsets).toEqual([4, 7]);
  });

  it('reads F16 as F32 and I64 as I32', () => {
    // F16: 1.0 = 0x3c00, -2.5 = 0xc100, 65504 = 0x7bff, smallest subnormal = 0x0001.
    const f16 = [0x00, 0x3c, 0x00, 0xc1, 0xff, 0x7b, 0x01, 0x00];
    const i64 = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 5, 0, 0, 0, 0, 0, 0, 0]; // -1, 5
    const file = decodeSafetensors(
      build({ h: { dtype: 'F16', shape: [4], data_offsets: [0, 8] }, l: { dtype: 'I64', shape: [2], data_offsets: [8, 24] } }, [...f16, ...i64]),
    );
    expect(file.tensors.h.dtype).toBe('F32');
    expect(Array.from(file.tensors.h.data)).toEqual([1, -2.5, 65504, 2 ** -24]);
    expect(file.tensors.l.dtype).toBe('I32');
    expect(Array.from(file.tensors.l.data)).toEqual([-1, 5]);
    expect(file.metadata).toEqual({});
  });

  it('reads BF16 as F32, exactly (the upper 16 bits of a float32)', () => {
    // BF16: 1.0 = 0x3f80, -2.5 = 0xc020, 3.140625 = 0x4049, the smallest subnormal = 0x0001, -inf = 0xff80.
    const bf16 = [0x80, 0x3f, 0x20, 0xc0, 0x49, 0x40, 0x01, 0x00, 0x80, 0xff];
    const file = decodeSafetensors(build({ w: { dtype: 'BF16', shape: [5], data_offsets: [0, 10] } }, bf16));
    expect(file.tensors.w.dtype).toBe('F32');
    expect(Array.from(file.tensors.w.data)).toEqual([1, -2.5, 3.140625, 2 ** -133, Number.NEGATIVE_INFINITY]);
  });

  describe('rejects corrupt input with a message naming the fault', () => {
    const ok = { t: { dtype: 'F32', shape: [1], data_offsets: [0, 4] } };
    it('a file shorter than 8 bytes', () => expectCheckpointError(() => decodeSafetensors(new Uint8Array(5)), /shorter than the 8-byte/));
    it('a header length beyond the file', () => {
      const bytes = build(ok, [0, 0, 0, 0]);
      new DataView(bytes.buffer).setBigUint64(0, 10_000n, true);
      expectCheckpointError(() => decodeSafetensors(bytes), /header length 10000 is out of bounds/);
    });
    it('a huge header length', () => {
      const bytes = new Uint8Array(16);
      new DataView(bytes.buffer).setBigUint64(0, 2n ** 63n, true);
      expectCheckpointError(() => decodeSafetensors(bytes), /out of bounds/);
    });
    it('a header that is not JSON', () => expectCheckpointError(() => decodeSafetensors(build(null, [], '{"t": [1,')), /not valid UTF-8 JSON/));
    it('an unsupported dtype', () =>
      expectCheckpointError(() => decodeSafetensors(build({ t: { dtype: 'F8_E4M3', shape: [1], data_offsets: [0, 1] } }, [0])), /tensor 't': unsupported dtype "F8_E4M3"/));
    it('offsets outside the buffer', () =>
      expectCheckpointError(() => decodeSafetensors(build({ t: { dtype: 'F32', shape: [1], data_offsets: [0, 8] } }, [0, 0, 0, 0])), /tensor 't': data_offsets \[0, 8\] are outside/));
    it('a shape that does not match the byte span', () =>
      expectCheckpointError(() => decodeSafetensors(build({ w: { dtype: 'F32', shape: [2, 2], data_offsets: [0, 8] } }, new Array(8).fill(0))), /tensor 'w': shape \[2,2\] x F32 needs 16 bytes but data_offsets span 8/));
    it('overlapping tensors', () =>
      expectCheckpointError(
        () =>
          decodeSafetensors(
            build({ a: { dtype: 'U8', shape: [4], data_offsets: [0, 4] }, b: { dtype: 'U8', shape: [2], data_offsets: [2, 4] } }, [1, 2, 3, 4]),
          ),
        /tensor '(a|b)'.*overlap tensor '(a|b)'/,
      ));
    it('a hole between tensors', () =>
      expectCheckpointError(
        () => decodeSafetensors(build({ a: { dtype: 'U8', shape: [1], data_offsets: [0, 1] }, b: { dtype: 'U8', shape: [1], data_offsets: [2, 3] } }, [1, 2, 3])),
        /tensor 'b': 1-byte hole/,
      ));
    it('trailing bytes owned by no tensor', () => expectCheckpointError(() => decodeSafetensors(build(ok, [0, 0, 0, 0, 9])), /1 bytes not owned/));
    it('non-string metadata', () => expectCheckpointError(() => decodeSafetensors(build({ __metadata__: { step: 3 }, ...ok }, [0, 0, 0, 0])), /__metadata__ 'step' must be a string/));
    it('an I64 value that does not fit in Int32', () =>
      expectCheckpointError(
        () => decodeSafetensors(build({ big: { dtype: 'I64', shape: [1], data_offsets: [0, 8] } }, [0, 0, 0, 0, 1, 0, 0, 0])),
        /tensor 'big': I64 value 4294967296 at index 0 does not fit/,
      ));
  });

  describe('refuses to write inconsistent tensors', () => {
    it('data of the wrong class for the dtype', () =>
      expectCheckpointError(() => encodeSafetensors({ w: { dtype: 'F32', shape: [2], data: new Int32Array(2) } }), /tensor 'w': dtype F32 needs a Float32Array, got Int32Array/));
    it('a shape that does not match the data length', () =>
      expectCheckpointError(() => encodeSafetensors({ w: { dtype: 'U8', shape: [2, 2], data: new Uint8Array(3) } }), /tensor 'w': shape \[2,2\] has 4 elements but data has 3/));
    it('the reserved name __metadata__', () =>
      expectCheckpointError(() => encodeSafetensors({ __metadata__: { dtype: 'U8', shape: [0], data: new Uint8Array(0) } }), /invalid tensor name/));
  });

  it('names the path when a file cannot be read', async () => {
    await expect(readSafetensors('/nonexistent/turnwise/x.safetensors')).rejects.toThrow(/checkpoint '\/nonexistent\/turnwise\/x.safetensors': cannot read/);
  });
});

describe('BF16 and F16 writing', () => {
  it('rounds to nearest even as PyTorch casts, and reads back as those values', () => {
    // 1 + 2^-8 lies halfway between two bfloat16 values: ties go to the even one (1); 1 + 3·2^-8 rounds up.
    const values = Float32Array.of(1, -2.5, 1 + 2 ** -8, 1 + 3 * 2 ** -8, 3.4e38, Number.NaN, 0);
    const bf16 = toBfloat16(values);
    expect(Array.from(bf16.slice(0, 4))).toEqual([0x3f80, 0xc020, 0x3f80, 0x3f82]);
    const back = decodeSafetensors(encodeSafetensors({ w: { dtype: 'BF16', shape: [values.length], data: bf16 } })).tensors.w?.data as Float32Array;
    expect(Array.from(back.slice(0, 4))).toEqual([1, -2.5, 1, 1 + 2 ** -6]);
    expect(back[4]).toBe(Number.POSITIVE_INFINITY); // past bfloat16's largest finite value, as torch rounds it
    expect(Number.isNaN(back[5])).toBe(true);
    // F16: normal, subnormal, overflow to infinity, ties to even.
    const half = Float32Array.of(1, 65504, 65520, 2 ** -24, 2 ** -25, 1 + 2 ** -11, -0.5);
    const f16 = toFloat16(half);
    const read = decodeSafetensors(encodeSafetensors({ w: { dtype: 'F16', shape: [half.length], data: f16 } })).tensors.w?.data as Float32Array;
    expect(Array.from(read)).toEqual([1, 65504, Number.POSITIVE_INFINITY, 2 ** -24, 0, 1, -0.5]);
  });
});

