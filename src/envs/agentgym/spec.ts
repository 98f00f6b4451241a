/**
 * The `agentgym` registry entry: `env: { name: agentgym, settings: { type, url, ... } }` trains
 * and evaluates on a running AgentGym server (or `turnwise env serve`). It does not import the
 * registry (the registry imports it); native specs are looked up through the function given.
 */
import { readFileSync } from 'node:fs';
import { InvalidConfigError } from '../../core/errors.js';
import type { EnvironmentOptions, EnvironmentSpec } from '../environment.js';
import { agentGymAdapters } from './adapters/index.js';
import { remoteCatalog } from './catalog.js';
import { acquireConnection, type ConnectionDeps } from './connection.js';
import { AgentGymEnvironment } from './environment.js';
import { parseAgentGymSettings } from './settings.js';

/**
 * Builds the spec; `native(name)` returns a registered native spec or undefined.
 * @example registerEnvironment(createAgentGymSpec((name) => specs.get(name)));
 */
export function createAgentGymSpec(native: (name: string) => EnvironmentSpec | undefined, deps: ConnectionDeps = {}): EnvironmentSpec {
  const create = (options?: EnvironmentOptions): AgentGymEnvironment => {
    const settings = parseAgentGymSettings(options?.settings);
    const adapter = agentGymAdapters[settings.type];
    const connection = acquireConnection(settings, adapter, deps);
    return new AgentGymEnvironment(settings, adapter, connection, settings.instruction ?? adapter.instruction);
  };
  return {
    name: 'agentgym',
    description: 'Any AgentGym environment server over HTTP (settings: type, url; babyai, sciworld, webshop, ...)',
    create,
    catalog: (options) => remoteCatalog(parseAgentGymSettings(options?.settings), native),
    corpus: (options, episodes, seed) => {
      const settings = parseAgentGymSettings(options?.settings);
      const adapter = agentGymAdapters[settings.type];
      const texts = [settings.instruction ?? adapter.instruction];
      // The server's text is the native twin's text when there is one (BabyAI): train on it.
      const twin = settings.type === 'generic' ? undefined : native(settings.type);
      if (twin) texts.push(...twin.corpus({ settings: settings.levels ? { levels: settings.levels } : {} }, episodes, seed));
      if (settings.corpusFile) {
        try {
          texts.push(...readFileSync(settings.corpusFile, 'utf8').split(/\n{2,}/));
        } catch (error) {
          throw new InvalidConfigError('env.settings.corpusFile', `cannot read ${settings.corpusFile}: ${(error as Error).message}`, { cause: error });
        }
      }
      return texts;
    },
  };
}
