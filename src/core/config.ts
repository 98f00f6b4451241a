/**
 * Config entry points: `parseConfig` (an object), `loadConfig` (a YAML file), `resolveConfig`
 * (derived values, frozen) and `describeConfig` (every field, for docs/configuration.md). The schema itself is
 * in `./config/schema.ts`.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { InvalidConfigError } from './errors.js';
import { configErrorFrom } from './config/issues.js';
import { applyOverrides, blameOverride, type ConfigOverride } from './config/overrides.js';
import { checkPluginFields, customAlgorithmName, parseCustomAlgorithm } from './config/plugins-check.js';
import { configSchema, type TurnwiseConfig } from './config/schema.js';

export { type ConfigFieldDoc, configMarkdownTable, describeConfig } from './config/describe.js';
export { type DeepReadonly, type DerivedConfig, type ResolvedConfig, resolveConfig } from './config/resolve.js';
export { applyOverrides, type ConfigOverride, parseOverride } from './config/overrides.js';
export { configSchema, type HorizonConfig, type TurnwiseConfig, type TurnwiseConfigInput } from './config/schema.js';

/**
 * Validates a plain object and fills in defaults. Throws `InvalidConfigError` naming the dotted path
 * of the first bad field (the others are listed in its message).
 * @example
 * parseConfig({ algorithm: { lr: 3e-4 } }).algorithm.groupSize; // 8
 * parseConfig({ algorithm: { foo: 1 } }); // InvalidConfigError: invalid config at 'algorithm.foo': unknown key 'foo'; valid keys: name, groupSize, ...
 */
export function parseConfig(input: unknown, source?: string, options: { readonly resolved?: boolean } = {}): TurnwiseConfig {
  // An empty YAML file parses to null: refused, since a file emptied by mistake would otherwise train the whole default config.
  if (input === null || input === undefined) {
    throw new InvalidConfigError('<root>', `the config${source ? ` ${source}` : ''} is empty; write the sections to set (e.g. env: { name: babyai }), or {} to train every default`);
  }
  const raw = withEnvSettingsDefault(input);
  // A registered estimator's section is parsed by its own schema; the rest by the config schema.
  const customName = customAlgorithmName(raw);
  const custom = customName === null ? null : parseCustomAlgorithm(customName, raw, source);
  const checked = custom === null ? raw : { ...(raw as object), algorithm: {} };
  const result = configSchema.safeParse(checked);
  if (!result.success) throw configErrorFrom(result.error, configSchema, checked, source);
  // A resolved config (a run folder's config.json) has every default written out: nothing was set by hand.
  if (options.resolved !== true) {
    refuseShapeWithPretrained(raw, source);
    refuseLoraSettingsWithEngine(raw, source);
  }
  const config: TurnwiseConfig = custom === null ? result.data : { ...result.data, algorithm: custom };
  if (config.algorithm.policyLoss !== 'ppo-clip') {
    // A registered loss lives in this thread only, and the off-policy corrections bring their own loss.
    if (config.train.dataParallel !== 'auto' && config.train.dataParallel > 1) throw new InvalidConfigError('algorithm.policyLoss', `'${config.algorithm.policyLoss}' runs in the learner thread only; set train.dataParallel: 1 (it is ${config.train.dataParallel})`);
    if (config.offPolicy.correction !== 'none') throw new InvalidConfigError('algorithm.policyLoss', `offPolicy.correction '${config.offPolicy.correction}' has its own loss; use policyLoss ppo-clip with it`);
  }
  return checkPluginFields(config, source);
}

/** Fields a pretrained model (`model.from`) brings itself: setting one as well would be ignored, so it is an error. */
export const PRETRAINED_OWNS = ['dModel', 'nLayers', 'nHeads', 'ffnHidden', 'ropeTheta', 'tieEmbeddings'] as const;

/**
 * The config as a run folder records it: every field in force, without what a pretrained model
 * (`model.from`) brings itself (the own-model shape and the tokenizer section are unused there, so
 * writing their defaults would claim a `dModel 64` that the run never had).
 * @example recordedConfig(config).model.dModel // undefined when model.from is set
 */
export function recordedConfig(config: TurnwiseConfig): Record<string, unknown> {
  const { derived: _derived, ...plain } = config as TurnwiseConfig & { derived?: unknown };
  if (plain.model.from === null) return plain;
  const model: Record<string, unknown> = { ...plain.model };
  for (const key of PRETRAINED_OWNS) delete model[key];
  const { tokenizer: _tokenizer, ...rest } = plain;
  return { ...rest, model };
}

function refuseShapeWithPretrained(raw: unknown, source?: string): void {
  const section = (raw as { model?: Record<string, unknown>; tokenizer?: Record<string, unknown> }) ?? {};
  const from = section.model?.from;
  if (typeof from !== 'string') return;
  const where = source ? ` (${source})` : '';
  for (const key of PRETRAINED_OWNS) {
    if (section.model !== undefined && key in section.model) {
      throw new InvalidConfigError(`model.${key}`, `set by ${from}/config.json when model.from is given; remove it${where}`);
    }
  }
  if (section.tokenizer !== undefined && Object.keys(section.tokenizer).length > 0) {
    throw new InvalidConfigError('tokenizer', `the tokenizer of ${from} is used when model.from is given; remove this section${where}`);
  }
}

/** LoRA settings a Tinker server fixes itself (SkyRL tx: alpha 32, every projection): only the rank is sent. */
const ENGINE_OWNS_LORA = ['alpha', 'dropout', 'targetModules', 'rsLora'] as const;

/** With `model.engine: tinker` a hand-set LoRA alpha, dropout, targets or rsLora would be ignored by the server: refused. */
function refuseLoraSettingsWithEngine(raw: unknown, source?: string): void {
  const model = (raw as { model?: { engine?: unknown; lora?: unknown } } | null)?.model;
  if (model?.engine !== 'tinker' || typeof model.lora !== 'object' || model.lora === null) return;
  const where = source ? ` (${source})` : '';
  for (const key of ENGINE_OWNS_LORA) {
    if (key in model.lora) {
      throw new InvalidConfigError(`model.lora.${key}`, `is the server's with model.engine: tinker (only model.lora.rank is sent; the server fixes the rest, e.g. SkyRL tx: alpha 32, every projection); remove it${where}`);
    }
  }
}

/**
 * The schema's `env.settings` default (`{levels: [GoToRedBall]}`) belongs to BabyAI, the default
 * environment: another environment named without settings gets `{}`, not BabyAI's keys.
 */
function withEnvSettingsDefault(raw: unknown): unknown {
  if (typeof raw !== 'object' || raw === null || !('env' in raw)) return raw;
  const env = (raw as { env: unknown }).env;
  if (typeof env !== 'object' || env === null || 'settings' in env) return raw;
  const name = (env as { name?: unknown }).name;
  if (name === undefined || name === 'babyai') return raw;
  return { ...raw, env: { ...env, settings: {} } };
}

/**
 * Reads a YAML config file and parses it with {@link parseConfig}, after applying `--set`
 * overrides (`./config/overrides.ts`) to the raw YAML, so they are validated like the file itself.
 * @example const config = resolveConfig(loadConfig('configs/babyai-grpo.yaml', [parseOverride('train.steps=5')]));
 */
export function loadConfig(path: string, overrides: readonly ConfigOverride[] = []): TurnwiseConfig {
  const raw = readConfigFile(path);
  if (overrides.length === 0) return parseConfig(raw, path);
  try {
    return parseConfig(applyOverrides(raw, overrides), path);
  } catch (error) {
    throw blameOverride(error, overrides);
  }
}

/**
 * The raw (unvalidated) content of a YAML config file; errors name the file and the line.
 * @example const raw = readConfigFile('configs/babyai-grpo.yaml');
 */
export function readConfigFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new InvalidConfigError('<root>', `cannot read config file ${path}: ${(error as Error).message}`, { cause: error });
  }
  try {
    return parseYaml(text);
  } catch (error) {
    const where = error instanceof YAMLParseError && error.linePos ? ` at line ${error.linePos[0].line}, column ${error.linePos[0].col}` : '';
    throw new InvalidConfigError('<root>', `YAML syntax error in ${path}${where}: ${(error as Error).message.split('\n')[0]}`, { cause: error });
  }
}
