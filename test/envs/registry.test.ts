import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/core/errors.js';
import type { EnvironmentSpec } from '../../src/envs/environment.js';
import { getEnvironmentSpec, listEnvironments, registerEnvironment } from '../../src/envs/registry.js';

describe('environment registry', () => {
  it('has babyai registered', () => {
    const spec = getEnvironmentSpec('babyai');
    expect(spec.name).toBe('babyai');
    expect(spec.create().name).toBe('babyai');
    expect(listEnvironments().map((s) => s.name)).toContain('babyai');
  });

  it('throws InvalidArgumentError listing the valid names for an unknown environment', () => {
    expect(() => getEnvironmentSpec('nope')).toThrow(InvalidArgumentError);
    expect(() => getEnvironmentSpec('nope')).toThrow(/babyai/);
  });

  it('refuses a second spec under a taken name', () => {
    const spec = getEnvironmentSpec('babyai');
    expect(() => registerEnvironment(spec)).toThrow(/already registered/);
  });

  it('registers a new environment', () => {
    const babyai = getEnvironmentSpec('babyai');
    const spec: EnvironmentSpec = { ...babyai, name: 'test_copy_env' };
    registerEnvironment(spec);
    expect(getEnvironmentSpec('test_copy_env')).toBe(spec);
  });
});
