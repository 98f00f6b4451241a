/**
 * Registers `agentgym` (imported by `src/envs/index.ts`). Native twins are looked up when used, so
 * the order in which environments register does not matter.
 */
import type { EnvironmentSpec } from '../environment.js';
import { getEnvironmentSpec, listEnvironments, registerEnvironment } from '../registry.js';
import { createAgentGymSpec } from './spec.js';

function nativeSpec(name: string): EnvironmentSpec | undefined {
  return name !== 'agentgym' && listEnvironments().some((s) => s.name === name) ? getEnvironmentSpec(name) : undefined;
}

registerEnvironment(createAgentGymSpec(nativeSpec));
