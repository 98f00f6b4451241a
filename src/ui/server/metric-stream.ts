/**
 * Live updates: what changed in a run store since the last look. The SSE endpoint polls a
 * read-only store on an interval of the injected `Clock` and pushes only new metric points, new
 * events (horizon stage changes, checkpoints) and status changes.
 *
 * Why poll the SQLite file: the trainer may be another process; the store (WAL) is the one thing
 * both share, and a cheap `GROUP BY name` tells whether any metric has a newer step.
 */
import type { Clock } from '../../core/clock.js';
import type { RunEvent, RunStore } from '../../store/run-store.js';
import { seriesJson } from './run-views.js';

/** What one poll found. Empty fields are left out by {@link RunDelta}'s `isEmpty`. */
export interface RunDelta {
  /** New points per metric, `[step, value]`, in step order. */
  readonly metrics: Record<string, [number, number | null][]>;
  readonly events: RunEvent[];
  /** The run's status when it changed (always set on the first poll). */
  readonly status: string | null;
}

/**
 * Remembers, per metric, the newest step already sent; each `poll` returns what is newer.
 * The first poll returns everything (the snapshot a client starts from).
 * @example
 * const cursor = new RunCursor(['rollout/successRate']);
 * cursor.poll(store); // every point so far
 * cursor.poll(store); // only points logged since
 */
export class RunCursor {
  private readonly lastStep = new Map<string, number>();
  private eventsSeen = 0;
  private status: string | null = null;

  /** `names`: metrics to follow (undefined: all). */
  constructor(private readonly names?: readonly string[]) {}

  /** `statusOf` maps the stored status to the one shown (e.g. `running` → `stale` when the writer died). */
  poll(store: RunStore, statusOf: (stored: string) => string = (stored) => stored): RunDelta {
    const metrics: Record<string, [number, number | null][]> = {};
    const wanted = this.names === undefined ? null : new Set(this.names);
    for (const [name, latest] of Object.entries(store.latestMetrics())) {
      if (wanted !== null && !wanted.has(name)) continue;
      const seen = this.lastStep.get(name);
      if (seen !== undefined && latest.step <= seen) continue;
      const points = store.metricsSeries(name).filter((p) => seen === undefined || p.step > seen);
      if (points.length === 0) continue;
      metrics[name] = seriesJson(points);
      this.lastStep.set(name, points[points.length - 1]?.step ?? latest.step);
    }
    const all = store.events();
    const events = all.slice(this.eventsSeen);
    this.eventsSeen = all.length;
    const stored = store.run()?.status;
    const current = stored === undefined ? null : statusOf(stored);
    const status = current !== this.status ? current : null;
    this.status = current;
    return { metrics, events, status };
  }
}

/** True when a delta carries nothing to send. */
export function isEmptyDelta(delta: RunDelta): boolean {
  return Object.keys(delta.metrics).length === 0 && delta.events.length === 0 && delta.status === null;
}

/**
 * Waits `ms` on `clock`, or less if `signal` aborts first.
 * @example await sleepOn(clock, 1000, abort.signal);
 */
export function sleepOn(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const handle = clock.setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clock.clearTimeout(handle);
      resolve();
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
