import { describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../src/core/clock.js';
import { InvalidArgumentError, InvalidMessageError, RequestTimeoutError } from '../../src/core/errors.js';
import type { MessageContext } from '../../src/bus/bus.js';
import { MemoryBus, RemoteError } from '../../src/bus/memory-bus.js';

describe('MemoryBus', () => {
  it('times out a request when the simulated clock passes timeoutMs', async () => {
    const clock = new SimulatedClock();
    const bus = new MemoryBus({ clock });
    let release = () => {};
    bus.subscribe('slow', () => new Promise<void>((r) => (release = r)));
    const pending = bus.request('slow', 1, { timeoutMs: 1000 }).catch((e: unknown) => e);
    await Promise.resolve();
    clock.advance(999);
    clock.advance(1);
    const error = await pending;
    expect(error).toBeInstanceOf(RequestTimeoutError);
    expect((error as RequestTimeoutError).timeoutMs).toBe(1000);
    release();
    await bus.close();
  });

  it('clears the timer once the reply arrives', async () => {
    const cleared: unknown[] = [];
    const clock = new (class extends SimulatedClock {
      override clearTimeout(handle: unknown): void {
        cleared.push(handle);
        super.clearTimeout(handle);
      }
    })();
    const bus = new MemoryBus({ clock });
    bus.subscribe('fast', (n) => n);
    await expect(bus.request('fast', 5, { timeoutMs: 10 })).resolves.toBe(5);
    expect(cleared).toHaveLength(1);
    await bus.close();
  });

  it('rotates round-robin through a queue group in subscription order', async () => {
    const bus = new MemoryBus();
    const order: string[] = [];
    for (const name of ['a', 'b', 'c']) bus.subscribe('job', () => order.push(name), { queue: 'workers' });
    for (let i = 0; i < 7; i++) bus.publish('job', i);
    await bus.drain();
    expect(order).toEqual(['a', 'b', 'c', 'a', 'b', 'c', 'a']);
    await bus.close();
  });

  it('treats the same queue name on different patterns as different groups, as NATS does', async () => {
    const bus = new MemoryBus();
    const got: string[] = [];
    bus.subscribe('job.*', () => got.push('star'), { queue: 'q' });
    bus.subscribe('job.run', () => got.push('exact'), { queue: 'q' });
    bus.publish('job.run', 1);
    await bus.drain();
    expect(got.sort()).toEqual(['exact', 'star']);
    await bus.close();
  });

  it('with encode: true, rejects an unserializable payload at publish, naming the path', () => {
    const bus = new MemoryBus({ encode: true });
    bus.subscribe('x', () => 1);
    expect(() => bus.publish('x', { turns: [{ f: () => 1 }] })).toThrow(InvalidMessageError);
    expect(() => bus.publish('x', { turns: [{ f: () => 1 }] })).toThrow(/on 'x': at 'payload\.turns\[0\]\.f'/);
  });

  it('with encode: true, rejects the requester when the reply is unserializable', async () => {
    const bus = new MemoryBus({ encode: true });
    bus.subscribe('bad.reply', () => ({ callback: () => 1 }));
    await expect(bus.request('bad.reply', 1, { timeoutMs: 1000 })).rejects.toThrow(/at 'payload\.callback'/);
    await bus.close();
  });

  it('with encode: true, gives each subscriber its own copy', async () => {
    const bus = new MemoryBus({ encode: true });
    const seen: Int32Array[] = [];
    bus.subscribe('t', (p) => {
      const tokens = (p as { tokens: Int32Array }).tokens;
      tokens[0] = 99;
      seen.push(tokens);
    });
    bus.subscribe('t', (p) => seen.push((p as { tokens: Int32Array }).tokens));
    const sent = { tokens: Int32Array.from([1, 2]) };
    bus.publish('t', sent);
    await bus.drain();
    expect(sent.tokens[0]).toBe(1);
    expect(seen.map((t) => t[0]).sort()).toEqual([1, 99]);
  });

  it('without encode, passes the payload by reference', async () => {
    const bus = new MemoryBus();
    const sent = { v: 1 };
    let got: unknown;
    bus.subscribe('r', (p) => {
      got = p;
    });
    bus.publish('r', sent);
    await bus.drain();
    expect(got).toBe(sent);
  });

  it('reports a throwing publish handler to onHandlerError and keeps delivering', async () => {
    const errors: [string, MessageContext][] = [];
    const bus = new MemoryBus({ onHandlerError: (e, c) => errors.push([(e as Error).message, c]) });
    const ok: number[] = [];
    bus.subscribe('e', () => {
      throw new Error('boom');
    });
    bus.subscribe('e', async () => {
      throw new Error('async boom');
    });
    bus.subscribe('e', (p) => ok.push(p as number));
    bus.publish('e', 1);
    await bus.drain();
    expect(errors.map(([m]) => m).sort()).toEqual(['async boom', 'boom']);
    expect(errors[0][1]).toEqual({ subject: 'e', isRequest: false });
    expect(ok).toEqual([1]);
  });

  it('wraps a non-Error throw in RemoteError', async () => {
    const bus = new MemoryBus();
    bus.subscribe('s', () => {
      throw 'plain string';
    });
    const error = (await bus.request('s', 1, { timeoutMs: 1000 }).catch((e: unknown) => e)) as RemoteError;
    expect(error).toBeInstanceOf(RemoteError);
    expect(error.message).toBe("handler for 's' failed: Error: plain string");
  });

  it('does not deliver to a subscription removed before its microtask ran', async () => {
    const bus = new MemoryBus();
    let calls = 0;
    const sub = bus.subscribe('late', () => calls++);
    bus.publish('late', 1);
    sub.unsubscribe();
    await bus.drain();
    expect(calls).toBe(0);
    expect(bus.subscriptionCount).toBe(0);
  });

  it('validates request timeouts and queue names', async () => {
    const bus = new MemoryBus();
    bus.subscribe('a', () => 1);
    await expect(bus.request('a', 1, { timeoutMs: 0 })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(bus.request('a', 1, { timeoutMs: Number.NaN })).rejects.toThrow(/timeoutMs/);
    expect(() => bus.subscribe('a', () => 1, { queue: '' })).toThrow(/queue/);
  });

  it('updates routes when subscriptions change between publishes', async () => {
    const bus = new MemoryBus();
    const got: string[] = [];
    bus.subscribe('r.x', () => got.push('first'));
    bus.publish('r.x', 1);
    await bus.drain();
    bus.subscribe('r.*', () => got.push('second'));
    bus.publish('r.x', 2);
    await bus.drain();
    expect(got).toEqual(['first', 'first', 'second']);
  });
});
