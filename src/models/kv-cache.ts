/**
 * Per-layer key/value cache for batched incremental decoding, held in CPU memory.
 *
 * Why on the CPU: on the wasm backend every data-movement kernel (Concat, Pad, Gather, Slice)
 * costs ~30 ns per element, so appending one token to a `[64, 4, 70, 16]` cache with `tf.concat`
 * takes ~8 ms per tensor per step, and dropping finished rows with `tf.gather` ~13 ms. Here the
 * cache is a preallocated `Float32Array` per layer of shape `[rows, heads, capacity, headDim]`:
 * appends, row selection and bucket merges are plain memory copies, and each decode step uploads
 * the buffer as one tensor (a memcpy into the wasm heap). Slots past `length` are masked.
 *
 * Keys are stored after RoPE, so every row keeps its own position ids (left-padded prefill uses
 * `cumsum(mask) - 1`); padding keys stay in place, masked through `keyMask`.
 */
import { InvalidArgumentError } from '../core/errors.js';
import { stridedCopy } from '../backend/strided-copy.js';

/** Sizes the cache needs from the model config. */
export interface KvCacheShape {
  readonly nLayers: number;
  /** Key/value heads (the model's `nKvHeads`: fewer than its query heads under grouped-query attention). */
  readonly nHeads: number;
  readonly headDim: number;
}

/**
 * Cached K/V of every layer plus the key padding mask and each row's next position id.
 * @example
 * const cache = new KvCache({ nLayers: 2, nHeads: 2, headDim: 8 }, 4, 32);
 * const logits = model.extend(cache, ids, mask, 12); // prefill: cache.length === 12
 */
export class KvCache {
  private keys: Float32Array[]; // per layer [rows, heads, capacity, headDim]
  private values: Float32Array[];
  private mask: Uint8Array; // [rows, capacity]
  private next: Int32Array; // [rows]
  private rowCount: number;
  private cap: number;
  private timeLength = 0;

  constructor(
    readonly shape: KvCacheShape,
    rows: number,
    capacity: number,
  ) {
    if (!Number.isInteger(rows) || rows < 0) throw InvalidArgumentError.format('rows', `expected an integer >= 0, got ${rows}`);
    if (!Number.isInteger(capacity) || capacity < 1) throw InvalidArgumentError.format('capacity', `expected an integer >= 1, got ${capacity}`);
    this.rowCount = rows;
    this.cap = capacity;
    this.keys = this.allocate(rows, capacity);
    this.values = this.allocate(rows, capacity);
    this.mask = new Uint8Array(rows * capacity);
    this.next = new Int32Array(rows);
  }

  /** Number of sequences (batch rows). */
  get rows(): number {
    return this.rowCount;
  }

  /** Time slots in use, padding included. */
  get length(): number {
    return this.timeLength;
  }

  /** Allocated time slots (the time size of the tensors built from {@link layerBuffers}). */
  get capacity(): number {
    return this.cap;
  }

  /** [rows, capacity] 1 where the slot holds a real token's key. */
  get keyMask(): Uint8Array {
    return this.mask;
  }

  /** [rows] position id the next real token of each row gets (= real tokens cached). */
  get nextPositions(): Int32Array {
    return this.next;
  }

  /** Grows the capacity (copying) so that `added` more slots fit. */
  reserve(added: number): void {
    const needed = this.timeLength + added;
    if (needed <= this.cap) return;
    this.resize(needed + Math.max(8, added));
  }

  /**
   * Writes `added` new time steps of one layer (`[rows, heads, added, headDim]`, row-major) into
   * slots `[length, length + added)`. Call for every layer, then {@link advance}.
   */
  write(layer: number, key: ArrayLike<number>, value: ArrayLike<number>, added: number): void {
    const { nHeads: h, headDim: hd } = this.shape;
    const expected = this.rowCount * h * added * hd;
    if (key.length !== expected || value.length !== expected) {
      throw InvalidArgumentError.format('key', `expected ${expected} values ([${this.rowCount}, ${h}, ${added}, ${hd}]), got ${key.length}/${value.length}`);
    }
    if (this.timeLength + added > this.cap) throw InvalidArgumentError.format('added', `${added} slots do not fit; call reserve() first`);
    const kBuf = this.keys[layer];
    const vBuf = this.values[layer];
    const src = key instanceof Float32Array ? key : Float32Array.from(key);
    const srcV = value instanceof Float32Array ? value : Float32Array.from(value);
    for (let block = 0; block < this.rowCount * h; block++) {
      const from = block * added * hd;
      const to = (block * this.cap + this.timeLength) * hd;
      kBuf.set(src.subarray(from, from + added * hd), to);
      vBuf.set(srcV.subarray(from, from + added * hd), to);
    }
  }

  /**
   * {@link write} for a one-row cache from a token-major source (no transpose, no temporary):
   * token j's key for head h is `src[offset + j * stride + keyAt + h * headDim ..]`, its value the
   * same at `valueAt` (a fused q/k/v projection `[tokens, 3d]` has stride 3d, keyAt d, valueAt 2d).
   * @example cache.writeTokenMajor(0, qkv, 5 * 3 * d, 3 * d, d, 2 * d, 4) // tokens 5..8 of a packed batch
   */
  writeTokenMajor(layer: number, src: Float32Array, offset: number, stride: number, keyAt: number, valueAt: number, added: number): void {
    if (this.rowCount !== 1) throw InvalidArgumentError.format('rows', `expected a one-row cache, got ${this.rowCount} rows`);
    if (this.timeLength + added > this.cap) throw InvalidArgumentError.format('added', `${added} slots do not fit; call reserve() first`);
    const { nHeads: h, headDim: hd } = this.shape;
    if (offset + (added - 1) * stride + Math.max(keyAt, valueAt) + h * hd > src.length) {
      throw InvalidArgumentError.format('src', `${added} tokens at offset ${offset}, stride ${stride} run past its ${src.length} values`);
    }
    const kBuf = this.keys[layer];
    const vBuf = this.values[layer];
    for (let head = 0; head < h; head++) {
      const to = (head * this.cap + this.timeLength) * hd;
      stridedCopy(src, offset + keyAt + head * hd, stride, kBuf, to, hd, added, hd);
      stridedCopy(src, offset + valueAt + head * hd, stride, vBuf, to, hd, added, hd);
    }
  }

  /** Marks `added` slots as used after every layer was written; `addedMask` is `[rows, added]`. */
  advance(addedMask: Uint8Array, added: number): void {
    if (addedMask.length !== this.rowCount * added) {
      throw InvalidArgumentError.format('addedMask', `expected ${this.rowCount * added} entries, got ${addedMask.length}`);
    }
    for (let r = 0; r < this.rowCount; r++) {
      let real = 0;
      for (let j = 0; j < added; j++) {
        const m = addedMask[r * added + j];
        this.mask[r * this.cap + this.timeLength + j] = m;
        real += m;
      }
      this.next[r] += real;
    }
    this.timeLength += added;
  }

  /**
   * The `{ key, value }` buffers of one layer, `[rows, heads, capacity, headDim]`. Do not mutate, except as
   * {@link write} does (the native decode step, transformer/native-decode.ts, writes slot `length` in place).
   */
  layerBuffers(layer: number): { key: Float32Array; value: Float32Array } {
    return { key: this.keys[layer], value: this.values[layer] };
  }

  /**
   * Keeps only the given rows, in that order (drops finished sequences so that decode steps stop
   * paying for them).
   * @example cache.selectRows(new Int32Array([0, 2])) // rows: 3 -> 2
   */
  selectRows(rows: Int32Array): void {
    for (const r of rows) {
      if (r < 0 || r >= this.rowCount) throw InvalidArgumentError.format('rows', `row ${r} outside [0, ${this.rowCount})`);
    }
    if (rows.length === this.rowCount && rows.every((r, i) => r === i)) return;
    const rowSize = this.shape.nHeads * this.cap * this.shape.headDim;
    const pick = (buf: Float32Array): Float32Array => {
      const out = new Float32Array(rows.length * rowSize);
      rows.forEach((r, i) => {
        out.set(buf.subarray(r * rowSize, (r + 1) * rowSize), i * rowSize);
      });
      return out;
    };
    this.keys = this.keys.map(pick);
    this.values = this.values.map(pick);
    const mask = new Uint8Array(rows.length * this.cap);
    rows.forEach((r, i) => {
      mask.set(this.mask.subarray(r * this.cap, (r + 1) * this.cap), i * this.cap);
    });
    this.mask = mask;
    this.next = Int32Array.from(rows, (r) => this.next[r]);
    this.rowCount = rows.length;
  }

  /** Bytes held by the key/value buffers (what a cache budget counts). */
  get byteSize(): number {
    return 2 * this.shape.nLayers * this.rowCount * this.shape.nHeads * this.cap * this.shape.headDim * 4;
  }

  /**
   * A one-row copy of `row` holding only its real (unmasked) slots, in order: no padding, capacity
   * = length. Keys keep their RoPE positions, so the copy extends exactly like the original row
   * (what an episode keeps between turns).
   * @example const kept = batchCache.extractRow(3); kept.length // real tokens of row 3
   */
  extractRow(row: number): KvCache {
    if (!Number.isInteger(row) || row < 0 || row >= this.rowCount) throw InvalidArgumentError.format('row', `row ${row} outside [0, ${this.rowCount})`);
    // Runs of consecutive real slots ([start, length]): a row has few (left pad, chunk pads), so
    // each run is one copy per layer and head rather than one per slot.
    const runs: Array<[number, number]> = [];
    let real = 0;
    for (let j = 0; j < this.timeLength; j++) {
      if (this.mask[row * this.cap + j] !== 1) continue;
      const last = runs[runs.length - 1];
      if (last !== undefined && last[0] + last[1] === j) last[1]++;
      else runs.push([j, 1]);
      real++;
    }
    const out = new KvCache(this.shape, 1, Math.max(1, real));
    const { nHeads: h, headDim: hd } = this.shape;
    for (let l = 0; l < this.shape.nLayers; l++) {
      for (let head = 0; head < h; head++) {
        const block = (row * h + head) * this.cap;
        let to = head * out.cap * hd;
        for (const [start, length] of runs) {
          const from = (block + start) * hd;
          out.keys[l].set(this.keys[l].subarray(from, from + length * hd), to);
          out.values[l].set(this.values[l].subarray(from, from + length * hd), to);
          to += length * hd;
        }
      }
    }
    out.mask.fill(1, 0, real);
    out.next[0] = this.next[row];
    out.timeLength = real;
    return out;
  }

  /**
   * Stacks caches into one (rows in argument order). Shorter ones are left-padded along time with
   * masked zero keys, so every row's newest token sits in the last used slot.
   * @example const all = KvCache.merge([shortBucket, longBucket], 8);
   */
  static merge(caches: readonly KvCache[], extraCapacity = 0): KvCache {
    if (caches.length === 0) throw InvalidArgumentError.format('caches', 'expected at least one cache');
    const shape = caches[0].shape;
    const length = Math.max(...caches.map((c) => c.length));
    const rows = caches.reduce((n, c) => n + c.rows, 0);
    const merged = new KvCache(shape, rows, Math.max(1, length + extraCapacity));
    const { nHeads: h, headDim: hd } = shape;
    let row = 0;
    for (const c of caches) {
      const pad = length - c.length;
      for (let r = 0; r < c.rows; r++, row++) {
        for (let l = 0; l < shape.nLayers; l++) {
          for (let head = 0; head < h; head++) {
            const from = ((r * h + head) * c.cap) * hd;
            const to = ((row * h + head) * merged.cap + pad) * hd;
            merged.keys[l].set(c.keys[l].subarray(from, from + c.length * hd), to);
            merged.values[l].set(c.values[l].subarray(from, from + c.length * hd), to);
          }
        }
        merged.mask.set(c.mask.subarray(r * c.cap, r * c.cap + c.length), row * merged.cap + pad);
        merged.next[row] = c.next[r];
      }
    }
    merged.timeLength = length;
    return merged;
  }

  private resize(capacity: number): void {
    const { nHeads: h, headDim: hd } = this.shape;
    const grow = (buf: Float32Array): Float32Array => {
      const out = new Float32Array(this.rowCount * h * capacity * hd);
      for (let block = 0; block < this.rowCount * h; block++) {
        out.set(buf.subarray(block * this.cap * hd, (block * this.cap + this.timeLength) * hd), block * capacity * hd);
      }
      return out;
    };
    this.keys = this.keys.map(grow);
    this.values = this.values.map(grow);
    const mask = new Uint8Array(this.rowCount * capacity);
    for (let r = 0; r < this.rowCount; r++) mask.set(this.mask.subarray(r * this.cap, r * this.cap + this.timeLength), r * capacity);
    this.mask = mask;
    this.cap = capacity;
  }

  private allocate(rows: number, capacity: number): Float32Array[] {
    const { nLayers, nHeads, headDim } = this.shape;
    const buffers: Float32Array[] = [];
    for (let layer = 0; layer < nLayers; layer++) buffers.push(new Float32Array(rows * nHeads * capacity * headDim));
    return buffers;
  }
}
