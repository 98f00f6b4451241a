/**
 * One writer per run folder. `turnwise train` (and `--resume`) holds `<runDir>/writer.lock` for the
 * whole run; a second writer is refused with the holder's pid, host and start time.
 *
 * Why a SQLite file and not a pid file: the lock is SQLite's exclusive lock on `writer.lock`
 * (`locking_mode = EXCLUSIVE`), a POSIX advisory lock that the kernel drops the moment its process
 * dies, however it dies. A dead holder's lock is therefore free without anyone deciding it is
 * stale, and two processes racing to take over a dead holder's folder cannot both win (a pid file
 * needs a check-then-delete that can remove a live lock). better-sqlite3 is already the run store,
 * and its lock also works between two writers in one process (tests run trainers in-process).
 *
 * Who holds it is in `<runDir>/writer.json` ({@link RunWriter}), written by the holder after it got
 * the lock and removed when it lets go. A `writer.json` left behind names a writer that died: the
 * next writer reports the take-over, and readers (`turnwise ui`, `eval`) show a run whose status
 * still says `running` as `stale` ({@link runLiveness}).
 */
import { readFileSync, rmSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { writeFileAtomic } from '../core/atomic-file.js';
import { TurnwiseError } from '../core/errors.js';

/** The process writing a run folder, as `writer.json` records it. */
export interface RunWriter {
  readonly pid: number;
  readonly host: string;
  /** ISO time the writer took the folder. */
  readonly since: string;
  /** Process start time in clock ticks since boot (Linux `/proc/<pid>/stat` field 22), to tell a reused pid apart; null elsewhere. */
  readonly startTicks: number | null;
  /** What it runs, e.g. `train` or `train --resume`. */
  readonly command: string;
}

/**
 * Another process holds the run folder.
 * @example catch (e) { if (e instanceof RunFolderLockedError) console.error(e.holder?.pid); }
 */
export class RunFolderLockedError extends TurnwiseError {
  constructor(
    readonly runDir: string,
    readonly holder: RunWriter | null,
  ) {
    const who = holder === null ? 'another process (it has not written writer.json yet)' : `pid ${holder.pid} on ${holder.host} (${holder.command}, since ${holder.since})`;
    super(`run folder ${runDir} is being written by ${who}; one writer per run folder — wait for it to end, or stop it first`);
  }
}

/** A held lock. */
export interface RunLock {
  readonly runDir: string;
  /** The writer whose `writer.json` was left behind by a process that died (its lock was free), or null. */
  readonly tookOverFrom: RunWriter | null;
  /** Lets go of the folder (idempotent). */
  release(): void;
}

const LOCK_FILE = 'writer.lock';
const WRITER_FILE = 'writer.json';
/** The files the lock leaves in a run folder (removed with a folder that never held a run). */
export const RUN_LOCK_FILES = [LOCK_FILE, WRITER_FILE] as const;

/** Start time of a process in clock ticks since boot, or null where /proc is not there. */
function startTicksOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 2 (comm) may hold spaces and parentheses: count fields after its closing ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[19]);
    return Number.isFinite(ticks) ? ticks : null;
  } catch {
    return null;
  }
}

/**
 * The writer recorded in a run folder, or null when none is (or the file is unreadable).
 * @example readRunWriter('runs/babyai-grpo')?.pid // 4242
 */
export function readRunWriter(runDir: string): RunWriter | null {
  try {
    const w = JSON.parse(readFileSync(join(runDir, WRITER_FILE), 'utf8')) as Partial<RunWriter>;
    if (typeof w.pid !== 'number' || typeof w.host !== 'string') return null;
    return { pid: w.pid, host: w.host, since: String(w.since ?? ''), startTicks: typeof w.startTicks === 'number' ? w.startTicks : null, command: String(w.command ?? '') };
  } catch {
    return null;
  }
}

/**
 * Whether a recorded writer still runs: true or false on this host, null (unknown) for a writer on
 * another host. A live pid with another start time is a reused pid: the writer is gone.
 * @example writerAlive(readRunWriter('runs/x')!) // false after a kill -9
 */
export function writerAlive(writer: RunWriter): boolean | null {
  if (writer.host !== hostname()) return null;
  try {
    process.kill(writer.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (writer.startTicks === null) return true;
  const ticks = startTicksOf(writer.pid);
  return ticks === null || ticks === writer.startTicks;
}

/** How long a refused writer waits for the lock's holder to write `writer.json`. */
const HOLDER_WAIT_MS = 5000;
const HOLDER_POLL_MS = 20;

/** How {@link acquireRunLock} behaves when the folder is taken. */
export interface AcquireRunLockOptions {
  /** How long a refused writer waits for the holder's `writer.json` before naming no one (default 5 s). */
  readonly holderWaitMs?: number;
}

/**
 * The writer that holds a busy lock. A holder that has just taken over a dead writer's folder
 * writes its `writer.json` a moment after it got the lock; until then the file still names the dead
 * writer, and naming that pid would send the user after a process that is gone. So wait (briefly)
 * for a file naming a live writer, and name no one if none comes.
 */
async function liveHolder(runDir: string, waitMs: number): Promise<RunWriter | null> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const writer = readRunWriter(runDir);
    if (writer !== null && writerAlive(writer) !== false) return writer;
    if (Date.now() >= deadline) return null;
    await sleep(HOLDER_POLL_MS);
  }
}

/**
 * Takes the run folder for writing (creating the folder), or throws {@link RunFolderLockedError}.
 * @example const lock = await acquireRunLock('runs/babyai-grpo', 'train'); try { … } finally { lock.release(); }
 */
export async function acquireRunLock(runDir: string, command: string, options: AcquireRunLockOptions = {}): Promise<RunLock> {
  await mkdir(runDir, { recursive: true });
  const db = new Database(join(runDir, LOCK_FILE), { timeout: 0 });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.pragma('journal_mode = MEMORY');
    // The first write takes the exclusive lock; in EXCLUSIVE locking mode it is kept until close.
    db.exec('BEGIN EXCLUSIVE; CREATE TABLE IF NOT EXISTS writer (pid INTEGER); DELETE FROM writer; COMMIT');
  } catch (error) {
    db.close();
    if ((error as { code?: string }).code === 'SQLITE_BUSY') throw new RunFolderLockedError(runDir, await liveHolder(runDir, options.holderWaitMs ?? HOLDER_WAIT_MS));
    throw error;
  }
  const previous = readRunWriter(runDir);
  const me: RunWriter = { pid: process.pid, host: hostname(), since: new Date().toISOString(), startTicks: startTicksOf(process.pid), command };
  try {
    await writeFileAtomic(join(runDir, WRITER_FILE), `${JSON.stringify(me, null, 2)}\n`);
  } catch (error) {
    db.close();
    throw error;
  }
  let held = true;
  return {
    runDir,
    tookOverFrom: previous,
    release() {
      if (!held) return;
      held = false;
      // writer.json goes first: once the lock is free, a new writer's writer.json must not be removed.
      rmSync(join(runDir, WRITER_FILE), { force: true });
      db.close();
    },
  };
}

/**
 * What a reader should show for a run whose store says `status`: `stale` for a run marked
 * `running` whose writer is gone (killed, or the machine went down); the status itself otherwise.
 * @example runLiveness('runs/x', 'running') // { status: 'stale', writer: { pid: 4242, … } }
 */
export function runLiveness(runDir: string, status: string): { readonly status: string; readonly writer: RunWriter | null } {
  const writer = readRunWriter(runDir);
  if (status !== 'running') return { status, writer };
  if (writer === null) return { status: 'stale', writer };
  return { status: writerAlive(writer) === false ? 'stale' : 'running', writer };
}
