/**
 * Where gradient workers write their replies, and their sum in micro-batch order (data
 * parallelism, issue #10): a ring of SharedArrayBuffer slots the pool keeps for its life. A worker
 * writes micro-batch `i`'s gradients into slot `i mod slots` and replies with the count; the main
 * thread adds the slots in index order into one running total.
 *
 * Why slots rather than a new transferred array per reply: at the default shape every reply was a
 * fresh 0.5 MB ArrayBuffer and every publish of the weights a fresh `dataSync` copy, external memory
 * that kept the main thread in mark-compacts (31 in 10 s, taking CPU from the workers, which fill
 * both cores) and the workers in scavenges of up to 16 ms; with the ring and the weights read
 * straight into their shared buffer the main thread ran none, and a data-parallel step of the
 * default shape took 9 % less time on average (bench/RESULTS.md, "attention in one kernel").
 *
 * A slot is handed out again only after the reply that used it before has been added, so a reply
 * that arrives ahead of an earlier one simply waits in its slot; with twice as many slots as
 * workers, a worker that finishes early can go on with a later micro-batch meanwhile.
 */
import { InvalidArgumentError, TurnwiseError } from '../../core/errors.js';

/** One round's sum of replies, in micro-batch order. */
export class ReplyRing {
  private readonly slots: SharedArrayBuffer[];
  private total = new Float32Array(0);
  private length = 0;
  /** The next micro-batch to add; every earlier one is in `total`. */
  private next = 0;
  private readonly arrivedEarly = new Set<number>();
  /** Micro-batches waiting for their slot, by the index whose addition frees it. */
  private readonly waiting = new Map<number, { resolve: () => void; reject: (error: Error) => void }>();
  /** Why this round stopped early (a failed task), or null. */
  private failure: Error | null = null;

  /**
   * @param slotCount slots in the ring (at least the workers in flight)
   * @param capacity floats a slot holds (the longest reply)
   * @example const ring = new ReplyRing(4, replyLength(sizes, n, false, STATS.length));
   */
  constructor(slotCount: number, readonly capacity: number) {
    if (!(Number.isInteger(slotCount) && slotCount >= 1)) throw InvalidArgumentError.format('slotCount', `expected a positive integer, got ${slotCount}`);
    if (!(Number.isInteger(capacity) && capacity >= 1)) throw InvalidArgumentError.format('capacity', `expected a positive integer, got ${capacity}`);
    this.slots = Array.from({ length: slotCount }, () => new SharedArrayBuffer(capacity * Float32Array.BYTES_PER_ELEMENT));
  }

  /** Starts a round whose replies hold `length` floats each (forgetting any unfinished round). */
  begin(length: number): void {
    if (!(Number.isInteger(length) && length >= 1 && length <= this.capacity)) throw InvalidArgumentError.format('length', `expected 1..${this.capacity} floats, got ${length}`);
    if (this.total.length !== length) this.total = new Float32Array(length);
    this.length = length;
    this.next = 0;
    this.arrivedEarly.clear();
    this.waiting.clear();
    this.failure = null;
  }

  /** Ends the round early: every micro-batch still waiting for a slot, and any that asks later, fails with `error`. */
  abort(error: Error): void {
    this.failure ??= error;
    for (const waiter of this.waiting.values()) waiter.reject(this.failure);
    this.waiting.clear();
  }

  /** The slot micro-batch `index` writes into, once the reply that used it before has been added. */
  async slotFor(index: number): Promise<SharedArrayBuffer> {
    if (this.failure !== null) throw this.failure;
    const previous = index - this.slots.length;
    if (previous >= this.next) await new Promise<void>((resolve, reject) => this.waiting.set(previous, { resolve, reject }));
    return this.slots[index % this.slots.length] as SharedArrayBuffer;
  }

  /** Micro-batch `index` replied `floats` values into its slot: adds it, and any that waited for it, in order. */
  arrived(index: number, floats: number): void {
    if (floats !== this.length) throw new TurnwiseError(`gradient worker replied ${floats} values, expected ${this.length}`);
    this.arrivedEarly.add(index);
    while (this.arrivedEarly.delete(this.next)) {
      const reply = new Float32Array(this.slots[this.next % this.slots.length] as SharedArrayBuffer, 0, this.length);
      // The first as is, then float32 adds in order: the sums accumulateGradients makes in one thread.
      if (this.next === 0) this.total.set(reply);
      else for (let i = 0; i < this.length; i++) this.total[i] = (this.total[i] as number) + (reply[i] as number);
      const added = this.next++;
      this.waiting.get(added)?.resolve();
      this.waiting.delete(added);
    }
  }

  /** The sum of the round's `count` replies (valid until the next round begins). */
  result(count: number): Float32Array {
    if (this.next !== count) throw new TurnwiseError(`gradient replies missing: ${this.next} of ${count} added`);
    return this.total;
  }
}
