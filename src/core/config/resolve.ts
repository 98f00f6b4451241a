/**
 * Derived values, computed once from a parsed config and frozen with it (CleanRL's "computed in
 * runtime" fields), so that no actor recomputes them differently and the run store logs them.
 */
import { join } from 'node:path';
import type { TurnwiseConfig } from './schema.js';

/** Values computed from the config; logged with the run. */
export interface DerivedConfig {
  /** tasksPerStep x groupSize: training episodes per step. */
  readonly episodesPerStep: number;
  /** steps x episodesPerStep. */
  readonly totalTrainEpisodes: number;
  /** episodesPerStep / miniBatches. */
  readonly episodesPerMiniBatch: number;
  /** epochs x miniBatches: optimizer updates per training step. */
  readonly updatesPerStep: number;
  /** dModel / nHeads. */
  readonly headDim: number;
  /** Horizon of each stage ([horizon] for a fixed schedule). */
  readonly horizonStages: readonly number[];
  /** Largest horizon the run will use. */
  readonly maxHorizon: number;
  /** Steps (1-based) after which an evaluation runs; empty when evalEvery is 0. */
  readonly evalSteps: readonly number[];
  /** <run.dir>/<run.name>. */
  readonly runDir: string;
}

/** Deeply read-only view of a value. */
export type DeepReadonly<T> = T extends (infer U)[]
  ? readonly DeepReadonly<U>[]
  : T extends object
    ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
    : T;

/** A parsed config plus its derived values, deeply frozen. */
export type ResolvedConfig = DeepReadonly<TurnwiseConfig> & { readonly derived: DerivedConfig };

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}

/** Horizons a schedule can use, in stage order (for `per-env`: every environment's, ascending). */
function horizonStagesOf(horizon: TurnwiseConfig['horizon']): number[] {
  switch (horizon.schedule) {
    case 'fixed':
      return [horizon.horizon];
    case 'stepwise':
      return [...horizon.horizons];
    case 'linear':
    case 'adaptive': {
      const stages: number[] = [];
      for (let h = horizon.start; h < horizon.max; h += horizon.step) stages.push(h);
      return [...stages, horizon.max];
    }
    case 'per-env': {
      const all = [...Object.values(horizon.envs), ...(horizon.default ? [horizon.default] : [])].flatMap(horizonStagesOf);
      return all.length > 0 ? [...new Set(all)].sort((a, b) => a - b) : [5];
    }
  }
}

/**
 * Computes the derived values once and freezes the result (a deep copy: the input stays mutable).
 * @example
 * const config = resolveConfig(parseConfig({ algorithm: { groupSize: 4 } }));
 * config.derived.episodesPerStep; // 32
 */
export function resolveConfig(config: TurnwiseConfig): ResolvedConfig {
  const copy = structuredClone(config);
  const { algorithm, model, train, horizon, run } = copy;
  const episodesPerStep = algorithm.tasksPerStep * algorithm.groupSize;
  const horizonStages = horizonStagesOf(horizon);
  const evalSteps: number[] = [];
  if (train.evalEvery > 0) for (let step = train.evalEvery; step <= train.steps; step += train.evalEvery) evalSteps.push(step);
  const derived: DerivedConfig = {
    episodesPerStep,
    totalTrainEpisodes: train.steps * episodesPerStep,
    episodesPerMiniBatch: episodesPerStep / algorithm.miniBatches,
    updatesPerStep: algorithm.epochs * algorithm.miniBatches,
    headDim: model.dModel / model.nHeads,
    horizonStages,
    maxHorizon: Math.max(...horizonStages, horizon.schedule === 'per-env' ? 0 : (horizon.evalHorizon ?? 0)),
    evalSteps,
    runDir: join(run.dir, run.name),
  };
  return deepFreeze({ ...copy, derived });
}
