/**
 * The one source of truth of what `turnwise env serve` answers, independent of the HTTP layer:
 * each protocol route takes the raw request parts (body text, content-type, query, whether the
 * turnwise extension was asked for) and returns a status and a JSON-able body. Both HTTP front
 * ends call it — the Hono app (`./app.ts`: every route, CORS preflight, 404s, in-memory
 * `app.request` tests) and the lean `node:http` path (`./fast-listener.ts`: the hot routes
 * without the Fetch-API request/response objects) — so validation rules, error texts and answer
 * shapes cannot drift apart between them.
 *
 * Errors follow AgentGym's servers: a body or query that does not validate gets FastAPI's 422
 * `{"detail": [...]}`; an application failure (unknown id, step before reset or after the end, an
 * environment exception) gets HTTP 200 `{"error": "..."}`; neither touches other sessions. A full
 * table gets 503 `{"error"}` (retryable; AgentGym's WebShop client retries 503 itself).
 */
import type { Clock } from '../../../core/clock.js';
import type { StepResult } from '../../../core/types.js';
import type { EnvironmentSpec } from '../../environment.js';
import { type ProfileName, profileFor, type ServeProfile, serveProfiles } from './profiles.js';
import { type Session, SessionTable } from './sessions.js';
import { type FieldSpec, validateBody, validateQuery } from './validate.js';

/** Options of {@link AgentGymProtocol}. */
export interface AgentGymProtocolOptions {
  readonly spec: EnvironmentSpec;
  /** Settings passed to the environment factory. */
  readonly settings?: Readonly<Record<string, unknown>>;
  /** Answer shapes; default: the profile AgentGym's client for `spec.name` expects. */
  readonly profile?: ProfileName;
  readonly maxSessions: number;
  /** Idle expiry in milliseconds (0 = never). */
  readonly idleMs: number;
  readonly clock: Clock;
}

/** The protocol's routes (method and path are in {@link PROTOCOL_ROUTES}). */
export type RouteName = 'create' | 'reset' | 'step' | 'observation' | 'close';

/** Method of each route, by path. */
export const PROTOCOL_ROUTES: Readonly<Record<string, { readonly method: 'GET' | 'POST'; readonly route: RouteName }>> = {
  '/create': { method: 'POST', route: 'create' },
  '/reset': { method: 'POST', route: 'reset' },
  '/step': { method: 'POST', route: 'step' },
  '/observation': { method: 'GET', route: 'observation' },
  '/close': { method: 'POST', route: 'close' },
};

/** The parts of a request the protocol reads. */
export interface ProtocolRequest {
  /** Body text (POST; `''` when there is none). */
  readonly body: string;
  readonly contentType: string | undefined;
  /** Query string parameters (GET). */
  readonly query: URLSearchParams | null;
  /** The `x-turnwise-ext: 1` header was sent. */
  readonly extension: boolean;
}

/** What to answer: an HTTP status and a JSON body. */
export interface ProtocolAnswer {
  readonly status: number;
  readonly body: unknown;
}

/** A failure the client caused that is not a validation error (answered 200 `{"error"}`). */
class AppError extends Error {}

const STEP_FIELDS: readonly FieldSpec[] = [
  { name: 'id', type: 'int', required: true },
  { name: 'action', type: 'str', required: true },
];
const ID_FIELDS: readonly FieldSpec[] = [{ name: 'id', type: 'int', required: true }];

/**
 * AgentGym's protocol over a session table of one native environment.
 * @example
 * const protocol = new AgentGymProtocol({ spec: babyaiSpec, maxSessions: 1024, idleMs: 600_000, clock: systemClock });
 * await protocol.handle('create', { body: '', contentType: undefined, query: null, extension: false }); // { status: 200, body: { id: 0 } }
 */
export class AgentGymProtocol {
  readonly sessions: SessionTable;
  readonly profile: ServeProfile;

  constructor(private readonly options: AgentGymProtocolOptions) {
    this.profile = options.profile ? serveProfiles[options.profile] : profileFor(options.spec.name);
    this.sessions = new SessionTable({
      spec: options.spec,
      settings: options.settings ?? {},
      maxSessions: options.maxSessions,
      idleMs: options.idleMs,
      clock: options.clock,
    });
  }

  /** The greeting of `GET /`. */
  greeting(): string {
    return `This is environment ${this.options.spec.name}, served by turnwise (AgentGym ${this.profile.name} protocol).`;
  }

  /** Answers one protocol request; never throws (an exception becomes 200 `{"error"}`, as AgentGym's servers do). */
  async handle(route: RouteName, request: ProtocolRequest): Promise<ProtocolAnswer> {
    try {
      switch (route) {
        case 'create':
          return await this.create(request);
        case 'reset':
          return await this.reset(request);
        case 'step':
          return await this.step(request);
        case 'observation':
          return this.observation(request);
        case 'close':
          return await this.close(request);
      }
    } catch (error) {
      return errorAnswer(error);
    }
  }

  /** Stops idle expiry and closes every session. */
  closeAll(): Promise<void> {
    return this.sessions.closeAll();
  }

  private async create(request: ProtocolRequest): Promise<ProtocolAnswer> {
    const { profile, sessions } = this;
    if (profile.createFields) {
      const checked = validateBody(request.body, request.contentType, profile.createFields);
      if (!checked.ok) return { status: 422, body: { detail: checked.detail } };
    }
    const session = sessions.create();
    if (!session) return { status: 503, body: { error: `too many live instances (cap ${this.options.maxSessions}); close some or wait for idle ones to expire` } };
    if (profile.resetOnCreate) {
      try {
        await this.resetSession(session, session.id);
      } catch (error) {
        await sessions.close(session.id); // nobody learns this id: do not keep it
        throw error;
      }
    }
    return { status: 200, body: profile.created(session) };
  }

  private async reset(request: ProtocolRequest): Promise<ProtocolAnswer> {
    const checked = validateBody(request.body, request.contentType, this.profile.resetFields);
    if (!checked.ok) return { status: 422, body: { detail: checked.detail } };
    const session = this.live(checked.value.id as number);
    const index = (checked.value.data_idx as number | null) ?? 0;
    if (index < 0) throw new AppError(`task index must be non-negative, got ${index}`);
    await this.resetSession(session, index);
    return { status: 200, body: withExtension(request.extension, session, this.profile.reset(session)) };
  }

  private async step(request: ProtocolRequest): Promise<ProtocolAnswer> {
    const checked = validateBody(request.body, request.contentType, STEP_FIELDS);
    if (!checked.ok) return { status: 422, body: { detail: checked.detail } };
    const session = this.live(checked.value.id as number);
    await this.sessions.run(session, async () => {
      if (!session.started) throw new AppError(`instance ${session.id} has no episode yet; call /reset first`);
      if (session.done) throw new AppError(`the episode of instance ${session.id} is over; call /reset to start another`);
      const result: StepResult = await session.env.step(checked.value.action as string);
      session.lastResult = result;
      session.lastReward = result.reward;
      session.score += result.reward;
      session.done = result.done;
      session.observation = result.observation.text;
      session.lastActions = result.observation.availableActions;
    });
    return { status: 200, body: withExtension(request.extension, session, this.profile.step(session)) };
  }

  private observation(request: ProtocolRequest): ProtocolAnswer {
    const checked = validateQuery(request.query ?? new URLSearchParams(), ID_FIELDS);
    if (!checked.ok) return { status: 422, body: { detail: checked.detail } };
    return { status: 200, body: this.profile.observation(this.live(checked.value.id as number)) };
  }

  private async close(request: ProtocolRequest): Promise<ProtocolAnswer> {
    const checked = validateBody(request.body, request.contentType, ID_FIELDS);
    if (!checked.ok) return { status: 422, body: { detail: checked.detail } };
    return { status: 200, body: this.profile.closed(await this.sessions.close(checked.value.id as number)) };
  }

  private live(id: number): Session {
    const session = this.sessions.get(id);
    if (!session) throw new AppError(this.sessions.describeMissing(id));
    return session;
  }

  private async resetSession(session: Session, index: number): Promise<void> {
    await this.sessions.run(session, async () => {
      const observation = await session.env.reset(index);
      session.started = true;
      session.done = false;
      session.score = 0;
      session.lastReward = 0;
      session.observation = observation.text;
      session.resetObservation = observation.text;
      session.lastActions = observation.availableActions;
      session.lastResult = null;
    });
  }
}

/** 200 `{"error": message}` — AgentGym's servers catch their exceptions and answer so. */
export function errorAnswer(error: unknown): ProtocolAnswer {
  return { status: 200, body: { error: error instanceof Error ? error.message : String(error) } };
}

/** The 413 answer for a body over `maxBodyBytes`. */
export function tooLargeAnswer(maxBodyBytes: number): ProtocolAnswer {
  return { status: 413, body: { detail: `request body larger than ${maxBodyBytes} bytes` } };
}

/** The 404 answer (FastAPI's). */
export const NOT_FOUND_ANSWER: ProtocolAnswer = { status: 404, body: { detail: 'Not Found' } };

/** Adds the turnwise extension fields (available actions, success, info) when the client asked for them. */
function withExtension(asked: boolean, session: Session, body: Record<string, unknown>): Record<string, unknown> {
  if (!asked) return body;
  const result = session.lastResult;
  const actions = result ? result.observation.availableActions : session.lastActions;
  return {
    ...body,
    turnwise: {
      ...(actions ? { availableActions: actions } : {}),
      ...(result ? { success: result.success ?? false, info: result.info ?? {} } : {}),
    },
  };
}
