/**
 * The client against recorded exchanges of every AgentGym server type (written from the
 * reference, `fixtures/*.json`): the exact requests it sends (id key, bodies, paths, query
 * strings, content-type) and how it reads each answer shape.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { AGENTGYM_TYPES } from '../../src/envs/agentgym/adapters/types.js';
import type { AgentGymEnvironment } from '../../src/envs/agentgym/environment.js';
import { createAgentGymSpec } from '../../src/envs/agentgym/spec.js';
import { type FixtureServer, loadFixture, startFixtureServer } from '../envs/agentgym/fixture-server.js';

const spec = createAgentGymSpec(() => undefined);
let server: FixtureServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

describe('AgentGym client against recorded exchanges', () => {
  for (const type of AGENTGYM_TYPES.filter((t) => t !== 'generic')) {
    it(`speaks the ${type} protocol`, async () => {
      const fixture = loadFixture(type);
      server = await startFixtureServer(fixture.exchanges);
      const env = spec.create({ settings: { ...fixture.settings, url: server.url, timeoutMs: 2000 } }) as AgentGymEnvironment;
      expect(env.instruction().length).toBeGreaterThan(20);
      const first = await env.reset(fixture.index);
      if (fixture.first !== undefined) expect(first.text).toBe(fixture.first);
      if (fixture.firstEndsWith !== undefined) expect(first.text.endsWith(`\n${fixture.firstEndsWith}`)).toBe(true);
      if (fixture.firstContains !== undefined) expect(first.text).toContain(fixture.firstContains);
      if (fixture.expect.availableActions) expect(first.availableActions).toEqual(fixture.expect.availableActions);
      const result = await env.step(fixture.action);
      expect(result.reward).toBe(fixture.expect.reward);
      expect(result.done).toBe(fixture.expect.done);
      expect(result.success).toBe(fixture.expect.success);
      expect(result.info?.action).toBe(fixture.sent);
      await env.close();
      expect(server.mismatches).toEqual([]);
      expect(server.remaining()).toBe(0);
      // Every request carries a JSON content-type (AgentGym's FastAPI servers need it).
      expect(server.seen.every((r) => r.method === 'GET' || r.contentType === 'application/json')).toBe(true);
    });
  }

  it('refuses locally what AgentGym clients refuse, without a request', async () => {
    const fixture = loadFixture('webarena');
    server = await startFixtureServer(fixture.exchanges);
    const env = spec.create({ settings: { type: 'webarena', url: server.url } });
    await env.reset(fixture.index);
    const before = server.seen.length;
    const refused = await env.step('I will click the button');
    expect(refused.info?.invalid).toBe(true);
    expect(refused.observation.text).toContain('triple backticks');
    expect(server.seen.length).toBe(before);
    server.setFault(null);
  });

  it('closes cleanly where the server has no /close (WebShop): no request, instance pooled for the next environment', async () => {
    const fixture = loadFixture('webshop');
    const again = fixture.exchanges.filter((e) => e.path !== '/create');
    server = await startFixtureServer([...fixture.exchanges, ...again]);
    const first = spec.create({ settings: { type: 'webshop', url: server.url } }) as AgentGymEnvironment;
    const keep = spec.create({ settings: { type: 'webshop', url: server.url } }); // holds the shared connection open
    await first.reset(fixture.index);
    await first.step(fixture.action);
    await first.close();
    expect(server.seen.some((r) => r.path === '/close')).toBe(false);
    const second = spec.create({ settings: { type: 'webshop', url: server.url } }) as AgentGymEnvironment;
    await second.reset(fixture.index);
    expect(second.instanceId).toBe(17); // reused: no second /create
    await second.step(fixture.action);
    expect(server.seen.filter((r) => r.path === '/create').length).toBe(1);
    expect(server.mismatches).toEqual([]);
    await second.close();
    await keep.close();
  });
});
