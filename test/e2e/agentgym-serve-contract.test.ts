/**
 * The client against `turnwise env serve`, in-process on a free port, for every native environment
 * registered: the Environment contract suite through HTTP, and the same episodes through HTTP and
 * in-process giving the same observations, rewards and flags.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../src/envs/index.js';
import type { AgentGymEnvironment } from '../../src/envs/agentgym/environment.js';
import { startAgentGymServer, type RunningServer } from '../../src/envs/agentgym/server/serve.js';
import type { Environment } from '../../src/envs/environment.js';
import { getEnvironmentSpec, listEnvironments } from '../../src/envs/registry.js';
import { runEnvironmentContract } from '../contracts/environment.contract.js';

const natives = listEnvironments().filter((s) => s.name !== 'agentgym');
const servers = new Map<string, RunningServer>();

beforeAll(async () => {
  for (const spec of natives) servers.set(spec.name, await startAgentGymServer({ spec, port: 0 }));
});
afterAll(async () => {
  for (const server of servers.values()) await server.stop();
});

function sampleIndices(name: string): number[] {
  const indices = getEnvironmentSpec(name).catalog().indices('test');
  return [...new Set([indices[0], indices[Math.floor(indices.length / 2)]])].filter((i): i is number => i !== undefined);
}

function remote(name: string): Environment {
  const server = servers.get(name);
  if (!server) throw new Error(`no server for ${name}`);
  // BabyAI and TextCraft have their own AgentGym client families; the others use the generic contract.
  return getEnvironmentSpec('agentgym').create({ settings: { type: name === 'babyai' || name === 'textcraft' ? name : 'generic', url: server.url, timeoutMs: 5000 } });
}

it('serves at least one native environment', () => {
  expect(natives.map((s) => s.name)).toContain('babyai');
});

for (const spec of natives) {
  runEnvironmentContract('agentgym', () => remote(spec.name), sampleIndices(spec.name));

  describe(`${spec.name} through HTTP equals in-process`, () => {
    it('gives the same observations, rewards, done and success flags on the same actions', async () => {
      const local = spec.create();
      const far = remote(spec.name);
      for (const index of sampleIndices(spec.name)) {
        let a = await local.reset(index);
        const b = await far.reset(index);
        expect(b.text).toBe(a.text);
        expect(b.availableActions).toEqual(a.availableActions);
        for (let t = 0; t < 25; t++) {
          const actions = a.availableActions ?? ['look'];
          const action = actions[(t * 3 + index) % actions.length] as string;
          const x = await local.step(action);
          const y = await far.step(`Thought:\nstep ${t}\n\nAction:\n${action}`);
          expect(y.observation.text).toBe(x.observation.text);
          expect(y.reward).toBeCloseTo(x.reward, 12);
          expect(y.done).toBe(x.done);
          expect(y.success ?? false).toBe(x.success ?? false);
          expect(y.info?.invalid ?? false).toBe(x.info?.invalid ?? false);
          a = x.observation;
          if (x.done) break;
        }
      }
      const instance = (far as AgentGymEnvironment).instanceId;
      expect(servers.get(spec.name)?.sessions.ids).toContain(instance);
      await local.close();
      await far.close();
      // Closing the client gives the server-side instance back.
      expect(servers.get(spec.name)?.sessions.ids).not.toContain(instance);
    });
  });
}
