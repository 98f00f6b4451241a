import { describe, expect, it } from 'vitest';
import { ReplyRing } from '../../src/learner/data-parallel/reply-ring.js';

// The data-parallel reply ring: replies written into shared slots are added in micro-batch order
// whatever order they arrive in, a slot is handed out again only after its previous reply was
// added, and a failed round releases everything waiting on it.

/** Writes micro-batch `index`'s reply (values index + 1, index + 2, ...) into its slot, as a worker does. */
function write(slot: SharedArrayBuffer, index: number, length: number): void {
  const view = new Float32Array(slot, 0, length);
  for (let i = 0; i < length; i++) view[i] = Math.fround(0.1 * (index + 1) + i);
}

/** The float32 sum of replies 0..count-1 added in index order (the single-process order). */
function inOrderSum(count: number, length: number): Float32Array {
  const total = new Float32Array(length);
  for (let index = 0; index < count; index++) {
    for (let i = 0; i < length; i++) total[i] = (total[i] as number) + Math.fround(0.1 * (index + 1) + i);
  }
  return total;
}

describe('ReplyRing', () => {
  it('adds replies that arrive out of order in micro-batch order, reusing slots only once added', async () => {
    const [count, length] = [7, 5];
    const ring = new ReplyRing(3, 8);
    ring.begin(length);
    const slots = await Promise.all([0, 1, 2].map((i) => ring.slotFor(i)));
    expect(new Set(slots).size).toBe(3);
    // Micro-batch 3 needs slot 0, free only once reply 0 is added.
    let third: SharedArrayBuffer | null = null;
    const waiting = ring.slotFor(3).then((slot) => {
      third = slot;
    });
    write(slots[2] as SharedArrayBuffer, 2, length);
    ring.arrived(2, length);
    write(slots[1] as SharedArrayBuffer, 1, length);
    ring.arrived(1, length);
    await Promise.resolve();
    expect(third, 'slot 0 still holds reply 0, not yet arrived').toBeNull();
    write(slots[0] as SharedArrayBuffer, 0, length);
    ring.arrived(0, length);
    await waiting;
    expect(third).toBe(slots[0]);
    for (let index = 3; index < count; index++) {
      const slot = index === 3 ? (third as unknown as SharedArrayBuffer) : await ring.slotFor(index);
      write(slot, index, length);
      ring.arrived(index, length);
    }
    expect(ring.result(count)).toEqual(inOrderSum(count, length));
  });

  it('starts each round afresh and refuses a round whose replies are missing or of the wrong length', async () => {
    const ring = new ReplyRing(2, 4);
    for (const length of [4, 2]) {
      ring.begin(length);
      for (let index = 0; index < 3; index++) {
        write(await ring.slotFor(index), index, length);
        ring.arrived(index, length);
      }
      expect(ring.result(3)).toEqual(inOrderSum(3, length));
    }
    ring.begin(3);
    write(await ring.slotFor(0), 0, 3);
    ring.arrived(0, 3);
    expect(() => ring.result(2)).toThrow(/replies missing: 1 of 2/);
    expect(() => ring.arrived(1, 2)).toThrow(/replied 2 values, expected 3/);
    expect(() => ring.begin(5)).toThrow(/'length': expected 1\.\.4 floats, got 5/);
    expect(() => new ReplyRing(0, 4)).toThrow(/slotCount/);
  });

  it('rejects micro-batches waiting for a slot, and later ones, once the round is aborted', async () => {
    const ring = new ReplyRing(1, 2);
    ring.begin(2);
    await ring.slotFor(0);
    const waiting = ring.slotFor(1);
    ring.abort(new Error('worker failed'));
    await expect(waiting).rejects.toThrow('worker failed');
    await expect(ring.slotFor(2)).rejects.toThrow('worker failed');
    ring.begin(2);
    await expect(ring.slotFor(0)).resolves.toBeInstanceOf(SharedArrayBuffer);
  });
});
