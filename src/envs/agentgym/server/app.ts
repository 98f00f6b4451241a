/**
 * `turnwise env serve` as a Hono app: a native environment behind AgentGym's HTTP protocol.
 *
 * Why Hono: a small, well-kept router built on web-standard Request/Response, with the two
 * pieces this server needs as maintained middleware — `bodyLimit` (refuse huge bodies before
 * reading them) and `cors` (for AgentGym's browser visualization UI) — and `@hono/node-server` to
 * run it on Node's http server without an adapter of our own.
 *
 * Errors follow AgentGym's servers: a body or query that does not validate gets FastAPI's 422
 * `{"detail": [...]}`; an application failure (unknown id, step before reset or after the end, an
 * environment exception) gets HTTP 200 `{"error": "..."}`; neither touches other sessions. A full
 * table gets 503 `{"error"}` (retryable; AgentGym's WebShop client retries 503 itself).
 */
import { Hono } from 'hono';
import type { Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { cors } from 'hono/cors';
import type { Clock } from '../../../core/clock.js';
import type { StepResult } from '../../../core/types.js';
import type { EnvironmentSpec } from '../../environment.js';
import { EXTENSION_HEADER } from '../connection.js';
import { type ProfileName, profileFor, type ServeProfile, serveProfiles } from './profiles.js';
import { type Session, SessionTable } from './sessions.js';
import { type FieldSpec, validateBody, validateQuery } from './validate.js';

/** Options of {@link createAgentGymApp}. */
export interface AgentGymAppOptions {
  readonly spec: EnvironmentSpec;
  /** Settings passed to the environment factory. */
  readonly settings?: Readonly<Record<string, unknown>>;
  /** Answer shapes; default: the profile AgentGym's client for `spec.name` expects. */
  readonly profile?: ProfileName;
  readonly maxSessions: number;
  /** Idle expiry in milliseconds (0 = never). */
  readonly idleMs: number;
  /** Largest request body accepted, in bytes. */
  readonly maxBodyBytes: number;
  /** Permissive CORS (AgentGym's `VISUAL=true`). */
  readonly cors: boolean;
  readonly clock: Clock;
}

/** The app and its session table. */
export interface AgentGymApp {
  readonly app: Hono;
  readonly sessions: SessionTable;
  readonly profile: ServeProfile;
  /** Stops idle expiry and closes every session. */
  close(): Promise<void>;
}

class AppError extends Error {}

const STEP_FIELDS: readonly FieldSpec[] = [
  { name: 'id', type: 'int', required: true },
  { name: 'action', type: 'str', required: true },
];
const ID_FIELDS: readonly FieldSpec[] = [{ name: 'id', type: 'int', required: true }];

/**
 * Builds the app for one native environment.
 * @example
 * const { app } = createAgentGymApp({ spec: babyaiSpec, maxSessions: 1024, idleMs: 600_000, maxBodyBytes: 1 << 20, cors: false, clock: systemClock });
 */
export function createAgentGymApp(options: AgentGymAppOptions): AgentGymApp {
  const profile = options.profile ? serveProfiles[options.profile] : profileFor(options.spec.name);
  const sessions = new SessionTable({
    spec: options.spec,
    settings: options.settings ?? {},
    maxSessions: options.maxSessions,
    idleMs: options.idleMs,
    clock: options.clock,
  });
  const app = new Hono();
  if (options.cors) app.use('*', cors({ origin: (origin) => origin || '*', credentials: true }));
  app.use(
    '*',
    bodyLimit({
      maxSize: options.maxBodyBytes,
      onError: (c) => c.json({ detail: `request body larger than ${options.maxBodyBytes} bytes` }, 413),
    }),
  );

  const readBody = async (c: Context, fields: readonly FieldSpec[]) => validateBody(await c.req.text(), c.req.header('content-type'), fields);
  const invalid = (c: Context, detail: unknown) => c.json({ detail }, 422);
  const live = (id: number): Session => {
    const session = sessions.get(id);
    if (!session) throw new AppError(sessions.describeMissing(id));
    return session;
  };
  const withExtension = (c: Context, session: Session, body: Record<string, unknown>): Record<string, unknown> => {
    if (c.req.header(EXTENSION_HEADER) !== '1') return body;
    const result = session.lastResult;
    const actions = result ? result.observation.availableActions : session.lastActions;
    return {
      ...body,
      turnwise: {
        ...(actions ? { availableActions: actions } : {}),
        ...(result ? { success: result.success ?? false, info: result.info ?? {} } : {}),
      },
    };
  };
  const resetSession = async (session: Session, index: number): Promise<void> => {
    await sessions.run(session, async () => {
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
  };

  app.get('/', (c) => c.json(`This is environment ${options.spec.name}, served by turnwise (AgentGym ${profile.name} protocol).`));

  app.post('/create', async (c) => {
    if (profile.createFields) {
      const checked = await readBody(c, profile.createFields);
      if (!checked.ok) return invalid(c, checked.detail);
    }
    const session = sessions.create();
    if (!session) return c.json({ error: `too many live instances (cap ${options.maxSessions}); close some or wait for idle ones to expire` }, 503);
    if (profile.resetOnCreate) {
      try {
        await resetSession(session, session.id);
      } catch (error) {
        await sessions.close(session.id); // nobody learns this id: do not keep it
        throw error;
      }
    }
    return c.json(profile.created(session));
  });

  app.post('/reset', async (c) => {
    const checked = await readBody(c, profile.resetFields);
    if (!checked.ok) return invalid(c, checked.detail);
    const session = live(checked.value.id as number);
    const index = (checked.value.data_idx as number | null) ?? 0;
    if (index < 0) throw new AppError(`task index must be non-negative, got ${index}`);
    await resetSession(session, index);
    return c.json(withExtension(c, session, profile.reset(session)));
  });

  app.post('/step', async (c) => {
    const checked = await readBody(c, STEP_FIELDS);
    if (!checked.ok) return invalid(c, checked.detail);
    const session = live(checked.value.id as number);
    await sessions.run(session, async () => {
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
    return c.json(withExtension(c, session, profile.step(session)));
  });

  app.get('/observation', (c) => {
    const checked = validateQuery(new URL(c.req.url).searchParams, ID_FIELDS);
    if (!checked.ok) return invalid(c, checked.detail);
    return c.json(profile.observation(live(checked.value.id as number)) as never);
  });

  app.post('/close', async (c) => {
    const checked = await readBody(c, ID_FIELDS);
    if (!checked.ok) return invalid(c, checked.detail);
    return c.json(profile.closed(await sessions.close(checked.value.id as number)) as never);
  });

  app.notFound((c) => c.json({ detail: 'Not Found' }, 404));
  // AgentGym's servers catch their exceptions and answer 200 {"error": ...}; so do we.
  app.onError((error, c) => c.json({ error: error instanceof Error ? error.message : String(error) }, 200));

  return { app, sessions, profile, close: () => sessions.closeAll() };
}
