/**
 * Task catalogs of remote servers: indices from `env.settings.trainIds` / `testIds`, or the known
 * defaults — BabyAI's native catalog (same task index semantics as AgentGym's server), SearchQA's
 * documented ranges (test 0–51712, train 51713–221328), Maze's 26 start positions (both splits:
 * there are no others).
 */
import { InvalidConfigError } from '../../core/errors.js';
import type { Split } from '../../core/types.js';
import type { EnvironmentSpec, TaskCatalog } from '../environment.js';
import type { AgentGymSettings } from './settings.js';

type Ids = NonNullable<AgentGymSettings['trainIds']>;

/**
 * Expands a list, `"first-last"` or `{ from, to }` into indices (ranges inclusive).
 * @example expandIds('2-4') // [2, 3, 4]
 */
export function expandIds(ids: Ids, field: string): number[] {
  if (Array.isArray(ids)) return [...ids];
  const [from, to] = typeof ids === 'string' ? ids.split('-').map((s) => Number(s.trim())) : [ids.from, ids.to];
  if (from === undefined || to === undefined || to < from) throw new InvalidConfigError(field, `expected first <= last, got ${JSON.stringify(ids)}`);
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

const DEFAULT_RANGES: Partial<Record<AgentGymSettings['type'], Record<Split, Ids>>> = {
  searchqa: { train: '51713-221328', test: '0-51712' },
  maze: { train: '0-25', test: '0-25' },
};

/**
 * The catalog for `settings`; `native` looks up a registered native spec (BabyAI's default).
 * @example remoteCatalog({ ...settings, trainIds: [1, 2], testIds: '10-19' }, () => undefined).indices('test').length // 10
 */
export function remoteCatalog(settings: AgentGymSettings, native: (name: string) => EnvironmentSpec | undefined): TaskCatalog {
  const nativeSpec = settings.type === 'babyai' ? native('babyai') : undefined;
  const nativeCatalog = nativeSpec?.catalog({ settings: settings.levels ? { levels: settings.levels } : {} });
  const cache = new Map<Split, readonly number[]>();
  return {
    indices(split: Split): readonly number[] {
      const cached = cache.get(split);
      if (cached) return cached;
      const key = split === 'train' ? 'trainIds' : 'testIds';
      const field = `env.settings.${key}`;
      const given = settings[key] ?? DEFAULT_RANGES[settings.type]?.[split];
      let indices: readonly number[];
      if (given !== undefined) indices = Object.freeze(expandIds(given, field));
      else if (nativeCatalog) indices = nativeCatalog.indices(split);
      else {
        throw new InvalidConfigError(field, `the task indices of a ${settings.type} server are not known here; give ${key} as a list, "first-last" or { from, to }`);
      }
      cache.set(split, indices);
      return indices;
    },
    ...(nativeCatalog?.category ? { category: (index: number) => nativeCatalog.category?.(index) } : {}),
  };
}
