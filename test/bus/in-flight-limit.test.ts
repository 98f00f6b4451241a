/**
 * Bounded in-flight requests per worker: excess requests wait in order and are all answered.
 */
import { describe, expect, it } from 'vitest';
import { MemoryBus } from '../../src/bus/memory-bus.js';
import { limitInFlight } from '../../src/bus/in-flight-limit.js';

describe('limitInFlight', () => {
  it('handles at most N requests at once; the rest wait in arrival order and none is dropped', async () => {
    const bus = new MemoryBus();
    const limited = limitInFlight(bus, 2);
    const started: number[] = [];
    const gates = new Map<number, () => void>();
    let peak = 0;
    limited.subscribe('w.act', (payload) => {
      const n = (payload as { n: number }).n;
      started.push(n);
      peak = Math.max(peak, limited.inFlight());
      return new Promise<number>((resolve) => gates.set(n, () => resolve(n * 10)));
    });
    // Control messages are not limited: they pass while every slot is busy.
    const controls: unknown[] = [];
    limited.subscribe('w.weights', (payload) => {
      controls.push(payload);
    });
    const replies = [0, 1, 2, 3, 4].map((n) => bus.request('w.act', { n }, { timeoutMs: 10_000 }));
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual([0, 1]);
    expect(limited.waiting()).toBe(3);
    bus.publish('w.weights', { version: 3 });
    await new Promise((resolve) => setImmediate(resolve));
    expect(controls).toEqual([{ version: 3 }]);
    // Finishing request 1 lets the oldest waiter (2) in; then 0 lets 3 in, and so on.
    gates.get(1)?.();
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual([0, 1, 2]);
    gates.get(0)?.();
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual([0, 1, 2, 3]);
    gates.get(2)?.();
    await new Promise((resolve) => setImmediate(resolve));
    gates.get(3)?.();
    gates.get(4)?.();
    expect(await Promise.all(replies)).toEqual([0, 10, 20, 30, 40]);
    expect(peak).toBe(2);
    expect(limited.inFlight()).toBe(0);
    expect(limited.waiting()).toBe(0);
    await bus.close();
  });

  it('frees the slot when a handler throws, and rejects a bad limit naming the field', async () => {
    const bus = new MemoryBus();
    const limited = limitInFlight(bus, 1);
    limited.subscribe('w.act', (payload) => {
      if ((payload as { fail: boolean }).fail) throw new Error('boom');
      return 'ok';
    });
    await expect(bus.request('w.act', { fail: true }, { timeoutMs: 1000 })).rejects.toThrow(/boom/);
    expect(await bus.request('w.act', { fail: false }, { timeoutMs: 1000 })).toBe('ok');
    expect(limited.inFlight()).toBe(0);
    expect(() => limitInFlight(bus, 0)).toThrow(/maxInFlight/);
    await bus.close();
  });
});
