/**
 * The Bus conformance suite (after Hono's `runTest({ newRouter })`): every Bus
 * implementation runs all of it — no skip list, since every bus we ship passes every case. Tests await events, never sleep; the one timeout test uses a short real
 * timeout because the bus under test owns its clock.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InvalidArgumentError, NoResponderError, RequestTimeoutError } from '../../src/core/errors.js';
import type { Trajectory } from '../../src/core/types.js';
import type { Bus, MessageContext } from '../../src/bus/bus.js';
import { BusClosedError, RemoteError } from '../../src/bus/memory-bus.js';

interface Received {
  readonly payload: unknown;
  readonly context: MessageContext;
}

/** Records deliveries and lets a test await a given count. */
function collector() {
  const items: Received[] = [];
  let waiters: { count: number; resolve: () => void }[] = [];
  return {
    items,
    handler: (payload: unknown, context: MessageContext) => {
      items.push({ payload, context });
      const ready = waiters.filter((w) => items.length >= w.count);
      waiters = waiters.filter((w) => items.length < w.count);
      for (const w of ready) w.resolve();
    },
    waitFor(count: number): Promise<void> {
      if (items.length >= count) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ count, resolve }));
    },
  };
}

/** A promise plus its resolver, to hold a handler open until the test lets it go. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open = () => {};
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/** A small but complete trajectory with every typed-array field set. */
export function sampleTrajectory(): Trajectory {
  const turn = (index: number) => ({
    index,
    observationText: `You see a red ball (turn ${index}).`,
    promptTokens: Int32Array.from([1, 5, 9, index]),
    actionText: 'go forward',
    actionTokens: Int32Array.from([17, 23, 2]),
    actionLogprobs: Float32Array.from([-0.5, -1.25, -0.125]),
    actionLossMask: Uint8Array.from([1, 0, 1]),
    constraint: index === 0 ? null : { allowedOffsets: Int32Array.from([0, 2, 3, 4]), allowedIds: Int32Array.from([17, 18, 23, 2]) },
    policyVersion: 3 + index,
    reward: index === 1 ? 1 : 0,
    invalidAction: false,
  });
  return {
    trajectoryId: 'traj-1',
    taskId: 'babyai_12',
    groupId: 'step-3/babyai_12',
    step: 3,
    turns: [turn(0), turn(1)],
    reward: 1,
    outcome: 'success',
    horizon: 5,
    finalObservationText: 'Done.',
  };
}

type Case = readonly [name: string, body: (bus: Bus) => Promise<void>];

const cases: readonly Case[] = [
  [
    'fans a published message out to every matching subscriber',
    async (bus) => {
      const a = collector();
      const b = collector();
      const other = collector();
      bus.subscribe('episode.done', a.handler);
      bus.subscribe('episode.done', b.handler);
      bus.subscribe('episode.started', other.handler);
      bus.publish('episode.done', { id: 1 });
      await Promise.all([a.waitFor(1), b.waitFor(1)]);
      await bus.drain();
      expect(a.items.map((r) => r.payload)).toEqual([{ id: 1 }]);
      expect(b.items[0].context).toEqual({ subject: 'episode.done', isRequest: false });
      expect(other.items).toHaveLength(0);
    },
  ],
  [
    'matches * to one token and > to one or more tokens',
    async (bus) => {
      const star = collector();
      const tail = collector();
      bus.subscribe('env.*.step', star.handler);
      bus.subscribe('env.>', tail.handler);
      bus.publish('env.babyai.step', 1);
      bus.publish('env.babyai.reset', 2);
      bus.publish('env.babyai.step.extra', 3);
      bus.publish('env', 4);
      await tail.waitFor(3);
      await star.waitFor(1);
      await bus.drain();
      expect(star.items.map((r) => r.payload)).toEqual([1]);
      expect(tail.items.map((r) => r.payload).sort()).toEqual([1, 2, 3]);
      expect(tail.items.find((r) => r.payload === 3)?.context.subject).toBe('env.babyai.step.extra');
    },
  ],
  [
    'runs handlers asynchronously, never inside publish',
    async (bus) => {
      const seen = collector();
      bus.subscribe('tick', seen.handler);
      bus.publish('tick', 1);
      expect(seen.items).toHaveLength(0);
      await seen.waitFor(1);
    },
  ],
  [
    'delivers each message to one member of a queue group and shares the load',
    async (bus) => {
      const members = [collector(), collector()];
      const watcher = collector();
      for (const m of members) bus.subscribe('work.item', m.handler, { queue: 'workers' });
      bus.subscribe('work.item', watcher.handler);
      const total = 40;
      for (let i = 0; i < total; i++) bus.publish('work.item', i);
      await watcher.waitFor(total);
      await bus.drain();
      const got = members.flatMap((m) => m.items.map((r) => r.payload as number));
      expect(got.sort((x, y) => x - y)).toEqual(Array.from({ length: total }, (_, i) => i));
      for (const m of members) expect(m.items.length).toBeGreaterThan(0);
    },
  ],
  [
    'stops delivering after unsubscribe',
    async (bus) => {
      const kept = collector();
      const dropped = collector();
      bus.subscribe('news', kept.handler);
      const sub = bus.subscribe('news', dropped.handler);
      expect(sub.subject).toBe('news');
      sub.unsubscribe();
      sub.unsubscribe();
      bus.publish('news', 'x');
      await kept.waitFor(1);
      await bus.drain();
      expect(dropped.items).toHaveLength(0);
    },
  ],
  [
    'answers a request with the handler return value, sync or async',
    async (bus) => {
      bus.subscribe('math.double', (n, context) => {
        expect(context.isRequest).toBe(true);
        return (n as number) * 2;
      });
      bus.subscribe('math.square', async (n) => (n as number) ** 2);
      await expect(bus.request('math.double', 21, { timeoutMs: 5000 })).resolves.toBe(42);
      await expect(bus.request('math.square', 7, { timeoutMs: 5000 })).resolves.toBe(49);
    },
  ],
  [
    'routes a request to one member of a queue group',
    async (bus) => {
      const calls: string[] = [];
      for (const name of ['a', 'b']) {
        bus.subscribe(
          'svc.echo',
          (p) => {
            calls.push(name);
            return p;
          },
          { queue: 'svc' },
        );
      }
      for (let i = 0; i < 6; i++) await expect(bus.request('svc.echo', i, { timeoutMs: 5000 })).resolves.toBe(i);
      await bus.drain();
      expect(calls).toHaveLength(6);
    },
  ],
  [
    'rejects a request nobody listens to with NoResponderError',
    async (bus) => {
      bus.subscribe('other.subject', () => 1);
      await expect(bus.request('nobody.here', 1, { timeoutMs: 5000 })).rejects.toBeInstanceOf(NoResponderError);
    },
  ],
  [
    'rejects a request that gets no reply in time with RequestTimeoutError',
    async (bus) => {
      const hold = gate();
      bus.subscribe('slow.op', () => hold.promise);
      const error = await bus.request('slow.op', 1, { timeoutMs: 30 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RequestTimeoutError);
      expect((error as RequestTimeoutError).subject).toBe('slow.op');
      hold.open();
      await bus.drain();
    },
  ],
  [
    'rejects the requester with RemoteError carrying the remote message when the handler throws',
    async (bus) => {
      bus.subscribe('bad.sync', () => {
        throw new RangeError('index 9 out of range');
      });
      bus.subscribe('bad.async', async () => {
        throw new Error('env crashed');
      });
      const sync = await bus.request('bad.sync', 1, { timeoutMs: 5000 }).catch((e: unknown) => e);
      expect(sync).toBeInstanceOf(RemoteError);
      expect((sync as RemoteError).remoteMessage).toBe('index 9 out of range');
      expect((sync as RemoteError).remoteName).toBe('RangeError');
      expect((sync as RemoteError).subject).toBe('bad.sync');
      await expect(bus.request('bad.async', 1, { timeoutMs: 5000 })).rejects.toThrow(/env crashed/);
    },
  ],
  [
    'drain waits for in-flight handlers, including ones they trigger',
    async (bus) => {
      const order: string[] = [];
      const started = collector();
      const hold = gate();
      bus.subscribe('job.first', async (p, c) => {
        started.handler(p, c);
        await hold.promise;
        order.push('first');
        bus.publish('job.second', 2);
      });
      bus.subscribe('job.second', async () => {
        order.push('second');
      });
      bus.publish('job.first', 1);
      await started.waitFor(1);
      let drained = false;
      const draining = bus.drain().then(() => {
        drained = true;
      });
      await Promise.resolve();
      expect(drained).toBe(false);
      hold.open();
      await draining;
      expect(order).toEqual(['first', 'second']);
    },
  ],
  [
    'close drains, then refuses publish, subscribe and request; close is idempotent',
    async (bus) => {
      const seen = collector();
      bus.subscribe('last.words', seen.handler);
      bus.publish('last.words', 'bye');
      await Promise.all([bus.close(), bus.close()]);
      expect(seen.items).toHaveLength(1);
      expect(() => bus.publish('last.words', 'again')).toThrow(BusClosedError);
      expect(() => bus.subscribe('x', () => 1)).toThrow(BusClosedError);
      await expect(bus.request('last.words', 1, { timeoutMs: 100 })).rejects.toBeInstanceOf(BusClosedError);
      await bus.close();
    },
  ],
  [
    'rejects invalid subjects with InvalidArgumentError',
    async (bus) => {
      expect(() => bus.publish('env.*', 1)).toThrow(InvalidArgumentError);
      expect(() => bus.publish('env..step', 1)).toThrow(InvalidArgumentError);
      expect(() => bus.subscribe('env.>.step', () => 1)).toThrow(InvalidArgumentError);
      await expect(bus.request('env.>', 1, { timeoutMs: 100 })).rejects.toBeInstanceOf(InvalidArgumentError);
    },
  ],
  [
    'keeps typed arrays as their own class in messages and replies',
    async (bus) => {
      const seen = collector();
      bus.subscribe('learner.trajectory', seen.handler);
      bus.subscribe('sampler.act', (p) => ({
        tokens: Int32Array.from((p as { ids: number[] }).ids),
        logprobs: Float32Array.from([-0.25]),
        values: Float64Array.from([0.5]),
        mask: Uint8Array.from([1]),
      }));
      const trajectory = sampleTrajectory();
      bus.publish('learner.trajectory', trajectory);
      await seen.waitFor(1);
      const got = seen.items[0].payload as Trajectory;
      expect(got).toEqual(trajectory);
      expect(got.turns[1].promptTokens).toBeInstanceOf(Int32Array);
      expect(got.turns[1].actionLogprobs).toBeInstanceOf(Float32Array);
      expect(got.turns[1].actionLossMask).toBeInstanceOf(Uint8Array);
      expect(got.turns[1].constraint?.allowedIds).toBeInstanceOf(Int32Array);
      const reply = (await bus.request('sampler.act', { ids: [4, 5] }, { timeoutMs: 5000 })) as Record<string, unknown>;
      expect(reply.tokens).toEqual(Int32Array.from([4, 5]));
      expect(reply.logprobs).toBeInstanceOf(Float32Array);
      expect(reply.values).toBeInstanceOf(Float64Array);
      expect(reply.mask).toBeInstanceOf(Uint8Array);
    },
  ],
];

/**
 * Registers the Bus conformance suite for one implementation.
 * @example runBusContract('MemoryBus', () => new MemoryBus());
 */
export function runBusContract(name: string, makeBus: () => Promise<Bus> | Bus): void {
  describe(`Bus contract: ${name}`, () => {
    let bus: Bus;
    beforeEach(async () => {
      bus = await makeBus();
    });
    afterEach(async () => {
      await bus.close();
    });
    for (const [testName, body] of cases) it(testName, () => body(bus));
  });
}
