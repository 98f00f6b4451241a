import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.js';
import { InvalidArgumentError } from '../../src/core/errors.js';
import { copyFloatsInto, readFloatsInto } from '../../src/backend/read-into.js';
import { selectBackend } from '../../src/backend/select.js';
import { tf } from '../../src/backend/tf.js';
import { setCpuAttentionMaxQueries } from '../../src/models/transformer/cpu-attention.js';
import type { TransformerModel } from '../../src/models/transformer/model.js';
import { ScratchPool } from '../../src/models/transformer/scratch.js';
import { randomSeq, tinyModel } from './transformer-fixtures.js';

// The packed forward reuses its work buffers across layers and calls (transformer/scratch.ts), so a
// prefill allocates no typed arrays a layer. Reuse must not change a single bit of the logits: a
// model whose buffers hold a larger earlier call's values gives what a fresh model gives.

describe('ScratchPool', () => {
  it('hands out views of exactly the asked length, reusing one buffer per role until it must grow', () => {
    const pool = new ScratchPool(100);
    const a = pool.take('qkv', 10);
    a.fill(7);
    const b = pool.take('qkv', 6);
    expect(b.length).toBe(6);
    expect(b.buffer).toBe(a.buffer); // the same memory: contents are stale, not zeroed
    expect(b[0]).toBe(7);
    expect(pool.take('context', 10).buffer).not.toBe(a.buffer); // roles never share
    const grown = pool.take('qkv', 12);
    expect(grown.buffer).not.toBe(a.buffer);
    expect(grown.buffer.byteLength).toBe(15 * 4); // by half again (10 * 1.5), not just to 12
    expect(pool.heldFloats).toBe(25);
  });

  it('does not keep buffers above its cap, and drops everything on clear', () => {
    const pool = new ScratchPool(100);
    const big = pool.take('qkv', 101);
    expect(big.length).toBe(101);
    expect(pool.take('qkv', 101).buffer).not.toBe(big.buffer);
    expect(pool.heldFloats).toBe(0);
    expect(pool.take('qkv', 80).length).toBe(80);
    expect(pool.take('qkv', 90).buffer.byteLength).toBe(100 * 4); // growth stops at the cap
    pool.clear();
    expect(pool.heldFloats).toBe(0);
  });
});

/** Cached prefix lengths and new-token counts: ragged, so one attention group pads queries and keys. */
const LARGE = { past: [0, 9, 0, 21, 5, 0], fresh: [14, 3, 17, 6, 12, 9] };
const SMALL = { past: [0, 4, 2], fresh: [5, 1, 8] };

function run(model: TransformerModel, shape: { past: number[]; fresh: number[] }, seed: number, groupRatio: number): Uint32Array {
  const rng = Rng.fromSeed(seed);
  const caches = shape.past.map((n) => {
    const cache = model.createCache(1, Math.max(1, n));
    if (n > 0) model.extendPacked([cache], [randomSeq(rng, n)]).dispose();
    return cache;
  });
  const logits = model.extendPacked(
    caches,
    shape.fresh.map((n) => randomSeq(rng, n)),
    { groupRatio }, // 0: every row in one group, the most padding; 1: a group per distinct span
  );
  const values = Float32Array.from(logits.dataSync() as Float32Array);
  logits.dispose();
  return new Uint32Array(values.buffer);
}

describe.each(['cpu', 'wasm'] as const)('extendPacked with reused work buffers (%s backend)', (backend) => {
  const models: TransformerModel[] = [];
  const fresh = () => {
    const m = tinyModel(31, { maxContext: 96 });
    models.push(m);
    return m;
  };
  afterEach(() => setCpuAttentionMaxQueries(4));
  afterAll(() => {
    for (const m of models) m.dispose();
  });

  it('gives a fresh model\'s logits to the bit after a larger call filled its buffers, in one group or many, attention through tfjs or JS', async () => {
    if (backend === 'wasm') await selectBackend('wasm');
    else await tf.setBackend('cpu');
    for (const maxQueries of [0, 4]) {
      setCpuAttentionMaxQueries(maxQueries); // 0: every group through tfjs; 4: narrow ones in JS
      for (const ratio of [0, 1]) {
        const used = fresh();
        run(used, LARGE, 1, ratio);
        const again = run(used, SMALL, 2, ratio);
        expect(again).toEqual(run(fresh(), SMALL, 2, ratio));
        expect(run(used, SMALL, 2, ratio)).toEqual(again); // and once more on warm buffers of this size
      }
    }
  });
});

describe('readFloatsInto', () => {
  it('copies a wasm tensor into the given buffer and returns it; rejects a buffer of the wrong size', async () => {
    await selectBackend('wasm');
    const t = tf.tensor2d([1, 2, 3, 4, 5, 6], [2, 3]);
    const out = new Float32Array(6);
    expect(readFloatsInto(t, out)).toBe(out);
    expect(Array.from(out)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(() => readFloatsInto(t, new Float32Array(5))).toThrow(InvalidArgumentError);
    t.dispose();
  });

  it('copyFloatsInto writes into the given buffer on wasm and on cpu alike (cpu has no heap view)', async () => {
    for (const backend of ['wasm', 'cpu'] as const) {
      await selectBackend(backend);
      const t = tf.tensor1d([7, 8, 9]);
      const shared = new Float32Array(new SharedArrayBuffer(5 * 4));
      copyFloatsInto(t, shared.subarray(1, 4));
      expect(Array.from(shared), backend).toEqual([0, 7, 8, 9, 0]);
      t.dispose();
    }
    await selectBackend('wasm');
  });
});
