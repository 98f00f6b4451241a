/**
 * The Tinker API over HTTP (Hono), in front of turnwise's local LoRA engine: the routes of
 * routes-service.ts, routes-training.ts and routes-checkpoints.ts, errors in the protocol's shapes
 * (FastAPI's `{detail}`; 404 `{detail: 'Not Found'}` for an unknown route), and a timer that
 * unloads the models of sessions whose heartbeats stopped.
 */
import { Hono } from 'hono';
import type { LocalLoraBase } from '../../engines/local/lora-base.js';
import { errorResponse } from './http.js';
import { addCheckpointRoutes } from './routes-checkpoints.js';
import { addServiceRoutes } from './routes-service.js';
import { addTrainingRoutes } from './routes-training.js';
import { DEFAULT_TINKER_SETTINGS, TinkerState, type TinkerServerSettings } from './state.js';

/** Options of {@link createTinkerApp}. */
export interface TinkerAppOptions extends Partial<TinkerServerSettings> {
  /** Seeds sampling requests that send no seed. Default 0. */
  readonly seed?: number;
  /** Clock (ms), for heartbeat tests. Default `Date.now`. */
  readonly now?: () => number;
  /** The first request id (default: the start time in microseconds, so ids never repeat across restarts). */
  readonly firstRequestId?: number;
}

/** The app and its state; `close()` stops the heartbeat timer and unloads every model. */
export interface TinkerApp {
  readonly app: Hono;
  readonly state: TinkerState;
  /** Unloads the models of stale sessions now (the timer calls this every minute or sooner). */
  checkSessions(): string[];
  close(): Promise<void>;
}

/**
 * Builds the app over `base`.
 * @example const { app, close } = createTinkerApp(await LocalLoraBase.load('models/qwen3-tiny'), { dialect: 'skyrl' });
 */
export function createTinkerApp(base: LocalLoraBase, options: TinkerAppOptions = {}): TinkerApp {
  const { seed, now, firstRequestId, ...settings } = options;
  const state = new TinkerState(base, { ...DEFAULT_TINKER_SETTINGS, ...settings }, now, firstRequestId);
  const app = new Hono();
  app.onError((err, c) => errorResponse(c, err));
  app.notFound((c) => c.json({ detail: 'Not Found' }, 404));
  addServiceRoutes(app, state, seed ?? 0);
  addTrainingRoutes(app, state);
  addCheckpointRoutes(app, state);
  const timer = setInterval(() => state.unloadStale(), Math.min(60_000, Math.max(1_000, state.settings.sessionTimeoutMs / 5)));
  timer.unref();
  return {
    app,
    state,
    checkSessions: () => state.unloadStale(),
    close: async () => {
      clearInterval(timer);
      await state.futures.drain();
      for (const m of state.models.values()) await state.unload(m);
    },
  };
}
