import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/core/errors.js';
import { Rng } from '../../src/core/rng.js';
import { tf } from '../../src/backend/tf.js';
import { KvCache } from '../../src/models/kv-cache.js';
import type { TransformerModel } from '../../src/models/transformer/model.js';
import { setCpuAttentionMaxQueries } from '../../src/models/transformer/cpu-attention.js';
import { attentionGroups } from '../../src/models/transformer/grouped-attention.js';
import { ropeTable } from '../../src/models/transformer/layers.js';
import { ropePackedInPlace } from '../../src/models/transformer/packed-attention.js';
import { randomSeq, tinyModel } from './transformer-fixtures.js';

// The packed ("varlen") inference path (issue #10 part F): ragged rows, each over its own one-row
// cache, must give the logits of the simple path (one uncached full forward per row) and of the
// padded `extend`, whatever the attention grouping and whichever attention kernel (JS or tfjs) runs.

let model: TransformerModel;
const V = 40;

beforeAll(async () => {
  await tf.setBackend('cpu');
  model = tinyModel(31, { maxContext: 96 });
});
afterAll(() => model.dispose());
afterEach(() => setCpuAttentionMaxQueries(4));

/** Cached prefix lengths (0 = empty cache: a prefill) and new-token counts of five ragged rows. */
const PAST = [0, 7, 0, 19, 3];
const NEW = [6, 1, 11, 4, 9];

function rowsOf(seed: number): { prefix: Int32Array[]; fresh: Int32Array[] } {
  const rng = Rng.fromSeed(seed);
  return { prefix: PAST.map((n) => randomSeq(rng, n)), fresh: NEW.map((n) => randomSeq(rng, n)) };
}

/** One-row caches holding each prefix, built through the padded `extend` (a cross-path check). */
function prefixCaches(prefix: readonly Int32Array[]): KvCache[] {
  return prefix.map((ids) => {
    const cache = model.createCache(1, Math.max(1, ids.length));
    if (ids.length > 0) model.extend(cache, ids, new Uint8Array(ids.length).fill(1), ids.length).dispose();
    return cache;
  });
}

/** The simple path: each row's whole sequence through one uncached forward; its last logits. */
function reference(sequences: readonly Int32Array[]): Float32Array[] {
  return sequences.map((ids) => {
    const logits = model.forwardLogits(ids, new Uint8Array(ids.length).fill(1), 1, ids.length);
    const all = logits.dataSync() as Float32Array;
    logits.dispose();
    return all.slice((ids.length - 1) * V, ids.length * V);
  });
}

function packedLogits(caches: KvCache[], tokens: Int32Array[], options?: { groupRatio?: number; maxScores?: number }): Float32Array[] {
  const out = model.extendPacked(caches, tokens, options);
  const data = out.dataSync() as Float32Array;
  out.dispose();
  return tokens.map((_, r) => data.slice(r * V, (r + 1) * V));
}

function maxDiff(a: readonly Float32Array[], b: readonly Float32Array[]): number {
  let m = 0;
  a.forEach((row, r) => {
    for (let i = 0; i < row.length; i++) m = Math.max(m, Math.abs(row[i] - (b[r] as Float32Array)[i]));
  });
  return m;
}

const concat = (a: Int32Array, b: Int32Array) => Int32Array.from([...a, ...b]);

describe('TransformerModel.extendPacked', () => {
  it('matches one uncached forward per row for ragged rows mixing empty and cached caches, in any grouping', () => {
    const { prefix, fresh } = rowsOf(1);
    const want = reference(prefix.map((p, r) => concat(p, fresh[r] as Int32Array)));
    for (const options of [{}, { groupRatio: 0 }, { groupRatio: 1 }, { maxScores: 1 }]) {
      const caches = prefixCaches(prefix);
      expect(maxDiff(packedLogits(caches, fresh, options), want)).toBeLessThan(1e-4);
      caches.forEach((c, r) => {
        expect(c.length).toBe((PAST[r] as number) + (NEW[r] as number));
        expect(c.nextPositions[0]).toBe((PAST[r] as number) + (NEW[r] as number));
      });
    }
  });

  it('gives the same logits with attention in JS and through tfjs, and continues exactly on the next step', () => {
    const { prefix, fresh } = rowsOf(2);
    const results: Float32Array[][] = [];
    for (const maxQueries of [0, 64]) {
      setCpuAttentionMaxQueries(maxQueries); // 0: every group through tfjs; 64: small groups in JS
      const caches = prefixCaches(prefix);
      packedLogits(caches, fresh);
      const step = fresh.map((_, r) => Int32Array.from([6 + r])); // one decode step per row
      results.push(packedLogits(caches, step));
    }
    const want = reference(prefix.map((p, r) => Int32Array.from([...p, ...(fresh[r] as Int32Array), 6 + r])));
    expect(maxDiff(results[0] as Float32Array[], want)).toBeLessThan(1e-4);
    expect(maxDiff(results[1] as Float32Array[], want)).toBeLessThan(1e-4);
  });

  it('matches the padded extend over the same rows (left-padded, one merged cache)', () => {
    const { prefix, fresh } = rowsOf(3);
    const merged = KvCache.merge(prefixCaches(prefix), 16);
    const width = Math.max(...NEW);
    const ids = new Int32Array(PAST.length * width);
    const mask = new Uint8Array(PAST.length * width);
    fresh.forEach((f, r) => {
      ids.set(f, r * width + width - f.length);
      mask.fill(1, r * width + width - f.length, (r + 1) * width);
    });
    const padded = model.extend(merged, ids, mask, width);
    const data = padded.dataSync() as Float32Array;
    padded.dispose();
    const want = fresh.map((_, r) => data.slice(r * V, (r + 1) * V));
    expect(maxDiff(packedLogits(prefixCaches(prefix), fresh), want)).toBeLessThan(1e-4);
  });

  it('leaks no tensors and keeps one fused q/k/v weight per layer, rebuilt after new weights', () => {
    const { prefix, fresh } = rowsOf(4);
    const other = tinyModel(32, { maxContext: 96 });
    const original = model.namedWeights();
    try {
      packedLogits(prefixCaches(prefix), fresh); // builds the fused weights
      const before = tf.memory().numTensors;
      packedLogits(prefixCaches(prefix), fresh);
      expect(tf.memory().numTensors).toBe(before);
      model.loadNamedWeights(other.namedWeights());
      const want = reference(prefix.map((p, r) => concat(p, fresh[r] as Int32Array)));
      expect(maxDiff(packedLogits(prefixCaches(prefix), fresh), want)).toBeLessThan(1e-4); // fused from the new weights
      expect(tf.memory().numTensors).toBe(before); // the replaced fused weights were freed
    } finally {
      model.loadNamedWeights(original);
      other.dispose();
    }
  });

  it('rejects bad input naming the field', () => {
    const cache = () => model.createCache(1, 4);
    const bad = (caches: KvCache[], tokens: Int32Array[]) => () => model.extendPacked(caches, tokens);
    expect(bad([cache()], [])).toThrow(/tokens.*expected 1 rows/);
    expect(bad([], [])).toThrow(InvalidArgumentError);
    expect(bad([cache()], [new Int32Array(0)])).toThrow(/tokens\[0\].*at least one/);
    expect(bad([cache(), cache()], [Int32Array.from([7]), Int32Array.from([V])])).toThrow(/tokens\[1\].*outside/);
    expect(bad([model.createCache(2, 4)], [Int32Array.from([7])])).toThrow(/caches\[0\].*one-row/);
    expect(bad([cache()], [new Int32Array(97).fill(7)])).toThrow(/position 96 exceeds maxContext 96/);
  });
});

describe('attentionGroups', () => {
  it('groups rows by span, longest first, splitting below the ratio or past the score cap', () => {
    // Spans (past + new): row0 150+90=240, row1 10+5=15, row2 140+90=230, row3 100+90=190.
    const past = Int32Array.from([150, 10, 140, 100]);
    const offsets = Int32Array.from([0, 90, 95, 185, 275]);
    expect(attentionGroups(past, offsets, 0.9, 4, 2 ** 30).map((g) => [g.rows, g.width, g.past])).toEqual([
      [[0, 2], 90, 150],
      [[3], 90, 100],
      [[1], 5, 10],
    ]);
    expect(attentionGroups(past, offsets, 0, 4, 2 ** 30).map((g) => g.rows)).toEqual([[0, 2, 3, 1]]);
    // Rows 0 and 2 together need 2 * 4 * 90 * 240 = 172,800 scores.
    expect(attentionGroups(past, offsets, 0, 4, 172_799).map((g) => g.rows)).toEqual([[0], [2, 3], [1]]); // row 1 would make [2, 3, 1] need 3 * 4 * 90 * 230
  });
});

describe('ropePackedInPlace', () => {
  it('rotates the q and k halves of each head by position and leaves v alone', () => {
    // One head of dim 2 (d = 2): angle = position * theta^0 = position.
    const table = ropeTable(4, 2, 10000);
    const qkv = Float32Array.from([1, 2, 3, 4, 5, 6]); // one token: q [1, 2], k [3, 4], v [5, 6]
    ropePackedInPlace(qkv, Int32Array.from([3]), table, 1, 2);
    const c = Math.cos(3);
    const s = Math.sin(3);
    const want = [1 * c - 2 * s, 2 * c + 1 * s, 3 * c - 4 * s, 4 * c + 3 * s, 5, 6];
    want.forEach((w, i) => {
      expect(qkv[i]).toBeCloseTo(w, 5);
    });
  });
});

describe('KvCache.writeTokenMajor', () => {
  it('copies each token\'s per-head key and value slices from a token-major buffer into the next slots', () => {
    // 2 heads x headDim 1 (d = 2); source rows are [q0 q1 | k0 k1 | v0 v1] per token.
    const cache = new KvCache({ nLayers: 1, nHeads: 2, headDim: 1 }, 1, 4);
    cache.advance(Uint8Array.from([1]), 1); // one slot already used: writes go to slots 1..2
    const src = Float32Array.from([0, 0, 1, 2, 3, 4, 0, 0, 5, 6, 7, 8]); // two tokens, stride 6
    cache.writeTokenMajor(0, src, 0, 6, 2, 4, 2);
    const { key, value } = cache.layerBuffers(0); // [1, heads, capacity, 1]
    expect(Array.from(key)).toEqual([0, 1, 5, 0, 0, 2, 6, 0]);
    expect(Array.from(value)).toEqual([0, 3, 7, 0, 0, 4, 8, 0]);
    expect(() => cache.writeTokenMajor(0, src, 0, 6, 2, 4, 4)).toThrow(/reserve/);
    expect(() => cache.writeTokenMajor(0, src, 6, 6, 2, 4, 2)).toThrow(/src/);
    expect(() => new KvCache({ nLayers: 1, nHeads: 2, headDim: 1 }, 2, 4).writeTokenMajor(0, src, 0, 6, 2, 4, 1)).toThrow(/one-row/);
  });
});
