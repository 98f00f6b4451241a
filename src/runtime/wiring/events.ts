/**
 * Event adapters: horizon → everyone (STAGE_CHANGED), every actor → run log. Subjects:
 * `src/runtime/wiring.ts`.
 */
import type { Bus } from '../bus.js';
import { subjects } from '../wiring.js';
import type { ActorPort, Served } from './ports.js';

/**
 * Copies an actor's emitted events of the given types onto `subjects.events` as `{ source, event }`
 * (and onto `extraSubject` when given, e.g. `subjects.horizon(runId)`).
 * @example forwardEmitted(bus, 'run1', 'horizon', horizonActor, ['STAGE_CHANGED'], subjects.horizon('run1'));
 */
export function forwardEmitted<E extends { type: string }>(
  bus: Bus,
  runId: string,
  source: string,
  port: Pick<ActorPort<{ type: string }, E>, 'on'>,
  types: readonly E['type'][],
  extraSubject?: string,
): Served {
  const eventsSubject = subjects.events(runId);
  const listeners = types.map((type) =>
    port.on(type, (event) => {
      bus.publish(eventsSubject, { source, event });
      if (extraSubject !== undefined) bus.publish(extraSubject, event);
    }),
  );
  return { close: () => { for (const l of listeners) l.unsubscribe(); } };
}
