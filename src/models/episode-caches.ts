/**
 * The KV caches the sampler keeps per episode between turns, so that a turn whose prompt only grew
 * (the previous prompt + the emitted action + the new observation) prefills only the new tokens.
 *
 * An entry is one compact `KvCache` row (see `KvCache.extractRow`) plus the exact token ids whose
 * keys/values it holds and a weights stamp. A lookup hits only when those ids are a strict prefix
 * of the new context and the stamp is the current one; anything else (context truncated or
 * windowed, new weights, evicted) is a miss and the caller prefills the whole context.
 *
 * Memory is bounded: least-recently-used entries are evicted beyond `maxBytes` or `maxEntries`,
 * and `release` frees an episode's entry when it ends. Eviction never changes results, only speed.
 */
import { InvalidArgumentError } from '../core/errors.js';
import type { KvCache } from './kv-cache.js';

/** Bounds of an {@link EpisodeCacheStore}. */
export interface EpisodeCacheLimits {
  /** Total bytes of cached keys/values kept (LRU beyond). */
  readonly maxBytes: number;
  /** Number of episodes kept (LRU beyond). */
  readonly maxEntries: number;
}

/** A usable cached prefix for one request. */
export interface CacheHit {
  /** One-row cache of the first `reused` context tokens (owned by the store: extend a copy). */
  readonly cache: KvCache;
  /** Context tokens whose keys/values are cached (the rest must be prefilled). */
  readonly reused: number;
}

interface Entry {
  readonly tokens: Int32Array; // [reused] ids whose K/V the cache holds
  readonly cache: KvCache;
  readonly stamp: unknown;
}

/** What a lookup reads of a request (an `ActRequest` fits). */
export interface CacheKey {
  /** The episode whose cached prefix may serve this turn; none: never a hit. */
  readonly episodeId?: string;
  /** The turn's whole context. */
  readonly contextTokens: Int32Array;
}

/** Counters since construction (for metrics and the bench). */
export interface EpisodeCacheCounters {
  hits: number;
  misses: number;
  evictions: number;
  released: number;
}

/**
 * LRU store of per-episode KV caches.
 * @example
 * const store = new EpisodeCacheStore({ maxBytes: 64 << 20, maxEntries: 4096 });
 * store.put('ep-1', row, fedTokens, weightsStamp);
 * store.lookup('ep-1', nextContext, weightsStamp); // { cache, reused } or null
 * store.release(['ep-1']);
 */
export class EpisodeCacheStore {
  private readonly entries = new Map<string, Entry>(); // insertion order = recency (oldest first)
  private bytes = 0;
  /** The weights identity of the last {@link stampFor} call and its stamp. */
  private weights: { ids: readonly object[]; stamp: object } = { ids: [], stamp: {} };
  readonly counters: EpisodeCacheCounters = { hits: 0, misses: 0, evictions: 0, released: 0 };

  constructor(private readonly limits: EpisodeCacheLimits) {
    if (!(limits.maxBytes >= 0)) throw InvalidArgumentError.format('maxBytes', `expected a number >= 0, got ${limits.maxBytes}`);
    if (!(Number.isInteger(limits.maxEntries) && limits.maxEntries >= 0)) {
      throw InvalidArgumentError.format('maxEntries', `expected an integer >= 0, got ${limits.maxEntries}`);
    }
  }

  /** Episodes with a cache. */
  get size(): number {
    return this.entries.size;
  }

  /** Bytes of keys/values held. */
  get byteSize(): number {
    return this.bytes;
  }

  /**
   * The cached prefix of `episodeId` when it is usable for `context` under weights `stamp`:
   * its tokens must be a strict prefix of `context` (at least one token is left to feed, whose
   * logits the turn needs). A stale entry (other stamp, diverged tokens) is dropped.
   */
  lookup(episodeId: string, context: Int32Array, stamp: unknown): CacheHit | null {
    const entry = this.entries.get(episodeId);
    if (entry === undefined) {
      this.counters.misses++;
      return null;
    }
    if (entry.stamp !== stamp || !isStrictPrefix(entry.tokens, context)) {
      this.drop(episodeId, entry);
      this.counters.misses++;
      return null;
    }
    // Refresh recency.
    this.entries.delete(episodeId);
    this.entries.set(episodeId, entry);
    this.counters.hits++;
    return { cache: entry.cache, reused: entry.tokens.length };
  }

  /**
   * The cached prefix of each request, in order: null without an `episodeId`, else as {@link lookup}
   * (every lookup counts as a hit or a miss).
   * @example store.lookupRequests([{ episodeId: 'ep-1', contextTokens }, { contextTokens }], stamp) // [{ cache, reused }, null]
   */
  lookupRequests(requests: readonly CacheKey[], stamp: unknown): Array<CacheHit | null> {
    return requests.map(({ episodeId, contextTokens }) => (episodeId === undefined ? null : this.lookup(episodeId, contextTokens, stamp)));
  }

  /**
   * The stamp of the weights identified by `ids` (tfjs variables get a new dataId on every assign:
   * load, optimizer step): the same object while the ids are unchanged; new ids clear every entry,
   * since every cached key/value was computed under the old weights.
   * @example const stamp = store.stampFor(model.trainableVariables().map((v) => v.dataId));
   */
  stampFor(ids: readonly object[]): object {
    const same = ids.length === this.weights.ids.length && ids.every((id, i) => id === this.weights.ids[i]);
    if (!same) {
      this.weights = { ids, stamp: {} };
      this.clear();
    }
    return this.weights.stamp;
  }

  /** Stores (or replaces) an episode's cache; `tokens` are the ids it holds, in order. */
  put(episodeId: string, cache: KvCache, tokens: Int32Array, stamp: unknown): void {
    if (cache.rows !== 1) throw InvalidArgumentError.format('cache', `expected a one-row cache, got ${cache.rows} rows`);
    if (cache.length !== tokens.length) throw InvalidArgumentError.format('tokens', `expected ${cache.length} ids (the cache length), got ${tokens.length}`);
    const old = this.entries.get(episodeId);
    if (old !== undefined) this.drop(episodeId, old);
    if (cache.byteSize > this.limits.maxBytes || this.limits.maxEntries === 0) return;
    this.entries.set(episodeId, { tokens, cache, stamp });
    this.bytes += cache.byteSize;
    for (const [id, entry] of this.entries) {
      if (this.bytes <= this.limits.maxBytes && this.entries.size <= this.limits.maxEntries) break;
      this.drop(id, entry);
      this.counters.evictions++;
    }
  }

  /** Frees the caches of episodes that ended (unknown ids are ignored). */
  release(episodeIds: readonly string[]): void {
    for (const id of episodeIds) {
      const entry = this.entries.get(id);
      if (entry === undefined) continue;
      this.drop(id, entry);
      this.counters.released++;
    }
  }

  /** Drops every entry (e.g. new weights: every cached key/value is stale). */
  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }

  private drop(id: string, entry: Entry): void {
    this.entries.delete(id);
    this.bytes -= entry.cache.byteSize;
  }
}

function isStrictPrefix(prefix: Int32Array, of: Int32Array): boolean {
  if (prefix.length >= of.length) return false;
  for (let i = 0; i < prefix.length; i++) if (prefix[i] !== of[i]) return false;
  return true;
}
