/**
 * Per-category success tables for the evaluation view.
 *
 * - A `turnwise eval` run (one per policy) stored its metrics at step 0 as `eval/<metric>` and
 *   `eval/<category>/<metric>` (see `src/eval/harness.ts`): read back as they are.
 * - A training run's held-out evaluations are its `test`-split episodes: grouped by step and
 *   summarised with the harness's own `summarizeEval`, categories from the environment's catalog.
 */
import { parseTaskId } from '../../core/task-id.js';
import { type EvalMetrics, type EvalSample, summarizeEval } from '../../eval/metrics.js';
import type { RunStore } from '../../store/run-store.js';

/** Names a task's reporting category from the run's config (null when the environment has none). */
export type CategoryResolver = (config: unknown, taskId: string) => string | undefined;

/** One table: overall metrics and one row per category. */
export interface EvalTable {
  /** Step the evaluation ran at (completed training steps; 0 for harness runs). */
  readonly step: number;
  readonly overall: Partial<EvalMetrics>;
  readonly categories: Record<string, Partial<EvalMetrics>>;
}

/** A run's evaluations. */
export interface EvalTables {
  readonly kind: 'harness' | 'train';
  /** Harness runs: the eval setup (env, split, tasks, samples, seed, horizon). */
  readonly setup: unknown;
  /** Oldest first. */
  readonly tables: EvalTable[];
}

const METRIC_KEYS: readonly (keyof EvalMetrics)[] = ['items', 'samples', 'avgAtN', 'passAtN', 'successRate', 'meanTurns', 'truncationRate', 'errorRate'];

/**
 * The evaluation tables of a run (the store's active run).
 * @example evalTables(store, resolver).tables.at(-1)?.categories.GoTo?.successRate
 */
export function evalTables(store: RunStore, resolveCategory?: CategoryResolver): EvalTables {
  const record = store.run();
  const config = record?.config;
  const setup = config !== null && typeof config === 'object' ? (config as Record<string, unknown>).eval : undefined;
  if (setup !== undefined) return { kind: 'harness', setup, tables: [harnessTable(store)] };
  return { kind: 'train', setup: null, tables: trainTables(store, (taskId) => safeCategory(resolveCategory, config, taskId)) };
}

/** Reads `eval/<metric>` and `eval/<category>/<metric>` back into a table. */
function harnessTable(store: RunStore): EvalTable {
  const overall: Partial<Record<keyof EvalMetrics, number>> = {};
  const categories: Record<string, Partial<Record<keyof EvalMetrics, number>>> = {};
  for (const [name, point] of Object.entries(store.latestMetrics())) {
    const parts = name.split('/');
    if (parts[0] !== 'eval') continue;
    const key = parts[parts.length - 1] as keyof EvalMetrics;
    if (!METRIC_KEYS.includes(key)) continue;
    if (parts.length === 2) overall[key] = point.value;
    else {
      const category = parts.slice(1, -1).join('/');
      categories[category] ??= {};
      (categories[category] as Partial<Record<keyof EvalMetrics, number>>)[key] = point.value;
    }
  }
  return { step: 0, overall, categories };
}

/** One table per evaluation step of a training run, from its test-split episodes. */
function trainTables(store: RunStore, categoryOf: (taskId: string) => string | undefined): EvalTable[] {
  const byStep = new Map<number, EvalSample[]>();
  for (const e of store.episodes({ split: 'test', limit: 1_000_000 })) {
    const category = categoryOf(e.taskId);
    const sample: EvalSample = { item: e.taskId, reward: e.reward, outcome: e.outcome, turns: e.turns, ...(category !== undefined ? { category } : {}) };
    const list = byStep.get(e.step) ?? [];
    list.push(sample);
    byStep.set(e.step, list);
  }
  return [...byStep.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([step, samples]) => {
      const summary = summarizeEval(samples);
      return { step, overall: summary.overall, categories: { ...summary.perCategory } };
    });
}

function safeCategory(resolve: CategoryResolver | undefined, config: unknown, taskId: string): string | undefined {
  if (resolve === undefined) return undefined;
  try {
    return resolve(config, taskId);
  } catch {
    return undefined; // an unknown environment or odd task id: count it overall only
  }
}

/**
 * A resolver over the environment registry: the run config's `env.name` and `env.settings` give
 * the catalog, the task id's index its category. Catalogs are built once per config.
 * @example const resolve = catalogCategoryResolver(getEnvironmentSpec); resolve(config, 'babyai_3') // 'GoTo'
 */
export function catalogCategoryResolver(
  getSpec: (name: string) => { catalog(options?: { settings?: Record<string, unknown> }): { category?(index: number): string | undefined } },
): CategoryResolver {
  const catalogs = new WeakMap<object, { category?(index: number): string | undefined }>();
  return (config, taskId) => {
    if (config === null || typeof config !== 'object') return undefined;
    let catalog = catalogs.get(config);
    if (catalog === undefined) {
      const env = (config as { env?: { name?: unknown; settings?: unknown } }).env;
      if (typeof env?.name !== 'string') return undefined;
      catalog = getSpec(env.name).catalog({ settings: (env.settings ?? {}) as Record<string, unknown> });
      catalogs.set(config, catalog);
    }
    return catalog.category?.(parseTaskId(taskId).index);
  };
}
