/**
 * Client side of the `env` role: an {@link EnvironmentSpec} whose instances run on env workers.
 * The episodes worker's `RolloutRunner` uses it unchanged (its local env-session actors wrap these
 * instances), so remote sessions get the same timeouts and error handling as in-process ones.
 *
 * An instance leases a session on its first `reset` (never at `create`: the runner's probe only
 * reads the instruction), keeps the lease while the runner reuses it across episodes by renewing
 * it every `leaseMs / 3`, and releases it on `close`. A lost lease (the env worker died or
 * reclaimed it) makes the current call fail, the episode ends as `error` and is redone; the next
 * `reset` leases afresh.
 */
import { type Clock, systemClock } from '../../core/clock.js';
import { TurnwiseError } from '../../core/errors.js';
import type { Observation, StepResult } from '../../core/types.js';
import type { Environment, EnvironmentOptions, EnvironmentSpec } from '../../envs/environment.js';
import type { Bus } from '../../bus/bus.js';
import { remoteEnvSession, type RemoteEnvSession } from '../wiring/env-session.js';
import { envLeaseSubjects } from './env-leases.js';

export interface RemoteEnvOptions {
  readonly bus: Bus;
  readonly runId: string;
  /** Names the lease holder in env workers' logs (e.g. `episodes-<pid>`). */
  readonly holder: string;
  /** Timeout of each reset/step call. */
  readonly envTimeoutMs: number;
  /** Give up leasing a session after this long (env workers all busy or absent). */
  readonly leaseTimeoutMs: number;
  readonly clock?: Clock;
}

interface Held {
  readonly sessionId: string;
  readonly session: RemoteEnvSession;
  readonly renew: ReturnType<typeof setInterval>;
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

class RemoteLeasedEnvironment implements Environment {
  private held: Held | null = null;

  constructor(
    readonly name: string,
    private readonly options: RemoteEnvOptions,
    private readonly instructionText: string,
  ) {}

  instruction(): string {
    return this.instructionText;
  }

  private async lease(): Promise<Held> {
    if (this.held !== null) return this.held;
    const { bus, runId, holder, envTimeoutMs, leaseTimeoutMs } = this.options;
    const subject = envLeaseSubjects.lease(runId);
    const clock = this.options.clock ?? systemClock;
    const deadline = clock.now() + leaseTimeoutMs;
    let lastError = 'no env worker answered';
    // Back off between tries: a full env worker answers with an error and another may have room.
    for (let backoff = 25; clock.now() < deadline; backoff = Math.min(backoff * 2, 500)) {
      try {
        const reply = (await bus.request(subject, { holder }, { timeoutMs: Math.min(envTimeoutMs, 5000) })) as { sessionId?: unknown; leaseMs?: unknown } | null;
        if (typeof reply?.sessionId !== 'string' || typeof reply.leaseMs !== 'number') throw new TurnwiseError(`${subject}: expected { sessionId, leaseMs }`);
        const sessionId = reply.sessionId;
        const renew = setInterval(() => {
          bus.request(envLeaseSubjects.renew(runId, sessionId), {}, { timeoutMs: Math.max(100, (reply.leaseMs as number) / 3) }).catch(() => {
            // Lost: drop it so that the next reset leases afresh; the call in flight fails on its own.
            if (this.held?.sessionId === sessionId) this.drop();
          });
        }, Math.max(50, reply.leaseMs / 3));
        this.held = { sessionId, session: remoteEnvSession(bus, runId, sessionId, envTimeoutMs), renew };
        return this.held;
      } catch (error) {
        lastError = (error as Error).message;
        await wait(backoff);
      }
    }
    throw new TurnwiseError(`could not lease an env session on ${subject} within ${leaseTimeoutMs} ms: ${lastError}`);
  }

  private drop(): Held | null {
    const held = this.held;
    if (held !== null) clearInterval(held.renew);
    this.held = null;
    return held;
  }

  async reset(index: number): Promise<Observation> {
    const held = await this.lease();
    try {
      return await held.session.reset(index);
    } catch (error) {
      this.drop();
      throw error;
    }
  }

  async step(actionText: string): Promise<StepResult> {
    const held = this.held;
    if (held === null) throw new TurnwiseError('remote env session lost its lease; the episode is redone');
    return held.session.step(actionText);
  }

  async close(): Promise<void> {
    const held = this.drop();
    if (held === null) return;
    const { bus, runId } = this.options;
    await bus.request(envLeaseSubjects.release(runId, held.sessionId), {}, { timeoutMs: 2000 }).catch(() => undefined);
  }
}

/**
 * Wraps a registered spec so that its instances run on env workers; catalog, corpus and the
 * instruction text still come from the local spec (they are static).
 * @example const spec = remoteEnvSpec(getEnvironmentSpec('babyai'), { bus, runId: 'r1', holder: 'episodes-1', envTimeoutMs: 30_000, leaseTimeoutMs: 60_000 });
 */
export function remoteEnvSpec(local: EnvironmentSpec, options: RemoteEnvOptions): EnvironmentSpec {
  const instructions = new Map<string, string>();
  const instructionOf = (settings: EnvironmentOptions | undefined): string => {
    const key = JSON.stringify(settings?.settings ?? {});
    let text = instructions.get(key);
    if (text === undefined) {
      const probe = local.create(settings);
      text = probe.instruction();
      void probe.close();
      instructions.set(key, text);
    }
    return text;
  };
  return {
    name: local.name,
    description: `${local.description} (served by env workers)`,
    create: (settings) => new RemoteLeasedEnvironment(local.name, options, instructionOf(settings)),
    catalog: (settings) => local.catalog(settings),
    corpus: (settings, episodes, seed) => local.corpus(settings, episodes, seed),
  };
}
