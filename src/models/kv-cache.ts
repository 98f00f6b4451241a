/**
 * Per-layer key/value cache for batched incremental decoding.
 *
 * Keys are cached after RoPE, so every row keeps its own position ids (left-padded prefill uses
 * `cumsum(mask) - 1`). Padding keys stay in the cache and are masked through `keyMask`, which is
 * kept on the CPU: the additive attention mask is rebuilt from it each step (a few kB). The cache
 * owns its tensors: `commit` disposes the tensors it replaces and `dispose` frees the rest.
 */
import { InvalidArgumentError } from '../core/errors.js';
import { tf } from './backend/tf.js';

/**
 * K/V tensors of every layer, `[rows, heads, length, headDim]`, plus the key padding mask and
 * the next position id of each row.
 * @example
 * const cache = new KvCache(cfg.nLayers, 4);
 * const logits = model.extend(cache, ids, mask, 12); // prefill: cache.length === 12
 * cache.dispose();
 */
export class KvCache {
  private keys: tf.Tensor4D[] = [];
  private values: tf.Tensor4D[] = [];
  private mask: Uint8Array; // [rows, length]
  private next: Int32Array; // [rows]
  private rowCount: number;
  private timeLength = 0;

  constructor(
    readonly nLayers: number,
    rows: number,
  ) {
    this.rowCount = rows;
    this.mask = new Uint8Array(0);
    this.next = new Int32Array(rows);
  }

  /** Number of sequences (batch rows). */
  get rows(): number {
    return this.rowCount;
  }

  /** Cached time steps, padding included. */
  get length(): number {
    return this.timeLength;
  }

  /** [rows, length] 1 where the cached key is a real token. */
  get keyMask(): Uint8Array {
    return this.mask;
  }

  /** [rows] position id the next real token of each row gets (= real tokens cached). */
  get nextPositions(): Int32Array {
    return this.next;
  }

  /** Cached `{ key, value }` of one layer (`[rows, heads, length, headDim]`), or null when empty. */
  layer(index: number): { key: tf.Tensor4D; value: tf.Tensor4D } | null {
    if (this.timeLength === 0) return null;
    return { key: this.keys[index], value: this.values[index] };
  }

  /**
   * Replaces the cached tensors with `keys`/`values` (old cache + `added` new steps, concatenated
   * along time), disposes the replaced tensors and appends `addedMask` ([rows, added]).
   */
  commit(keys: tf.Tensor4D[], values: tf.Tensor4D[], addedMask: Uint8Array, added: number): void {
    if (keys.length !== this.nLayers || values.length !== this.nLayers) {
      throw InvalidArgumentError.format('keys', `expected ${this.nLayers} layers, got ${keys.length}/${values.length}`);
    }
    if (addedMask.length !== this.rowCount * added) {
      throw InvalidArgumentError.format('addedMask', `expected ${this.rowCount * added} entries, got ${addedMask.length}`);
    }
    const total = this.timeLength + added;
    for (const t of [...keys, ...values]) {
      if (t.shape[0] !== this.rowCount || t.shape[2] !== total) {
        throw InvalidArgumentError.format('keys', `expected [${this.rowCount}, *, ${total}, *], got [${t.shape.join(', ')}]`);
      }
    }
    this.disposeTensors();
    this.keys = keys;
    this.values = values;
    const mask = new Uint8Array(this.rowCount * total);
    for (let r = 0; r < this.rowCount; r++) {
      mask.set(this.mask.subarray(r * this.timeLength, (r + 1) * this.timeLength), r * total);
      let real = 0;
      for (let j = 0; j < added; j++) {
        const m = addedMask[r * added + j];
        mask[r * total + this.timeLength + j] = m;
        real += m;
      }
      this.next[r] += real;
    }
    this.mask = mask;
    this.timeLength = total;
  }

  /**
   * Keeps only the given rows, in that order (drops finished sequences so that decode steps stop
   * paying for them). Uses a forward-only gather along the batch axis.
   * @example cache.selectRows(new Int32Array([0, 2])) // rows: 3 -> 2
   */
  selectRows(rows: Int32Array): void {
    for (const r of rows) {
      if (r < 0 || r >= this.rowCount) throw InvalidArgumentError.format('rows', `row ${r} outside [0, ${this.rowCount})`);
    }
    const identity = rows.length === this.rowCount && rows.every((r, i) => r === i);
    if (identity) return;
    const len = this.timeLength;
    if (len > 0) {
      const index = tf.tensor1d(rows, 'int32');
      const pick = (t: tf.Tensor4D): tf.Tensor4D => {
        const out = rows.length === 0 ? tf.zeros([0, t.shape[1], len, t.shape[3]]) : tf.gather(t, index, 0);
        t.dispose();
        return out as tf.Tensor4D;
      };
      this.keys = this.keys.map(pick);
      this.values = this.values.map(pick);
      index.dispose();
    }
    const mask = new Uint8Array(rows.length * len);
    const next = new Int32Array(rows.length);
    rows.forEach((r, i) => {
      mask.set(this.mask.subarray(r * len, (r + 1) * len), i * len);
      next[i] = this.next[r];
    });
    this.mask = mask;
    this.next = next;
    this.rowCount = rows.length;
  }

  /**
   * Stacks caches of different lengths into one (rows in argument order): shorter ones are
   * left-padded along time with masked zero keys. Consumes (disposes) the inputs.
   * @example const all = KvCache.merge([shortBucket, longBucket]);
   */
  static merge(caches: readonly KvCache[]): KvCache {
    if (caches.length === 0) throw InvalidArgumentError.format('caches', 'expected at least one cache');
    if (caches.length === 1) return caches[0];
    const nLayers = caches[0].nLayers;
    const length = Math.max(...caches.map((c) => c.length));
    if (caches.some((c) => c.length === 0)) throw InvalidArgumentError.format('caches', 'cannot merge an empty cache');
    const rows = caches.reduce((n, c) => n + c.rows, 0);
    const merged = new KvCache(nLayers, rows);
    const padTime = (t: tf.Tensor4D, by: number): tf.Tensor4D =>
      by === 0 ? t : tf.pad(t, [[0, 0], [0, 0], [by, 0], [0, 0]]);
    const keys: tf.Tensor4D[] = [];
    const values: tf.Tensor4D[] = [];
    for (let l = 0; l < nLayers; l++) {
      keys.push(tf.tidy(() => tf.concat(caches.map((c) => padTime(c.keys[l], length - c.length)), 0)));
      values.push(tf.tidy(() => tf.concat(caches.map((c) => padTime(c.values[l], length - c.length)), 0)));
    }
    const mask = new Uint8Array(rows * length);
    let row = 0;
    for (const c of caches) {
      const pad = length - c.length;
      for (let r = 0; r < c.rows; r++, row++) {
        mask.set(c.mask.subarray(r * c.length, (r + 1) * c.length), row * length + pad);
        merged.next[row] = c.next[r];
      }
      c.dispose();
    }
    merged.keys = keys;
    merged.values = values;
    merged.mask = mask;
    merged.timeLength = length;
    return merged;
  }

  /** Frees every cached tensor; the cache is empty afterwards. */
  dispose(): void {
    this.disposeTensors();
    this.keys = [];
    this.values = [];
    this.mask = new Uint8Array(0);
    this.next = new Int32Array(this.rowCount);
    this.timeLength = 0;
  }

  private disposeTensors(): void {
    for (const t of this.keys) t.dispose();
    for (const t of this.values) t.dispose();
  }
}
