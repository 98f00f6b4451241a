/**
 * Environment registry: name -> spec. Built-in environments register here at import; others call
 * {@link registerEnvironment}.
 */
import { InvalidArgumentError } from '../core/errors.js';
import { anotherCopyHint, noteRegistration } from '../core/plugin-copies.js';
import { babyaiSpec } from './babyai/index.js';
import type { EnvironmentSpec } from './environment.js';

const specs = new Map<string, EnvironmentSpec>();

/**
 * Adds an environment. Names are unique.
 * @example registerEnvironment({ name: 'myenv', description: '...', create, catalog, corpus })
 */
export function registerEnvironment(spec: EnvironmentSpec): void {
  if (!/^[a-z][a-z0-9_]*$/.test(spec.name)) throw InvalidArgumentError.format('spec.name', `expected lower-case letters, digits and underscores, got ${JSON.stringify(spec.name)}`);
  if (specs.has(spec.name)) throw InvalidArgumentError.format('spec.name', `environment ${JSON.stringify(spec.name)} is already registered`);
  specs.set(spec.name, spec);
  noteRegistration('environment', spec.name);
}

/**
 * The spec registered under `name`.
 * @example getEnvironmentSpec('babyai').create()
 */
export function getEnvironmentSpec(name: string): EnvironmentSpec {
  const spec = specs.get(name);
  if (spec === undefined) {
    throw InvalidArgumentError.format('env.name', `unknown environment ${JSON.stringify(name)}; valid: ${[...specs.keys()].sort().join(', ')}${anotherCopyHint('environment', name)}`);
  }
  return spec;
}

/**
 * Registered specs, sorted by name.
 * @example listEnvironments().map((s) => s.name) // ['babyai', ...]
 */
export function listEnvironments(): EnvironmentSpec[] {
  return [...specs.values()].sort((a, b) => a.name.localeCompare(b.name));
}

registerEnvironment(babyaiSpec);
