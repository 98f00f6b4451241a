/**
 * Runs agent SQL with a hard time limit. better-sqlite3 is synchronous and this build has no
 * progress handler or interrupt (`SQLITE_OMIT_PROGRESS_CALLBACK`), and a worker thread cannot be
 * stopped while SQLite runs in native code: `worker.terminate()` never resolves and even
 * `process.exit()` then hangs (measured). So queries run in a child process (`node -e`, source in
 * `sandbox-child.ts`) that is killed with SIGKILL when a query passes its limit, and respawned for
 * the next one. One query at a time per child; queued requests wait their turn and their time
 * limit starts when they reach the child.
 *
 * The child only keeps the event loop alive while a query is in flight, and is killed when the last
 * holder releases it or the process exits.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import type { ResultSet } from './equivalence.js';
import { SANDBOX_CHILD_SOURCE } from './sandbox-child.js';

/** What one query produced. */
export type SandboxOutcome =
  | { readonly ok: true; readonly result: ResultSet; readonly truncated: boolean }
  | { readonly ok: false; readonly kind: 'error' | 'timeout' | 'crashed'; readonly message: string };

/** Limits of one query. */
export interface QueryLimits {
  /** Wall-clock limit once the query reaches the child, in milliseconds. */
  readonly timeoutMs: number;
  /** Rows kept; more sets `truncated`. */
  readonly maxRows: number;
  /** Characters of text kept across the rows, a single cell included; more sets `truncated`. Default {@link DEFAULT_MAX_CHARS}. */
  readonly maxChars?: number;
}

interface Request {
  readonly id: number;
  readonly db: string;
  readonly sql: string;
  readonly limits: QueryLimits;
  readonly resolve: (outcome: SandboxOutcome) => void;
}

interface ChildReply {
  readonly id?: number;
  readonly ready?: boolean;
  readonly ok?: boolean;
  readonly columns?: string[];
  readonly rows?: (number | string | null)[][];
  readonly truncated?: boolean;
  readonly error?: string;
}

/** Text a result may carry by default: about 2 MB in this process, however large the cells SQLite builds. */
export const DEFAULT_MAX_CHARS = 1_000_000;

const require = createRequire(import.meta.url);
const live = new Set<ChildProcess>();
let exitHook = false;

/**
 * A child process that runs read-only SQL on a fixed set of database files.
 * @example
 * const box = new SqlSandbox([path]);
 * const out = await box.run(path, 'SELECT 1', { timeoutMs: 2000, maxRows: 100 });
 * box.close();
 */
export class SqlSandbox {
  private child: ChildProcess | null = null;
  private ready: Promise<ChildProcess> | null = null;
  private readonly queue: Request[] = [];
  private current: { request: Request; timer: NodeJS.Timeout | null } | null = null;
  private nextId = 1;
  private closed = false;
  /** Children started so far (the first, plus one per kill or crash). */
  spawns = 0;

  constructor(private readonly allowedPaths: readonly string[]) {}

  /** Runs `sql` on database file `db` (one of the allowed paths). Never rejects. */
  run(db: string, sql: string, limits: QueryLimits): Promise<SandboxOutcome> {
    if (this.closed) return Promise.resolve({ ok: false, kind: 'error', message: 'the SQL sandbox is closed' });
    return new Promise((resolve) => {
      this.queue.push({ id: this.nextId++, db, sql, limits, resolve });
      this.pump();
    });
  }

  /** Kills the child; pending queries resolve with an error. Idempotent. */
  close(): void {
    this.closed = true;
    const pending = [...this.queue];
    this.queue.length = 0;
    if (this.current) {
      if (this.current.timer !== null) clearTimeout(this.current.timer);
      pending.unshift(this.current.request);
      this.current = null;
    }
    this.kill();
    for (const r of pending) r.resolve({ ok: false, kind: 'error', message: 'the SQL sandbox was closed' });
  }

  private pump(): void {
    if (this.current !== null || this.queue.length === 0 || this.closed) return;
    const request = this.queue.shift() as Request;
    // Occupy the slot before the child is ready, so that requests stay in order.
    this.current = { request, timer: null };
    this.start().then(
      (child) => {
        if (this.current?.request !== request) return;
        const timer = setTimeout(() => this.timeout(request), request.limits.timeoutMs);
        this.current = { request, timer };
        child.channel?.ref();
        child.send({ id: request.id, db: request.db, sql: request.sql, maxRows: request.limits.maxRows, maxChars: request.limits.maxChars ?? DEFAULT_MAX_CHARS });
      },
      (err: unknown) => this.finish(request, { ok: false, kind: 'crashed', message: `could not start the SQL sandbox: ${(err as Error).message}` }),
    );
  }

  private finish(request: Request, outcome: SandboxOutcome): void {
    if (this.current?.request !== request) return;
    if (this.current.timer !== null) clearTimeout(this.current.timer);
    this.current = null;
    this.child?.channel?.unref();
    request.resolve(outcome);
    this.pump();
  }

  private timeout(request: Request): void {
    this.kill();
    this.finish(request, { ok: false, kind: 'timeout', message: `the query ran longer than ${request.limits.timeoutMs} ms and was stopped` });
  }

  private start(): Promise<ChildProcess> {
    if (this.ready !== null) return this.ready;
    this.spawns++;
    const env = { ...process.env };
    delete env.NODE_OPTIONS; // no loaders or inspectors from the parent
    const child = spawn(process.execPath, ['--max-old-space-size=256', '-e', SANDBOX_CHILD_SOURCE, require.resolve('better-sqlite3'), JSON.stringify(this.allowedPaths)], {
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
      serialization: 'advanced',
      env,
    });
    this.child = child;
    live.add(child);
    if (!exitHook) {
      exitHook = true;
      process.once('exit', () => {
        for (const c of live) c.kill('SIGKILL');
      });
    }
    child.unref();
    const ready = new Promise<ChildProcess>((resolve, reject) => {
      child.on('message', (m: ChildReply) => {
        if (m.ready === true) {
          child.channel?.unref();
          resolve(child);
          return;
        }
        const request = this.current?.request;
        if (request === undefined || m.id !== request.id) return;
        if (m.ok === true) this.finish(request, { ok: true, result: { columns: m.columns ?? [], rows: m.rows ?? [] }, truncated: m.truncated === true });
        else this.finish(request, { ok: false, kind: 'error', message: m.error ?? 'unknown error' });
      });
      child.on('error', (err) => reject(err));
      child.on('exit', (code, signal) => {
        live.delete(child);
        reject(new Error(`sandbox exited early (code ${code}, signal ${signal})`));
        if (this.child === child) {
          this.child = null;
          this.ready = null;
          const request = this.current?.request;
          if (request !== undefined) this.finish(request, { ok: false, kind: 'crashed', message: `the SQL sandbox stopped (code ${code}, signal ${signal})` });
        }
      });
    });
    this.ready = ready;
    return ready;
  }

  private kill(): void {
    const child = this.child;
    this.child = null;
    this.ready = null;
    if (child !== null) {
      live.delete(child);
      child.kill('SIGKILL');
    }
  }
}

const shared = new Map<string, { box: SqlSandbox; holders: number }>();

/**
 * A sandbox shared by every holder in this process with the same database files; `release` kills
 * its child when the last holder lets go.
 * @example const { sandbox, release } = acquireSandbox(paths); ...; release();
 */
export function acquireSandbox(paths: readonly string[]): { sandbox: SqlSandbox; release: () => void } {
  const key = JSON.stringify(paths);
  let entry = shared.get(key);
  if (entry === undefined) {
    entry = { box: new SqlSandbox(paths), holders: 0 };
    shared.set(key, entry);
  }
  entry.holders++;
  const held = entry;
  let released = false;
  return {
    sandbox: held.box,
    release: () => {
      if (released) return;
      released = true;
      held.holders--;
      if (held.holders === 0) {
        held.box.close();
        shared.delete(key);
      }
    },
  };
}
