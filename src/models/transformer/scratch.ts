/**
 * Float32 work buffers reused across the layers and calls of the packed forward (inference.ts).
 *
 * Why: a prefill allocated each layer's fused q/k/v read-back, its attention staging and its
 * context afresh (~3 MB a layer for a 256-token SmolLM2-135M prompt). V8 counts typed arrays as
 * external memory, and that growth alone started ~5 major collections a call, run on the other
 * core: PyTorch pays no such cost (bench/RESULTS.md, "prefill-gc"). A pool per model keeps one
 * buffer per role, grown on demand, so a repeated call allocates none.
 */

/** Buffers above this many floats (64 MiB) are not kept: a rare huge batch does not pin its peak. */
export const MAX_POOLED_FLOATS = 16 * 2 ** 20;

/**
 * One growable buffer per role name. Callers get a view of exactly the length asked, whose
 * contents are whatever the last user left there: they must write every element they read.
 * Not for concurrent use (the packed forward is synchronous).
 * @example
 * const pool = new ScratchPool();
 * const qkv = pool.take('qkv', n * width); // [n, width], stale contents
 */
export class ScratchPool {
  private readonly buffers = new Map<string, Float32Array>();

  constructor(private readonly maxFloats = MAX_POOLED_FLOATS) {}

  /** A `length`-float view of the `role` buffer (grown by half again when too short), or a fresh array above the cap. */
  take(role: string, length: number): Float32Array {
    if (length > this.maxFloats) return new Float32Array(length);
    let buffer = this.buffers.get(role);
    if (buffer === undefined || buffer.length < length) {
      // Growing by half again: a run of slowly rising sizes reallocates a few times, not every call.
      buffer = new Float32Array(Math.min(this.maxFloats, Math.max(length, Math.ceil((buffer?.length ?? 0) * 1.5))));
      this.buffers.set(role, buffer);
    }
    return buffer.length === length ? buffer : buffer.subarray(0, length);
  }

  /** Floats held now, over every role. */
  get heldFloats(): number {
    let total = 0;
    for (const b of this.buffers.values()) total += b.length;
    return total;
  }

  /** Drops every buffer (the model is disposed). */
  clear(): void {
    this.buffers.clear();
  }
}
