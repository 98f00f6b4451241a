/**
 * Validates an environment's `env.settings` with its zod schema and turns a failure into an
 * `InvalidConfigError` naming the exact field (`env.settings.size`).
 */
import type { z } from 'zod';
import { InvalidConfigError } from '../core/errors.js';
import type { EnvironmentOptions } from './environment.js';

/**
 * Parses `options.settings` (undefined = all defaults).
 * @example const s = parseEnvSettings(frozenLakeSettingsSchema, { settings: { size: 4 } });
 */
export function parseEnvSettings<S extends z.ZodType>(schema: S, options: EnvironmentOptions | undefined): z.output<S> {
  const result = schema.safeParse(options?.settings ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = ['env', 'settings', ...(issue?.path ?? []).map(String)].join('.');
  const others = result.error.issues.length > 1 ? ` (and ${result.error.issues.length - 1} more)` : '';
  throw new InvalidConfigError(path, `${issue?.message ?? 'invalid value'}${others}`);
}
