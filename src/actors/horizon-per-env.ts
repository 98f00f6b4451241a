/**
 * Per-environment horizon schedules for multi-environment runs: a map from environment name to
 * its schedule (with an optional default), and a state per environment that advances on each
 * completed step with that environment's signals. Pure.
 *
 * Today a training run has one environment (`env.name`), so `trainRun` resolves the run's entry
 * with {@link scheduleForEnv} and drives one horizon actor; {@link advanceAllEnvs} is what a
 * multi-environment coordinator would call.
 */
import { InvalidConfigError } from '../core/errors.js';
import {
  type HorizonSchedule,
  type HorizonState,
  type StageChange,
  type StepSignals,
  advanceHorizon,
  initialHorizonState,
  validateHorizonSchedule,
} from './horizon-schedule.js';

/** The config's horizon section: one schedule, or one per environment name. */
export type HorizonSpec =
  | HorizonSchedule
  | { readonly schedule: 'per-env'; readonly envs: Readonly<Record<string, HorizonSchedule>>; readonly default?: HorizonSchedule | undefined };

/** Removes config-only fields (`evalHorizon`) so that the scheduler sees only its schedule. */
function scheduleOnly(schedule: HorizonSchedule & { readonly evalHorizon?: number | undefined }): HorizonSchedule {
  const { evalHorizon: _evalHorizon, ...rest } = schedule;
  return rest as HorizonSchedule;
}

/**
 * The schedule that governs environment `envName`.
 * @example scheduleForEnv({ schedule: 'per-env', envs: { babyai: { schedule: 'fixed', horizon: 6 } } }, 'babyai') // { schedule: 'fixed', horizon: 6 }
 */
export function scheduleForEnv(spec: HorizonSpec, envName: string, path = 'horizon'): HorizonSchedule {
  if (spec.schedule !== 'per-env') return scheduleOnly(spec);
  const own = spec.envs[envName];
  if (own) {
    validateHorizonSchedule(own, `${path}.envs.${envName}`);
    return scheduleOnly(own);
  }
  if (spec.default) {
    validateHorizonSchedule(spec.default, `${path}.default`);
    return scheduleOnly(spec.default);
  }
  const known = Object.keys(spec.envs).join(', ') || 'none';
  throw new InvalidConfigError(`${path}.envs.${envName}`, `no schedule for environment '${envName}' (listed: ${known}) and no horizon.default`);
}

/**
 * Horizon of held-out evaluations for `envName`: the schedule's `evalHorizon`, if set.
 * @example evalHorizonFor({ schedule: 'fixed', horizon: 3, evalHorizon: 12 }, 'babyai') // 12
 */
export function evalHorizonFor(spec: HorizonSpec & { readonly evalHorizon?: number | undefined }, envName: string): number | undefined {
  if (spec.schedule !== 'per-env') return spec.evalHorizon;
  const entry = (spec.envs[envName] ?? spec.default) as { readonly evalHorizon?: number } | undefined;
  return entry?.evalHorizon;
}

/** Horizon state per environment name. */
export type MultiHorizonState = Readonly<Record<string, HorizonState>>;

/**
 * Fresh state for each named environment.
 * @example initialMultiState(spec, ['babyai', 'textcraft'])
 */
export function initialMultiState(spec: HorizonSpec, envNames: readonly string[]): MultiHorizonState {
  return Object.fromEntries(envNames.map((name) => [name, initialHorizonState(scheduleForEnv(spec, name))]));
}

/**
 * One completed step for every environment, each with its own signals (missing: none).
 * @example const { states, changes } = advanceAllEnvs(spec, states, { babyai: { 'rollout/successRate': 0.9 } });
 */
export function advanceAllEnvs(
  spec: HorizonSpec,
  states: MultiHorizonState,
  signalsByEnv: Readonly<Record<string, StepSignals>>,
): { states: MultiHorizonState; changes: Readonly<Record<string, StageChange>> } {
  const next: Record<string, HorizonState> = {};
  const changes: Record<string, StageChange> = {};
  for (const [name, state] of Object.entries(states)) {
    const result = advanceHorizon(scheduleForEnv(spec, name), state, signalsByEnv[name] ?? {});
    next[name] = result.state;
    if (result.change) changes[name] = result.change;
  }
  return { states: next, changes };
}
