/**
 * `--set a.b=value` overrides: each names a dotted key path and a YAML value (`1e-4`, `true`,
 * `[GoToRedBall, GoToLocal]`, `{ a: 1 }`, or a plain string), applied to the raw config before the
 * schema validates it — so an override is checked exactly as the same key in the YAML file would
 * be, lands in the resolved config (and so in the run's config.json), and an error names the path.
 */
import { parse as parseYaml } from 'yaml';
import { InvalidConfigError } from '../errors.js';

/** One parsed override. */
export interface ConfigOverride {
  /** Key path, e.g. `['algorithm', 'lr']`. */
  readonly path: readonly string[];
  readonly value: unknown;
  /** The text as given (for messages). */
  readonly text: string;
}

const KEY = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/**
 * Parses `a.b=value`. The value is read as YAML (numbers, booleans, lists and maps as in the config
 * file); an empty value is an error, not an empty string.
 * @example parseOverride('algorithm.lr=1e-4') // { path: ['algorithm', 'lr'], value: 0.0001, text: 'algorithm.lr=1e-4' }
 */
export function parseOverride(text: string): ConfigOverride {
  const eq = text.indexOf('=');
  if (eq <= 0) throw new InvalidConfigError(text || '<root>', `--set expects <key.path>=<value>, e.g. algorithm.lr=1e-4; got '${text}'`);
  const keyText = text.slice(0, eq).trim();
  const valueText = text.slice(eq + 1).trim();
  const path = keyText.split('.');
  const bad = path.find((key) => !KEY.test(key));
  if (bad !== undefined) throw new InvalidConfigError(keyText, `--set ${text}: '${bad}' is not a config key (letters, digits, '_' or '-', joined by '.')`);
  if (valueText === '') throw new InvalidConfigError(keyText, `--set ${text}: no value after '=' (quote an empty string: ${keyText}="")`);
  let value: unknown;
  try {
    value = parseYaml(valueText);
  } catch (err) {
    throw new InvalidConfigError(keyText, `--set ${text}: the value is not valid YAML (${(err as Error).message.split('\n')[0]})`, { cause: err });
  }
  return { path, value, text };
}

/**
 * Returns a copy of the raw (unvalidated) config with the overrides applied in order; missing
 * sections are created. Setting a key inside a value that is not a section is an error naming it.
 * @example applyOverrides({ train: { steps: 60 } }, [parseOverride('train.steps=5')]) // { train: { steps: 5 } }
 */
export function applyOverrides(raw: unknown, overrides: readonly ConfigOverride[]): Record<string, unknown> {
  const root = structuredClone(raw === null || raw === undefined ? {} : raw) as Record<string, unknown>;
  if (typeof root !== 'object' || Array.isArray(root)) throw new InvalidConfigError('<root>', 'the config is not a mapping, so --set has nothing to set');
  for (const { path, value, text } of overrides) {
    let section = root;
    path.slice(0, -1).forEach((key, i) => {
      const next = section[key];
      if (next === undefined || next === null) section[key] = {};
      else if (typeof next !== 'object' || Array.isArray(next)) {
        throw new InvalidConfigError(path.slice(0, i + 1).join('.'), `--set ${text}: '${path.slice(0, i + 1).join('.')}' is a value (${JSON.stringify(next)}), not a section with keys`);
      }
      section = section[key] as Record<string, unknown>;
    });
    section[path[path.length - 1] as string] = value;
  }
  return root;
}

/**
 * Adds which `--set` produced the field at fault to a config error, so the message points at the
 * flag rather than at a YAML file that does not contain the value.
 * @example try { parseConfig(raw) } catch (e) { throw blameOverride(e, overrides) }
 */
export function blameOverride(error: unknown, overrides: readonly ConfigOverride[]): unknown {
  if (!(error instanceof InvalidConfigError)) return error;
  const culprit = [...overrides].reverse().find((o) => {
    const key = o.path.join('.');
    return error.path === key || error.path.startsWith(`${key}.`) || error.path.startsWith(`${key}[`);
  });
  if (culprit === undefined) return error;
  // The value came from the flag, not the file the schema error would name.
  const detail = error.detail.replace(/ \(in [^()]*\)$/, '');
  return new InvalidConfigError(error.path, `${detail} (from --set ${culprit.text})`, { cause: error });
}
