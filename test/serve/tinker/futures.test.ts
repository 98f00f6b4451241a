import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../../src/core/errors.js';
import { FutureStore } from '../../../src/serve/tinker/futures.js';

const FIRST = 1_700_000_000_000_000;

describe('the Tinker server’s futures', () => {
  it('runs one queue in submission order and others independently; failures carry who is at fault', async () => {
    const store = new FutureStore(FIRST);
    const order: string[] = [];
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const a = store.submit('m1', async () => {
      await gate;
      order.push('a');
      return { kind: 'json', body: 'a' };
    });
    const b = store.submit('m1', async () => {
      order.push('b');
      throw InvalidArgumentError.format('x', 'bad');
    });
    const c = store.submit('m2', async () => {
      order.push('c');
      throw new Error('boom');
    });
    expect([a, b, c]).toEqual([String(FIRST), String(FIRST + 1), String(FIRST + 2)]);
    await store.wait(c, 1000);
    expect(order).toEqual(['c']);
    release();
    await store.drain();
    expect(order).toEqual(['c', 'a', 'b']);
    expect(store.get(b)?.error).toEqual({ message: "invalid 'x': bad", category: 'user' });
    expect(store.get(c)?.error?.category).toBe('server');
  });

  it('forgets the oldest finished unpinned futures past its bound, keeps pinned ones, and knows the forgotten and earlier ids', async () => {
    const store = new FutureStore(FIRST, 2);
    const ids = [store.submit('q', async () => ({ kind: 'json', body: 0 }), true), ...[1, 2, 3].map((n) => store.submit('q', async () => ({ kind: 'json', body: n })))];
    await store.drain();
    expect(ids.map((id) => store.get(id) !== undefined)).toEqual([true, false, true, true]);
    expect(store.isGone(ids[1] as string)).toBe(true);
    expect(store.isGone(String(FIRST - 5))).toBe(true); // an earlier run's
    expect(store.isGone(String(FIRST + 99))).toBe(false); // never handed out
    expect(store.isGone('999999')).toBe(false);
  });

  it('answers a wait at its bound with the future still pending', async () => {
    const store = new FutureStore(FIRST);
    const id = store.submit('q', () => new Promise(() => {}));
    expect((await store.wait(id, 20))?.state).toBe('pending');
    expect(await store.wait('nope', 20)).toBeUndefined();
  });
});
