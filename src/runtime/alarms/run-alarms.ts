/**
 * A training run's collapse alarms: feeds each completed step's metrics to the pure monitor
 * (`monitor.ts`), records every alarm as a run event `alarm/<name>` (the dashboard marks it on the
 * alarm's metric curve), tells the caller (the CLI prints it) and carries out its action — `stop`
 * asks the run to stop after this step (it checkpoints as on Ctrl-C), `lowerHorizon` caps the
 * horizon `lowerHorizonBy` turns below the one in force for the rest of the run. Effects are
 * injected; the cap and the monitor state are persisted with every checkpoint.
 */
import type { AlarmsConfig } from '../../core/config/alarm-schema.js';
import { CheckpointError } from '../../core/errors.js';
import type { DeepReadonly } from '../../core/config/resolve.js';
import { type Alarm, type AlarmState, initialAlarmState, observeStep, restoreAlarmState } from './monitor.js';

/** What the alarms do to the run, injected by the assembly. */
export interface AlarmEffects {
  /** Stores a run event. */
  logEvent(step: number, kind: string, message: string, data: Readonly<Record<string, unknown>>): void;
  /** Tells the caller (progress line). */
  report(alarm: Alarm, consequence: string): void;
  /** Stops the run after the current step, with a checkpoint. */
  stop(reason: string): void;
}

/** What a checkpoint keeps (`state.alarms`). */
export interface PersistedAlarms {
  readonly monitor: AlarmState;
  /** Horizon cap set by a lowerHorizon alarm, or null. */
  readonly horizonCap: number | null;
}

/**
 * Checks what a checkpoint holds under `state.alarms` (absent in checkpoints from before alarms).
 * @throws CheckpointError naming the field at fault.
 * @example const restored = restorePersistedAlarms(checkpoint?.state.alarms, runDir);
 */
export function restorePersistedAlarms(raw: unknown, location: string): PersistedAlarms | undefined {
  if (raw === undefined) return undefined;
  const saved = raw as Partial<PersistedAlarms> | null;
  if (saved === null || typeof saved !== 'object') throw new CheckpointError(location, 'state.alarms is not an object');
  const monitor = restoreAlarmState(saved.monitor, location);
  const cap = saved.horizonCap ?? null;
  if (!(cap === null || (Number.isInteger(cap) && cap > 0))) throw new CheckpointError(location, `state.alarms.horizonCap must be a positive integer or null, got ${JSON.stringify(cap)}`);
  return { monitor, horizonCap: cap };
}

/**
 * The run's alarm state and actions.
 * @example
 * const alarms = new RunAlarms(config.alarms, effects, restorePersistedAlarms(checkpoint?.state.alarms, runDir));
 * alarms.observe(step + 1, metrics, horizonInForce);
 * const horizon = alarms.capHorizon(scheduled);
 */
export class RunAlarms {
  private state: AlarmState;
  private cap: number | null;

  constructor(
    private readonly config: DeepReadonly<AlarmsConfig>,
    private readonly effects: AlarmEffects,
    restored?: PersistedAlarms,
  ) {
    this.state = restored?.monitor ?? initialAlarmState();
    this.cap = restored?.horizonCap ?? null;
  }

  /** Checks the step's metrics, records and reports what fired, carries out the actions; returns the alarms. */
  observe(step: number, metrics: Readonly<Record<string, number>>, horizonInForce: number): Alarm[] {
    const { state, alarms } = observeStep(this.state, step, metrics, this.config as AlarmsConfig);
    this.state = state;
    for (const alarm of alarms) {
      let consequence = 'warning only';
      if (alarm.action === 'stop') {
        consequence = 'stopping the run after this step (checkpointed)';
        this.effects.stop(alarm.message);
      } else if (alarm.action === 'lowerHorizon') {
        const from = this.capHorizon(horizonInForce);
        this.cap = Math.max(1, from - this.config.lowerHorizonBy);
        consequence = `horizon capped ${from} -> ${this.cap} for the rest of the run`;
      }
      const { name, metric, value, threshold, action } = alarm;
      this.effects.logEvent(step, `alarm/${name}`, `${alarm.message} (${consequence})`, { alarm: name, metric, value, threshold, action, consequence, ...(this.cap !== null ? { horizonCap: this.cap } : {}) });
      this.effects.report(alarm, consequence);
    }
    return alarms;
  }

  /** The horizon to use given the scheduled one (the cap, when an alarm set one, wins if lower). */
  capHorizon(scheduled: number): number {
    return this.cap === null ? scheduled : Math.min(scheduled, this.cap);
  }

  /** What the next checkpoint should hold. */
  persist(): PersistedAlarms {
    return { monitor: this.state, horizonCap: this.cap };
  }
}
