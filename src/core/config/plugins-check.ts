/**
 * The config's plug-in names checked against the registries (`src/core/plugin-registry.ts`):
 * `algorithm.name` may name a registered advantage estimator besides the built-in algorithms,
 * `algorithm.policyLoss` a registered loss and `reward.shaper` a registered process-reward hook;
 * each one's settings are parsed by its own schema. Errors name the field and list the valid names.
 */
import { z } from 'zod';
import { InvalidConfigError } from '../errors.js';
import { anotherCopyHint } from '../plugin-copies.js';
import { type PluginKind, pluginRegistry } from '../plugin-registry.js';
import { BUILT_IN_ALGORITHMS, type CustomAlgorithmConfig, customAlgorithmSchema } from './algorithm-schema.js';
import { configErrorFrom } from './issues.js';

/** The raw `algorithm.name` when it is not a built-in algorithm, else null. */
export function customAlgorithmName(raw: unknown): string | null {
  const algorithm = (raw as { algorithm?: { name?: unknown } } | null)?.algorithm;
  const name = typeof algorithm === 'object' && algorithm !== null ? algorithm.name : undefined;
  return typeof name === 'string' && !BUILT_IN_ALGORITHMS.includes(name) ? name : null;
}

/**
 * Parses the `algorithm` section of a registered estimator (errors name `algorithm.<field>`).
 * @example parseCustomAlgorithm('centered', raw, 'configs/x.yaml')
 */
export function parseCustomAlgorithm(name: string, raw: unknown, source?: string): CustomAlgorithmConfig {
  const registry = pluginRegistry('advantageEstimator');
  const custom = registry?.list().filter((e) => e.builtIn !== true).map((e) => e.name) ?? [];
  if (registry === undefined || !registry.has(name) || registry.get(name).builtIn === true) {
    const registered = custom.length > 0 ? `, or a registered estimator: ${custom.join(', ')}` : ' (register an estimator with registerAdvantageEstimator to use its name)';
    throw new InvalidConfigError('algorithm.name', `unknown algorithm '${name}'; valid: ${BUILT_IN_ALGORITHMS.join(', ')}${registered}${source !== undefined ? ` (in ${source})` : ''}${anotherCopyHint('advantageEstimator', name)}`);
  }
  const schema = z.object({ algorithm: customAlgorithmSchema(name, registry.get(name).settings) });
  const input = { algorithm: (raw as { algorithm: unknown }).algorithm };
  const result = schema.safeParse(input);
  if (!result.success) throw configErrorFrom(result.error, schema, input, source);
  return result.data.algorithm as CustomAlgorithmConfig;
}

/** `settings` parsed by the schema of the plug-in `name`; errors name `<section>.<key>.<field>`. */
function checkOne(kind: PluginKind, name: string, settings: unknown, section: string, key: string, source?: string): unknown {
  const registry = pluginRegistry(kind);
  // Not loaded yet (a bare config parse): the runtime checks the name again when it looks it up.
  if (registry === undefined) return settings;
  const schema = registry.get(name).settings ?? z.object({}).strict(); // an unknown name throws, naming the field and the valid names
  const wrapped = z.object({ [key]: schema });
  const input = { [key]: settings };
  const result = wrapped.safeParse(input);
  if (!result.success) {
    const error = configErrorFrom(result.error, wrapped, input, source);
    throw new InvalidConfigError(`${section}.${error.path}`, error.detail, { cause: error });
  }
  return (result.data as Record<string, unknown>)[key];
}

/**
 * Checks the policy loss's and the reward shaper's names and settings; returns the sections with
 * the settings as their schemas parsed them (defaults filled in).
 * @example const { algorithm, reward } = checkPluginFields(config, 'configs/x.yaml');
 */
export function checkPluginFields<
  C extends { algorithm: { policyLoss: string; policyLossSettings: Record<string, unknown> }; reward: { shaper: string | null; settings: Record<string, unknown> } },
>(config: C, source?: string): C {
  const { algorithm, reward } = config;
  return {
    ...config,
    algorithm: { ...algorithm, policyLossSettings: checkOne('policyLoss', algorithm.policyLoss, algorithm.policyLossSettings, 'algorithm', 'policyLossSettings', source) as Record<string, unknown> },
    reward: reward.shaper === null ? reward : { ...reward, settings: checkOne('rewardShaper', reward.shaper, reward.settings, 'reward', 'settings', source) as Record<string, unknown> },
  };
}
