/**
 * The `env` role of a worker: serves environment sessions over NATS and leases each to one episode
 * holder at a time.
 *
 * Protocol (all request/reply, msgpackr payloads):
 * - `turnwise.<run>.env.lease` (queue group `env-workers`, so env workers share the load):
 *   `{ holder }` → `{ sessionId, leaseMs }`, or an error when this worker has no free session (the
 *   client asks again and the queue group may pick another worker).
 * - `turnwise.<run>.env.<sessionId>.reset|step|close`: the session itself, served by the same
 *   `serveEnvSession` adapter and env-session actor as in-process runs.
 * - `turnwise.<run>.env.<sessionId>.renew` → `{ leaseMs }`; `….release` → `null`.
 *
 * Every lease gets a fresh session id and a fresh environment instance, so a holder whose lease
 * expired (it died, or stalled past `leaseMs`) reaches nothing: its calls fail with no responders
 * instead of disturbing the episode that now holds the slot. Expired leases are reclaimed by a sweep.
 */
import { createActor } from 'xstate';
import { withEnvSessionEffects } from '../../actors/env-session.js';
import type { Clock } from '../../core/clock.js';
import { systemClock } from '../../core/clock.js';
import { InvalidArgumentError, InvalidMessageError, TurnwiseError } from '../../core/errors.js';
import type { EnvironmentSpec } from '../../envs/environment.js';
import type { Bus, Subscription } from '../../bus/bus.js';
import { subjects } from '../wiring/message-flow.js';
import { serveEnvSession } from '../wiring/env-session.js';

/** Subjects of the lease protocol (the session's own reset/step/close are in `subjects`). */
export const envLeaseSubjects = {
  // `subjects.events` validates the run id as one subject token.
  lease: (runId: string) => subjects.events(runId).replace(/\.events$/, '.env.lease'),
  renew: (runId: string, sessionId: string) => subjects.envClose(runId, sessionId).replace(/\.close$/, '.renew'),
  release: (runId: string, sessionId: string) => subjects.envClose(runId, sessionId).replace(/\.close$/, '.release'),
} as const;

export interface EnvLeaseServerOptions {
  readonly bus: Bus;
  readonly runId: string;
  readonly spec: EnvironmentSpec;
  readonly envSettings: Readonly<Record<string, unknown>>;
  /** Sessions this worker serves at once. */
  readonly capacity: number;
  /** A lease not renewed for this long is reclaimed. */
  readonly leaseMs: number;
  readonly envTimeoutMs: number;
  /** Prefix of this worker's session ids (one subject token, unique among env workers). */
  readonly workerId: string;
  readonly log: (line: string) => void;
  readonly clock?: Clock;
}

/** A running lease server. */
export interface EnvLeaseServer {
  /** Sessions leased now. */
  readonly leased: () => number;
  /** Leases granted so far, and reclaimed after expiry. */
  readonly stats: () => { granted: number; reclaimed: number };
  close(): Promise<void>;
}

interface Lease {
  readonly holder: string;
  expiresAt: number;
  readonly stop: () => Promise<void>;
}

/**
 * Starts serving env sessions with leases.
 * @example const server = startEnvLeaseServer({ bus, runId: 'r1', spec, envSettings: {}, capacity: 16, leaseMs: 10_000, envTimeoutMs: 30_000, workerId: 'w1', log: console.error });
 */
export function startEnvLeaseServer(options: EnvLeaseServerOptions): EnvLeaseServer {
  const { bus, runId, spec, envSettings, capacity, leaseMs, envTimeoutMs, workerId, log } = options;
  if (!Number.isInteger(capacity) || capacity < 1) throw InvalidArgumentError.format('capacity', `expected an integer >= 1, got ${capacity}`);
  if (!(leaseMs > 0)) throw InvalidArgumentError.format('leaseMs', `expected > 0, got ${leaseMs}`);
  const clock = options.clock ?? systemClock;
  const leases = new Map<string, Lease>();
  let next = 0;
  let granted = 0;
  let reclaimed = 0;

  const end = (sessionId: string): Promise<void> => {
    const lease = leases.get(sessionId);
    if (lease === undefined) return Promise.resolve();
    leases.delete(sessionId);
    return lease.stop().catch((error: unknown) => log(`env: closing session ${sessionId} failed: ${(error as Error).message}`));
  };

  const open = (holder: string): string => {
    const sessionId = `${workerId}-${next++}`;
    const env = spec.create({ settings: envSettings });
    const actor = createActor(
      withEnvSessionEffects({
        resetEnv: async (taskIndex) => env.reset(taskIndex),
        stepEnv: async (actionText) => env.step(actionText),
        closeEnv: async () => env.close(),
      }),
      { input: { envName: spec.name, envTimeoutMs }, clock },
    ).start();
    const served = serveEnvSession(bus, runId, sessionId, actor);
    const renewSubject = envLeaseSubjects.renew(runId, sessionId);
    const control: Subscription[] = [
      bus.subscribe(renewSubject, () => {
        const lease = leases.get(sessionId);
        if (lease === undefined) throw new TurnwiseError(`lease of env session ${sessionId} expired`);
        lease.expiresAt = clock.now() + leaseMs;
        return { leaseMs };
      }),
      bus.subscribe(envLeaseSubjects.release(runId, sessionId), async () => {
        await end(sessionId);
        return null;
      }),
    ];
    leases.set(sessionId, {
      holder,
      expiresAt: clock.now() + leaseMs,
      stop: async () => {
        for (const s of control) s.unsubscribe();
        served.close();
        actor.stop();
        await env.close();
      },
    });
    return sessionId;
  };

  const leaseSubject = envLeaseSubjects.lease(runId);
  const leaseSub = bus.subscribe(
    leaseSubject,
    (payload) => {
      const holder = typeof payload === 'object' && payload !== null ? (payload as { holder?: unknown }).holder : undefined;
      if (typeof holder !== 'string') throw new InvalidMessageError(leaseSubject, 'expected { holder: string }');
      if (leases.size >= capacity) throw new TurnwiseError(`env worker ${workerId} has no free session (${capacity} leased)`);
      granted++;
      return { sessionId: open(holder), leaseMs };
    },
    { queue: 'env-workers' },
  );

  // Reclaims leases whose holder stopped renewing (it died or stalled). On the injected clock, so
  // tests drive expiry with a SimulatedClock.
  const sweepEveryMs = Math.max(20, Math.floor(leaseMs / 4));
  let sweep: unknown = null;
  const sweepOnce = () => {
    const now = clock.now();
    for (const [sessionId, lease] of leases) {
      if (lease.expiresAt <= now) {
        reclaimed++;
        log(`env: lease of session ${sessionId} (holder ${lease.holder}) expired; reclaimed`);
        void end(sessionId);
      }
    }
    sweep = clock.setTimeout(sweepOnce, sweepEveryMs);
  };
  sweep = clock.setTimeout(sweepOnce, sweepEveryMs);

  return {
    leased: () => leases.size,
    stats: () => ({ granted, reclaimed }),
    async close() {
      clock.clearTimeout(sweep);
      leaseSub.unsubscribe();
      await Promise.all([...leases.keys()].map(end));
      log(`env: granted ${granted} leases, reclaimed ${reclaimed} expired ones`);
    },
  };
}
