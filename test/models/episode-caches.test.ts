import { describe, expect, it } from 'vitest';
import { EpisodeCacheStore } from '../../src/models/episode-caches.js';
import { KvCache } from '../../src/models/kv-cache.js';

const SHAPE = { nLayers: 1, nHeads: 1, headDim: 2 };
const ids = (...v: number[]) => Int32Array.from(v);

/** A one-row cache whose slot j holds key [j, j] (value [-j, -j]), all real. */
function row(length: number): KvCache {
  const cache = new KvCache(SHAPE, 1, length);
  const key = Float32Array.from({ length: 2 * length }, (_, i) => Math.floor(i / 2));
  cache.write(0, key, key.map((x) => -x), length);
  cache.advance(new Uint8Array(length).fill(1), length);
  return cache;
}

describe('KvCache.extractRow', () => {
  it('copies only the real slots of a row, in order, with its next position', () => {
    // 2 rows, 4 slots: row 1 is [pad, a, pad, b] (left pad + a padded chunk), row 0 all real.
    const cache = new KvCache(SHAPE, 2, 4);
    const key = Float32Array.from([0, 0, 1, 1, 2, 2, 3, 3, 10, 10, 11, 11, 12, 12, 13, 13]); // [2, 1, 4, 2]
    cache.write(0, key, key.map((x) => x + 0.5), 4);
    cache.advance(new Uint8Array([1, 1, 1, 1, 0, 1, 0, 1]), 4);
    const kept = cache.extractRow(1);
    expect(kept.rows).toBe(1);
    expect(kept.length).toBe(2);
    expect(kept.capacity).toBe(2);
    expect(Array.from(kept.layerBuffers(0).key)).toEqual([11, 11, 13, 13]);
    expect(Array.from(kept.layerBuffers(0).value)).toEqual([11.5, 11.5, 13.5, 13.5]);
    expect(Array.from(kept.keyMask)).toEqual([1, 1]);
    expect(Array.from(kept.nextPositions)).toEqual([2]);
    expect(kept.byteSize).toBe(2 * 1 * 1 * 1 * 2 * 2 * 4);
    expect(() => cache.extractRow(2)).toThrow(/row 2/);
  });
});

describe('EpisodeCacheStore', () => {
  it('hits only on a strict prefix under the same weights stamp, and drops stale entries', () => {
    const store = new EpisodeCacheStore({ maxBytes: 1e6, maxEntries: 10 });
    const stamp = {};
    store.put('a', row(3), ids(1, 2, 3), stamp);
    expect(store.lookup('a', ids(1, 2, 3, 4, 5), stamp)?.reused).toBe(3);
    expect(store.lookup('a', ids(1, 2, 3), stamp)).toBeNull(); // nothing left to feed: a miss, entry dropped
    expect(store.size).toBe(0);
    store.put('a', row(3), ids(1, 2, 3), stamp);
    expect(store.lookup('a', ids(1, 9, 3, 4), stamp)).toBeNull(); // diverged (truncated/windowed context)
    store.put('a', row(3), ids(1, 2, 3), stamp);
    expect(store.lookup('a', ids(1, 2, 3, 4), {})).toBeNull(); // other weights
    expect(store.lookup('b', ids(1), stamp)).toBeNull();
    expect(store.counters).toEqual({ hits: 1, misses: 4, evictions: 0, released: 0 });
    expect(() => store.put('c', row(2), ids(1, 2, 3), stamp)).toThrow(/tokens/);
  });

  it('evicts the least recently used beyond the byte and entry caps; release frees', () => {
    const bytes = row(4).byteSize; // 64
    const store = new EpisodeCacheStore({ maxBytes: 3 * bytes, maxEntries: 10 });
    const stamp = {};
    for (const id of ['a', 'b', 'c']) store.put(id, row(4), ids(1, 2, 3, 4), stamp);
    store.lookup('a', ids(1, 2, 3, 4, 5), stamp); // a is now the most recent
    store.put('d', row(4), ids(1, 2, 3, 4), stamp);
    expect(store.byteSize).toBe(3 * bytes);
    expect(store.lookup('b', ids(1, 2, 3, 4, 5), stamp)).toBeNull(); // b was the oldest
    expect(store.counters.evictions).toBe(1);
    store.release(['a', 'zzz']);
    expect(store.size).toBe(2);
    expect(store.byteSize).toBe(2 * bytes);
    const capped = new EpisodeCacheStore({ maxBytes: 1e6, maxEntries: 1 });
    capped.put('a', row(2), ids(1, 2), stamp);
    capped.put('b', row(2), ids(1, 2), stamp);
    expect(capped.size).toBe(1);
    expect(capped.lookup('b', ids(1, 2, 3), stamp)?.reused).toBe(2);
  });

  it('looks up a batch of requests in order, null without an episode id', () => {
    const store = new EpisodeCacheStore({ maxBytes: 1e6, maxEntries: 10 });
    const stamp = {};
    store.put('a', row(2), ids(1, 2), stamp);
    store.put('b', row(3), ids(5, 6, 7), stamp);
    const hits = store.lookupRequests(
      [{ episodeId: 'b', contextTokens: ids(5, 6, 7, 8) }, { contextTokens: ids(1, 2, 3) }, { episodeId: 'a', contextTokens: ids(1, 2, 3) }, { episodeId: 'c', contextTokens: ids(1) }],
      stamp,
    );
    expect(hits.map((h) => h?.reused ?? null)).toEqual([3, null, 2, null]);
    expect(store.counters).toEqual({ hits: 2, misses: 1, evictions: 0, released: 0 }); // no id: not a lookup
  });

  it('keeps one stamp while the weight ids are unchanged; new ids clear every entry', () => {
    const store = new EpisodeCacheStore({ maxBytes: 1e6, maxEntries: 10 });
    const w0 = {};
    const w1 = {};
    const stamp = store.stampFor([w0, w1]);
    expect(store.stampFor([w0, w1])).toBe(stamp);
    store.put('a', row(2), ids(1, 2), stamp);
    expect(store.stampFor([w0, w1])).toBe(stamp);
    expect(store.size).toBe(1);
    const next = store.stampFor([w0, {}]); // one weight reassigned (new dataId)
    expect(next).not.toBe(stamp);
    expect(store.size).toBe(0);
    expect(store.byteSize).toBe(0);
    expect(store.stampFor([w0])).not.toBe(next); // fewer weights: another model
  });
});
