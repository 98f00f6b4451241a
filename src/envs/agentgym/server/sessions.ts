/**
 * The live sessions of `turnwise env serve`: one native environment instance per id, ids from a
 * counter (as AgentGym's servers allocate them), a cap on live sessions, and idle expiry on the
 * injected clock (a client that died without `/close` does not hold an instance forever). Calls on
 * one session run one at a time; different sessions never wait for each other.
 */
import type { Clock } from '../../../core/clock.js';
import type { StepResult } from '../../../core/types.js';
import type { Environment, EnvironmentSpec } from '../../environment.js';

/** One live session. */
export interface Session {
  readonly id: number;
  readonly env: Environment;
  /** Clock time of the last request that used it. */
  lastUsed: number;
  /** Whether an episode was started. */
  started: boolean;
  done: boolean;
  /** Sum of rewards of the current episode (BabyAI's `score`). */
  score: number;
  lastReward: number;
  /** Last observation text (reset or step). */
  observation: string;
  /** Full text of the reset observation (BabyAI's `/observation` repeats the goal). */
  resetObservation: string;
  lastResult: StepResult | null;
  /** Actions listed with the last observation. */
  lastActions: readonly string[] | undefined;
  /** Tail of this session's call chain. */
  queue: Promise<unknown>;
}

/** Options of {@link SessionTable}. */
export interface SessionTableOptions {
  readonly spec: EnvironmentSpec;
  readonly settings: Readonly<Record<string, unknown>>;
  readonly maxSessions: number;
  /** Close sessions unused for this long (milliseconds); 0 = never. */
  readonly idleMs: number;
  readonly clock: Clock;
}

const EXPIRED_MEMORY = 10_000;

/**
 * Sessions by id.
 * @example
 * const table = new SessionTable({ spec: babyaiSpec, settings: {}, maxSessions: 100, idleMs: 60_000, clock });
 * const session = table.create(); // null when the cap is reached
 */
export class SessionTable {
  private readonly sessions = new Map<number, Session>();
  private readonly expired = new Set<number>();
  private nextId = 0;
  private sweeper: unknown = null;
  private stopped = false;

  constructor(private readonly options: SessionTableOptions) {
    this.scheduleSweep();
  }

  /** Live sessions. */
  get size(): number {
    return this.sessions.size;
  }

  /** Ids of live sessions. */
  get ids(): number[] {
    return [...this.sessions.keys()];
  }

  /** Opens a session, or returns null when `maxSessions` are live. */
  create(): Session | null {
    if (this.sessions.size >= this.options.maxSessions) return null;
    const id = this.nextId++;
    const session: Session = {
      id,
      env: this.options.spec.create({ settings: this.options.settings }),
      lastUsed: this.options.clock.now(),
      started: false,
      done: false,
      score: 0,
      lastReward: 0,
      observation: '',
      resetObservation: '',
      lastResult: null,
      lastActions: undefined,
      queue: Promise.resolve(),
    };
    this.sessions.set(id, session);
    return session;
  }

  /** The live session `id`, touched; or undefined. */
  get(id: number): Session | undefined {
    const session = this.sessions.get(id);
    if (session) session.lastUsed = this.options.clock.now();
    return session;
  }

  /** Why `id` is not live, in words. */
  describeMissing(id: number): string {
    if (this.expired.has(id)) return `instance ${id} expired after ${this.options.idleMs} ms without requests; create a new one`;
    return `unknown instance id ${id} (never created, or closed)`;
  }

  /** Runs `work` after the session's earlier calls. */
  run<T>(session: Session, work: () => Promise<T> | T): Promise<T> {
    const next = session.queue.then(work, work);
    session.queue = next.catch(() => undefined);
    return next;
  }

  /** Closes and forgets a session; false when it was not live. */
  async close(id: number): Promise<boolean> {
    const session = this.sessions.get(id);
    if (!session) return false;
    this.sessions.delete(id);
    await this.run(session, () => session.env.close());
    return true;
  }

  /** Closes sessions idle for `idleMs` or longer; returns how many. */
  async sweep(): Promise<number> {
    const { idleMs, clock } = this.options;
    if (idleMs <= 0) return 0;
    const now = clock.now();
    const stale = [...this.sessions.values()].filter((s) => now - s.lastUsed >= idleMs);
    for (const session of stale) {
      this.expired.add(session.id);
      if (this.expired.size > EXPIRED_MEMORY) this.expired.delete(this.expired.values().next().value as number);
      await this.close(session.id);
    }
    return stale.length;
  }

  /** Stops the sweeper and closes every session. */
  async closeAll(): Promise<void> {
    this.stopped = true;
    if (this.sweeper !== null) this.options.clock.clearTimeout(this.sweeper);
    await Promise.all(this.ids.map((id) => this.close(id)));
  }

  private scheduleSweep(): void {
    if (this.options.idleMs <= 0 || this.stopped) return;
    // Checking four times per idle period bounds how long past its expiry a session can live.
    this.sweeper = this.options.clock.setTimeout(() => {
      void this.sweep().finally(() => this.scheduleSweep());
    }, Math.max(1, this.options.idleMs / 4));
  }
}
