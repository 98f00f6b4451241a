/**
 * `turnwise env serve` as a Hono app: a native environment behind AgentGym's HTTP protocol.
 *
 * Why Hono: a small, well-kept router built on web-standard Request/Response, with the two
 * pieces this server needs as maintained middleware — `bodyLimit` (refuse huge bodies before
 * reading them) and `cors` (for AgentGym's browser visualization UI) — and `@hono/node-server` to
 * run it on Node's http server without an adapter of our own. Every protocol route delegates to
 * {@link AgentGymProtocol} (`./protocol.ts`), which the lean `node:http` path
 * (`./fast-listener.ts`) calls too; this app is the reference both are tested against. An error
 * answered without reading the request's body (413, a 404 for a POST) carries `Connection: close`:
 * the unread rest would otherwise be parsed as the next request on a kept-alive connection.
 */
import { Hono } from 'hono';
import type { Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { cors } from 'hono/cors';
import type { Clock } from '../../../core/clock.js';
import type { EnvironmentSpec } from '../../environment.js';
import { EXTENSION_HEADER } from '../connection.js';
import type { ProfileName, ServeProfile } from './profiles.js';
import { AgentGymProtocol, errorAnswer, NOT_FOUND_ANSWER, PROTOCOL_ROUTES, type ProtocolAnswer, tooLargeAnswer } from './protocol.js';
import type { SessionTable } from './sessions.js';

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
  /** The protocol core the app's routes delegate to (shared with the `node:http` fast path). */
  readonly protocol: AgentGymProtocol;
  readonly sessions: SessionTable;
  readonly profile: ServeProfile;
  /** Stops idle expiry and closes every session. */
  close(): Promise<void>;
}

const answer = (c: Context, a: ProtocolAnswer) => c.json(a.body as never, a.status as 200);

/** Whether the request came with a body (a declared length or chunked). */
function hasBody(request: Request): boolean {
  const length = request.headers.get('content-length');
  return (length !== null && length !== '0') || request.headers.has('transfer-encoding');
}

async function readBody(c: Context, read: WeakSet<Request>): Promise<string> {
  const text = await c.req.text();
  read.add(c.req.raw);
  return text;
}

/**
 * Builds the app for one native environment.
 * @example
 * const { app } = createAgentGymApp({ spec: babyaiSpec, maxSessions: 1024, idleMs: 600_000, maxBodyBytes: 1 << 20, cors: false, clock: systemClock });
 */
export function createAgentGymApp(options: AgentGymAppOptions): AgentGymApp {
  const protocol = new AgentGymProtocol({
    spec: options.spec,
    ...(options.settings ? { settings: options.settings } : {}),
    ...(options.profile ? { profile: options.profile } : {}),
    maxSessions: options.maxSessions,
    idleMs: options.idleMs,
    clock: options.clock,
  });
  const app = new Hono();
  // Requests whose body a route read; an error answered without reading it closes the connection.
  const bodyRead = new WeakSet<Request>();
  if (options.cors) app.use('*', cors({ origin: (origin) => origin || '*', credentials: true }));
  app.use('*', async (c, next) => {
    await next();
    if (c.res.status >= 400 && !bodyRead.has(c.req.raw) && hasBody(c.req.raw)) c.res.headers.set('Connection', 'close');
  });
  app.use('*', bodyLimit({ maxSize: options.maxBodyBytes, onError: (c) => answer(c, tooLargeAnswer(options.maxBodyBytes)) }));

  app.get('/', (c) => c.json(protocol.greeting()));
  for (const [path, { method, route }] of Object.entries(PROTOCOL_ROUTES)) {
    app.on(method, path, async (c) =>
      answer(
        c,
        await protocol.handle(route, {
          // A GET reads no body (and `/create` of a profile without create fields ignores it).
          body: method === 'POST' ? await readBody(c, bodyRead) : '',
          contentType: c.req.header('content-type'),
          query: method === 'GET' ? new URL(c.req.url).searchParams : null,
          extension: c.req.header(EXTENSION_HEADER) === '1',
        }),
      ),
    );
  }

  app.notFound((c) => answer(c, NOT_FOUND_ANSWER));
  // AgentGym's servers catch their exceptions and answer 200 {"error": ...}; so do we.
  app.onError((error, c) => answer(c, errorAnswer(error)));

  return { app, protocol, sessions: protocol.sessions, profile: protocol.profile, close: () => protocol.closeAll() };
}
