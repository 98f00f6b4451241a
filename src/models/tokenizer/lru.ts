/**
 * A bounded least-recently-used cache on top of `Map` insertion order: a hit re-inserts the key at
 * the back, an insert past capacity evicts the front. O(1) per operation.
 */

/**
 * Bounded LRU map.
 * @example
 * const cache = new LruCache<string, number>(2);
 * cache.set('a', 1); cache.set('b', 2); cache.get('a'); cache.set('c', 3); // evicts 'b'
 */
export class LruCache<K, V> {
  private readonly entries = new Map<K, V>();

  /** @param capacity maximum number of entries kept; 0 disables the cache. */
  constructor(readonly capacity: number) {}

  /** Number of entries held now. */
  get size(): number {
    return this.entries.size;
  }

  /** The value for `key`, marking it most recently used; `undefined` on a miss. */
  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  /** Stores `value`, evicting the least recently used entry when full. */
  set(key: K, value: V): void {
    if (this.capacity <= 0) return;
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
  }

  /** Drops every entry. */
  clear(): void {
    this.entries.clear();
  }
}
