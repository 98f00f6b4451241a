/**
 * The dashboard's HTTP surface (Hono): a read-only JSON API over the run stores of a runs folder,
 * server-sent events for live curves, and the built front end (`src/ui/dist`).
 *
 * ```
 * GET /api/runs                              run list (config, status, backend, latest metrics)
 * GET /api/runs/:id                          one run
 * GET /api/runs/:id/metrics?names=a,b        series as [step, value] pairs (default: every metric)
 * GET /api/runs/:id/episodes?step=&split=&outcome=&limit=&offset=   (step: the curves' step)
 * GET /api/runs/:id/episode-steps?split=&from=&limit=   steps that have episodes, with outcome counts,
 *                                            a page at a time (`next`: the `from` of the next page)
 * GET /api/runs/:id/events?kind=             horizon stage changes, checkpoints, ...
 * GET /api/runs/:id/eval                     per-category evaluation tables
 * GET /api/runs/:id/stream?names=            SSE: `snapshot`, then `delta` events as the run grows
 * GET /api/episodes/:id/turns?run=&step=     an episode's turns (versions, staleness, tokens, loss mask)
 * GET /favicon.ico                           the dashboard's icon (favicon.svg of the front end)
 * ```
 *
 * Episodes are numbered by the curves' step (`./episode-steps.ts`): a training episode of the
 * rollout that made the metrics at step s is at step s, though the store keeps it at s - 1.
 *
 * Why Hono: a small, typed router on web-standard Request/Response with a maintained Node adapter
 * and SSE helper (already used by `turnwise serve`). Every store is opened read-only; errors are
 * JSON `{ error: { type, message } }` with 400 (bad input, path traversal) or 404 (unknown id), the
 * message naming the parameter; one that leaves a request body unread carries `Connection: close`.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { Context } from 'hono';
import { serveStatic } from '@hono/node-server/serve-static';
import { type Clock, systemClock } from '../../core/clock.js';
import { InvalidArgumentError, TurnwiseError } from '../../core/errors.js';
import type { Outcome } from '../../core/types.js';
import type { EpisodeFilter, EpisodeSplit } from '../../store/run-store.js';
import { type CategoryResolver, evalTables } from './eval-tables.js';
import { runLiveness } from '../../runtime/run-lock.js';
import { isEmptyDelta, RunCursor, sleepOn } from './metric-stream.js';
import { PathTraversalError, RunIndex, UnknownRunError } from './run-index.js';
import { curveStepOf, episodeJson, episodeStepPage, episodesAtCurveStep } from './episode-steps.js';
import { learnerVersionAt, seriesJson, summarizeRun, TokenizerCache, turnViews } from './run-views.js';

/** Options of {@link createUiApp}. */
export interface UiAppOptions {
  /** Folder holding run folders (`runs`). */
  readonly runsDir: string;
  /** Built front end to serve; omit for the API alone. */
  readonly assetsDir?: string;
  /** Clock of the live-update poll. Default wall time. */
  readonly clock?: Clock;
  /** Poll interval of `/stream`, ms. Default 1000. */
  readonly pollMs?: number;
  /** Task categories for the evaluation tables of training runs. */
  readonly resolveCategory?: CategoryResolver;
}

/** The app plus what it holds open. */
export interface UiApp {
  readonly app: Hono;
  readonly index: RunIndex;
  /** Ends live streams and closes every store. */
  close(): void;
}

const SPLITS: readonly EpisodeSplit[] = ['train', 'test', 'eval'];
const OUTCOMES: readonly Outcome[] = ['success', 'failure', 'truncated', 'length', 'error'];

/** An unknown episode id (HTTP 404). */
class UnknownEpisodeError extends InvalidArgumentError {}

/** Most metric names one request may ask for (each is a query on the store). */
const MAX_METRIC_NAMES = 256;

/** Most steps one `/episode-steps` page lists (each step is a few index rows per split). */
const MAX_STEPS_PER_PAGE = 1000;

function intParam(c: Context, name: string, min: number, max: number): number | undefined {
  const raw = c.req.query(name);
  if (raw === undefined || raw === '') return undefined;
  // Decimal digits only: Number() would also take '0x10', '1e3' and ' 7 '.
  const n = /^-?\d{1,16}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isInteger(n) || n < min || n > max) throw InvalidArgumentError.format(name, `expected an integer in [${min}, ${max}], got ${JSON.stringify(raw)}`);
  return n;
}

function enumParam<T extends string>(c: Context, name: string, allowed: readonly T[]): T | undefined {
  const raw = c.req.query(name);
  if (raw === undefined || raw === '') return undefined;
  if (!allowed.includes(raw as T)) throw InvalidArgumentError.format(name, `expected one of ${allowed.join(', ')}, got ${JSON.stringify(raw)}`);
  return raw as T;
}

function namesParam(c: Context): string[] | undefined {
  const raw = c.req.query('names');
  if (raw === undefined || raw === '') return undefined;
  const names = [...new Set(raw.split(',').map((s) => s.trim()).filter((s) => s.length > 0))];
  if (names.length > MAX_METRIC_NAMES) throw InvalidArgumentError.format('names', `expected at most ${MAX_METRIC_NAMES} metric names, got ${names.length}`);
  return names;
}

/** Whether the request came with a body (a declared length or chunked). */
function hasBody(request: Request): boolean {
  const length = request.headers.get('content-length');
  return (length !== null && length !== '0') || request.headers.has('transfer-encoding');
}

/**
 * The run of a live stream, or null while its folder holds no run: `train --force` deletes the
 * old run.db a moment before the new run is written, and the stream waits for it.
 */
function openWhileReplaced(index: RunIndex, id: string): ReturnType<RunIndex['open']> | null {
  try {
    return index.open(id);
  } catch (error) {
    if (error instanceof UnknownRunError) return null;
    throw error;
  }
}

/**
 * Builds the dashboard app over a runs folder.
 * @example
 * const ui = createUiApp({ runsDir: 'runs', assetsDir: 'src/ui/dist' });
 * const res = await ui.app.request('/api/runs'); // { runs: [...] }
 */
export function createUiApp(options: UiAppOptions): UiApp {
  const index = new RunIndex(options.runsDir);
  index.scan();
  const clock = options.clock ?? systemClock;
  const pollMs = options.pollMs ?? 1000;
  const tokenizers = new TokenizerCache();
  const shutdown = new AbortController();
  const app = new Hono();

  app.onError((err, c) => {
    const status = err instanceof PathTraversalError ? 400 : err instanceof UnknownRunError || err instanceof UnknownEpisodeError ? 404 : err instanceof TurnwiseError ? 400 : 500;
    const type = err instanceof PathTraversalError ? 'path_traversal' : status === 404 ? 'not_found' : status === 400 ? 'invalid_request' : 'internal_error';
    return c.json({ error: { type, message: err.message } }, status);
  });

  // No route reads a body: an error answered to a request that sent one closes the connection,
  // so the unread rest is not parsed as the next request on a kept-alive socket.
  app.use('*', async (c, next) => {
    await next();
    if (c.res.status >= 400 && hasBody(c.req.raw)) c.res.headers.set('Connection', 'close');
  });

  // Refuse traversal anywhere in the path before routing (encoded `..` would survive URL parsing).
  app.use('*', async (c, next) => {
    let decoded: string;
    try {
      decoded = decodeURIComponent(c.req.path);
    } catch {
      throw new PathTraversalError('path', `${JSON.stringify(c.req.path.slice(0, 80))} is not a valid URL path`);
    }
    if (/(^|[/\\])\.\.($|[/\\])/.test(decoded) || decoded.includes('\0')) {
      throw new PathTraversalError('path', `${JSON.stringify(decoded.slice(0, 80))} escapes its folder; '..' segments are refused`);
    }
    await next();
  });

  app.get('/api/runs', (c) => {
    const { runs, skipped } = index.scan();
    const summaries = runs.map((r) => {
      const { run, store } = index.open(r.id);
      return summarizeRun(run, store);
    });
    return c.json({ root: index.root, runs: summaries, skipped });
  });

  app.get('/api/runs/:id', (c) => {
    const { run, store } = index.open(c.req.param('id'));
    return c.json(summarizeRun(run, store));
  });

  app.get('/api/runs/:id/metrics', (c) => {
    const { run, store } = index.open(c.req.param('id'));
    const all = store.metricNames();
    const names = namesParam(c) ?? all;
    const series: Record<string, [number, number | null][]> = {};
    for (const name of names) series[name] = seriesJson(store.metricsSeries(name));
    return c.json({ id: run.id, names: all, series });
  });

  app.get('/api/runs/:id/episodes', (c) => {
    const { run, store } = index.open(c.req.param('id'));
    const filter: EpisodeFilter = {
      step: intParam(c, 'step', 0, Number.MAX_SAFE_INTEGER),
      split: enumParam(c, 'split', SPLITS),
      outcome: enumParam(c, 'outcome', OUTCOMES),
      limit: intParam(c, 'limit', 1, 5000) ?? 200,
      offset: intParam(c, 'offset', 0, Number.MAX_SAFE_INTEGER) ?? 0,
    };
    return c.json({ id: run.id, episodes: episodesAtCurveStep(store, filter) });
  });

  app.get('/api/runs/:id/episode-steps', (c) => {
    const { run, store } = index.open(c.req.param('id'));
    const split = enumParam(c, 'split', SPLITS);
    const from = intParam(c, 'from', 0, Number.MAX_SAFE_INTEGER) ?? 0;
    const limit = intParam(c, 'limit', 1, MAX_STEPS_PER_PAGE) ?? MAX_STEPS_PER_PAGE;
    return c.json({ id: run.id, split: split ?? null, ...episodeStepPage(store, { ...(split ? { split } : {}), from, limit }) });
  });

  app.get('/api/runs/:id/events', (c) => {
    const { run, store } = index.open(c.req.param('id'));
    const kind = c.req.query('kind');
    return c.json({ id: run.id, events: store.events(kind === '' ? undefined : kind) });
  });

  app.get('/api/runs/:id/eval', (c) => {
    const { run, store } = index.open(c.req.param('id'));
    return c.json({ id: run.id, ...evalTables(store, options.resolveCategory) });
  });

  app.get('/api/runs/:id/stream', (c) => {
    const id = c.req.param('id');
    let runId = index.open(id).run.record.id; // 404 / 400 before the stream starts
    const names = namesParam(c);
    let cursor = new RunCursor(names);
    return streamSSE(c, async (stream) => {
      const ended = new AbortController();
      const end = () => ended.abort();
      stream.onAbort(end);
      shutdown.signal.addEventListener('abort', end, { once: true });
      let kind = 'snapshot';
      let seq = 0;
      try {
        while (!ended.signal.aborted) {
          const opened = openWhileReplaced(index, id);
          if (opened === null) {
            await sleepOn(clock, pollMs, ended.signal);
            continue;
          }
          const { store, run } = opened;
          if (run.record.id !== runId) {
            // The folder now holds another run (`train --force`): start over with a snapshot of it.
            runId = run.record.id;
            cursor = new RunCursor(names);
            kind = 'snapshot';
          }
          const delta = cursor.poll(store, (stored) => runLiveness(run.dir, stored).status);
          if (kind === 'snapshot' || !isEmptyDelta(delta)) {
            await stream.writeSSE({ event: kind, data: JSON.stringify(delta), id: String(seq++) });
            kind = 'delta';
          }
          await sleepOn(clock, pollMs, ended.signal);
        }
      } finally {
        shutdown.signal.removeEventListener('abort', end);
      }
    });
  });

  app.get('/api/episodes/:id/turns', async (c) => {
    const episodeId = c.req.param('id');
    const runId = c.req.query('run');
    if (runId === undefined || runId === '') throw InvalidArgumentError.format('run', 'give the run id the episode belongs to (?run=<id>)');
    const { run, store } = index.open(runId);
    const step = intParam(c, 'step', 0, Number.MAX_SAFE_INTEGER);
    const stored = store.episode(episodeId);
    const episode = stored !== null && (step === undefined || curveStepOf(stored) === step) ? stored : undefined;
    if (episode === undefined) throw new UnknownEpisodeError('episodeId', `no episode '${episodeId}' in run '${run.id}'${step !== undefined ? ` at step ${step}` : ''}`);
    const tokenizer = await tokenizers.get(run.dir, run.record.id);
    return c.json({ run: run.id, episode: episodeJson(episode), turns: turnViews(store.episodeTurns(episodeId), learnerVersionAt(store, episode), tokenizer) });
  });

  app.all('/api/*', (c) => c.json({ error: { type: 'not_found', message: `no API route ${c.req.method} ${c.req.path}` } }, 404));

  if (options.assetsDir !== undefined) {
    const assetsDir = options.assetsDir;
    // Browsers ask for /favicon.ico whatever the page links; answer with the dashboard's SVG icon.
    app.get('/favicon.ico', async (c) => {
      const icon = await readFile(join(assetsDir, 'favicon.svg')).catch(() => null);
      if (icon === null) return c.body(null, 204);
      return c.body(new Uint8Array(icon), 200, { 'content-type': 'image/svg+xml', 'cache-control': 'max-age=86400' });
    });
    app.use('/*', serveStatic({ root: assetsDir }));
  }
  app.all('*', (c) => c.json({ error: { type: 'not_found', message: `no such page: ${c.req.path}` } }, 404));

  return {
    app,
    index,
    close: () => {
      shutdown.abort();
      index.close();
    },
  };
}
