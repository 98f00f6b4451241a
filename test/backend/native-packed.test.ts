import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.js';
import { nativeBlas } from '../../src/backend/native-blas.js';
import { ropeTable } from '../../src/models/transformer/layers.js';
import { ropePackedReference } from '../../src/models/transformer/packed-attention.js';
import { stridedCopyReference } from '../../src/backend/strided-copy.js';

// native/packed.c: the packed forward's RoPE and strided copies, natively. They must give the JS
// forms' results to the bit (the packed forward's logits do not change with the addon).

const { blas } = nativeBlas();
const bits = (a: Float32Array) => Array.from(new Uint32Array(a.buffer, a.byteOffset, a.length));
const randomFloats = (rng: Rng, n: number) => Float32Array.from({ length: n }, () => rng.normal() * 3);

describe.runIf(blas !== null)('native packed-forward helpers', () => {
  it('ropePacked gives the JS rotation to the bit, grouped-query heads and scattered positions', () => {
    const native = blas as NonNullable<typeof blas>;
    const rng = Rng.fromSeed(3);
    for (const [heads, kv, hd] of [[9, 3, 64], [4, 4, 16], [6, 2, 8]] as const) {
      const table = ropeTable(512, hd, 1e4);
      const positions = Int32Array.from({ length: 37 }, () => rng.int(512));
      const qkv = randomFloats(rng, positions.length * (heads + 2 * kv) * hd);
      const original = Float32Array.from(qkv);
      const want = Float32Array.from(qkv);
      ropePackedReference(want, positions, table, heads, hd, kv);
      native.ropePacked(qkv, positions, table.cos, table.sin, heads, kv, hd);
      expect(bits(qkv)).toEqual(bits(want));
      const v = (a: Float32Array) => a.subarray((heads + kv) * hd, (heads + 2 * kv) * hd); // token 0's values
      expect(v(qkv)).toEqual(v(original)); // values are not rotated
      expect(qkv.subarray(0, hd)).not.toEqual(original.subarray(0, hd)); // queries are
    }
  });

  it('ropePacked refuses a position past the tables and rows that do not fit qkv', () => {
    const native = blas as NonNullable<typeof blas>;
    const table = ropeTable(8, 4, 1e4);
    expect(() => native.ropePacked(new Float32Array(12), Int32Array.of(8), table.cos, table.sin, 1, 1, 4)).toThrow(/past the cos\/sin tables/);
    expect(() => native.ropePacked(new Float32Array(11), Int32Array.of(1), table.cos, table.sin, 1, 1, 4)).toThrow(/positions.length rows/);
  });

  it('stridedCopy moves the same blocks as the JS loop, and refuses blocks past an array', () => {
    const native = blas as NonNullable<typeof blas>;
    const rng = Rng.fromSeed(5);
    const src = randomFloats(rng, 960 * 7);
    const got = randomFloats(rng, 9 * 7 * 64);
    const want = Float32Array.from(got);
    for (let head = 0; head < 9; head++) {
      native.stridedCopy(src, head * 64, 960, got, head * 7 * 64, 64, 7, 64);
      stridedCopyReference(src, head * 64, 960, want, head * 7 * 64, 64, 7, 64);
    }
    expect(bits(got)).toEqual(bits(want));
    expect(got.subarray(64, 128)).toEqual(src.subarray(960, 1024)); // head 0, token 1
    expect(() => native.stridedCopy(src, 0, 960, got, 0, 64, 8, 64)).toThrow(/past the end/);
    expect(() => native.stridedCopy(src, 0, 960, got, got.length - 63, 64, 1, 64)).toThrow(/past the end/);
  });
});
