/**
 * The alarm monitor: pure state over a run's completed steps. Each step's metrics go in
 * ({@link observeStep}); out come the alarms that fired (each detector at most once per
 * `alarms.cooldown` steps) and the next state. The state is JSON-safe and bounded (only the
 * metrics the detectors read, only as many steps as the longest window needs), so it rides in
 * checkpoints and a resumed run keeps its windows, its entropy start and its cooldowns.
 */
import { ALARM_NAMES, type AlarmName, type AlarmsConfig } from '../../core/config/alarm-schema.js';
import { CheckpointError } from '../../core/errors.js';
import { ALARM_METRICS, DETECTORS, type AlarmFinding, type StepSample } from './detectors.js';

/** An alarm that fired. */
export interface Alarm extends AlarmFinding {
  readonly name: AlarmName;
  /** The step (completed steps, as metrics are logged) it fired at. */
  readonly step: number;
  readonly action: 'warn' | 'stop' | 'lowerHorizon';
}

/** The monitor's state. */
export interface AlarmState {
  /** Recent steps, oldest first, with only {@link ALARM_METRICS}. */
  readonly history: readonly StepSample[];
  /** rollout/tokenEntropy values of the run's first steps, until `entropyCollapse.window` are in. */
  readonly entropyFirst: readonly number[];
  /** Their mean once complete (the entropy-collapse reference). */
  readonly entropyStart: number | null;
  /** Step each alarm last fired at. */
  readonly lastFired: Readonly<Partial<Record<AlarmName, number>>>;
}

/**
 * A run's state before its first step.
 * @example let state = initialAlarmState();
 */
export const initialAlarmState = (): AlarmState => ({ history: [], entropyFirst: [], entropyStart: null, lastFired: {} });

/** Steps of history the detectors can need. */
function historyLength(config: AlarmsConfig): number {
  return Math.max(config.entropyCollapse.window, config.rewardVariance.window, 2 * config.echoTrap.window, config.gradNormSpike.window + 1, 1);
}

/**
 * Adds one completed step and runs every enabled detector.
 * @example
 * let state = initialAlarmState();
 * const { alarms, state: next } = observeStep(state, 12, metrics, config.alarms);
 */
export function observeStep(state: AlarmState, step: number, metrics: Readonly<Record<string, number>>, config: AlarmsConfig): { state: AlarmState; alarms: Alarm[] } {
  const kept: Record<string, number> = {};
  for (const name of ALARM_METRICS) if (typeof metrics[name] === 'number') kept[name] = metrics[name] as number;
  const history = [...state.history.filter((s) => s.step < step), { step, metrics: kept }].slice(-historyLength(config));
  let { entropyFirst, entropyStart } = state;
  const entropy = kept['rollout/tokenEntropy'];
  if (entropyStart === null && entropy !== undefined && Number.isFinite(entropy)) {
    entropyFirst = [...entropyFirst, entropy];
    if (entropyFirst.length >= config.entropyCollapse.window) entropyStart = entropyFirst.reduce((a, b) => a + b, 0) / entropyFirst.length;
  }
  const alarms: Alarm[] = [];
  const lastFired = { ...state.lastFired };
  for (const name of ALARM_NAMES) {
    const settings = config[name];
    if (!settings.enabled) continue;
    const last = lastFired[name];
    if (last !== undefined && step - last < Math.max(1, config.cooldown)) continue;
    const detect = DETECTORS[name] as (h: readonly StepSample[], s: typeof settings, m: { entropyStart: number | null }) => AlarmFinding | null;
    const finding = detect(history, settings, { entropyStart });
    if (finding === null) continue;
    lastFired[name] = step;
    alarms.push({ ...finding, name, step, action: settings.action });
  }
  return { state: { history, entropyFirst, entropyStart, lastFired }, alarms };
}

/**
 * Checks a state read back from a checkpoint (`state.alarms.monitor`).
 * @throws CheckpointError naming the field when it is not a monitor state.
 * @example const state = restoreAlarmState(saved, 'runs/x/checkpoints/step-10');
 */
export function restoreAlarmState(raw: unknown, location: string): AlarmState {
  const fail = (detail: string): never => {
    throw new CheckpointError(location, `state.alarms.monitor${detail.startsWith('.') ? '' : ' '}${detail}`);
  };
  if (raw === null || typeof raw !== 'object') return fail('is not an object');
  const s = raw as Partial<AlarmState>;
  if (!Array.isArray(s.history) || !s.history.every((h) => h !== null && typeof h === 'object' && Number.isInteger(h.step) && typeof h.metrics === 'object')) {
    return fail('.history must be a list of { step, metrics }');
  }
  if (!Array.isArray(s.entropyFirst) || !s.entropyFirst.every((x) => typeof x === 'number')) return fail('.entropyFirst must be a list of numbers');
  if (!(s.entropyStart === null || typeof s.entropyStart === 'number')) return fail('.entropyStart must be a number or null');
  if (s.lastFired === null || typeof s.lastFired !== 'object') return fail('.lastFired must be an object');
  return { history: s.history, entropyFirst: s.entropyFirst, entropyStart: s.entropyStart ?? null, lastFired: s.lastFired };
}
