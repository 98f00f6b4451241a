/**
 * The env role's session leases on the in-process bus (the same Bus contract as NATS), with a
 * SimulatedClock driving lease expiry: capacity, release, renewal, reclaim, and stale holders refused.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../../src/core/clock.js';
import '../../../src/envs/index.js';
import { getEnvironmentSpec } from '../../../src/envs/registry.js';
import { MemoryBus } from '../../../src/bus/memory-bus.js';
import { envLeaseSubjects, startEnvLeaseServer } from '../../../src/runtime/nats/env-leases.js';
import { remoteEnvSpec } from '../../../src/runtime/nats/remote-env.js';
import { remoteEnvSession } from '../../../src/runtime/wiring/env-session.js';

const spec = getEnvironmentSpec('babyai');
const settings = { levels: ['GoToRedBall'] };
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

function setup(clock?: SimulatedClock) {
  const bus = new MemoryBus({ encode: true, ...(clock ? { clock } : {}) });
  const logs: string[] = [];
  const server = startEnvLeaseServer({ bus, runId: 'r1', spec, envSettings: settings, capacity: 2, leaseMs: 1000, envTimeoutMs: 5000, workerId: 'w1', log: (l) => logs.push(l), ...(clock ? { clock } : {}) });
  closers.push(() => bus.close(), () => server.close());
  const lease = async (holder: string) => (await bus.request(envLeaseSubjects.lease('r1'), { holder }, { timeoutMs: 1000 })) as { sessionId: string; leaseMs: number };
  return { bus, server, lease, logs };
}

describe('env session leases', () => {
  it('grants up to capacity, refuses more, and hands a released slot out under a new session id', async () => {
    const { bus, server, lease } = setup(new SimulatedClock());
    const a = await lease('ep-a');
    const b = await lease('ep-b');
    expect([a.sessionId, b.sessionId]).toEqual(['w1-0', 'w1-1']);
    expect(a.leaseMs).toBe(1000);
    await expect(lease('ep-c')).rejects.toThrow(/no free session \(2 leased\)/);
    // The leased session is a real BabyAI env: reset and step work through the env-session actor.
    const session = remoteEnvSession(bus, 'r1', a.sessionId, 1000);
    const observation = await session.reset(0);
    expect(observation.text.length).toBeGreaterThan(0);
    const result = await session.step('turn left');
    expect(typeof result.reward).toBe('number');
    await bus.request(envLeaseSubjects.release('r1', a.sessionId), {}, { timeoutMs: 1000 });
    expect(server.leased()).toBe(1);
    const c = await lease('ep-c');
    expect(c.sessionId).toBe('w1-2');
    // The released id answers no more: a stale holder cannot reach the new episode's env.
    await expect(session.reset(0)).rejects.toThrow();
    expect(server.stats()).toEqual({ granted: 3, reclaimed: 0 });
  });

  it('reclaims a lease that was not renewed, keeps one that was, and refuses the stale holder', async () => {
    const clock = new SimulatedClock();
    const { bus, server, lease, logs } = setup(clock);
    const kept = await lease('ep-kept');
    const lost = await lease('ep-lost');
    clock.advance(600);
    expect(await bus.request(envLeaseSubjects.renew('r1', kept.sessionId), {}, { timeoutMs: 1000 })).toEqual({ leaseMs: 1000 });
    // t = 1250: `lost` expired at 1000, `kept` was renewed until 1600.
    clock.advance(650);
    await bus.drain();
    expect(server.leased()).toBe(1);
    expect(server.stats()).toEqual({ granted: 2, reclaimed: 1 });
    expect(logs.join('\n')).toMatch(/lease of session w1-1 \(holder ep-lost\) expired; reclaimed/);
    await expect(bus.request(envLeaseSubjects.renew('r1', lost.sessionId), {}, { timeoutMs: 1000 })).rejects.toThrow();
    await expect(remoteEnvSession(bus, 'r1', lost.sessionId, 1000).reset(0)).rejects.toThrow();
    // The reclaimed slot is free again.
    expect((await lease('ep-next')).sessionId).toBe('w1-2');
  });

  it('remoteEnvSpec leases on the first reset, reuses the lease across episodes, and releases it on close', async () => {
    const { bus, server } = setup();
    const remote = remoteEnvSpec(spec, { bus, runId: 'r1', holder: 'ep-1', envTimeoutMs: 2000, leaseTimeoutMs: 2000 });
    const env = remote.create({ settings });
    expect(env.instruction()).toBe(spec.create({ settings }).instruction());
    expect(server.leased()).toBe(0);
    const local = spec.create({ settings });
    expect((await env.reset(3)).text).toBe((await local.reset(3)).text);
    expect((await env.step('move forward')).observation.text).toBe((await local.step('move forward')).observation.text);
    await env.reset(4);
    expect(server.stats().granted).toBe(1);
    await env.close();
    expect(server.leased()).toBe(0);
  });
});
