/**
 * The single-writer lock of a run folder, with real processes: a second writer (another process or
 * the same one) is refused with the holder's pid; a holder killed with SIGKILL leaves a lock that
 * the next writer takes over, reporting whom it replaced; two processes taking over at once cannot
 * both win, and the loser names the winner (never the dead writer whose writer.json the winner has
 * not replaced yet); readers see a run marked `running` whose writer is gone as `stale`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { acquireRunLock, readRunWriter, RunFolderLockedError, runLiveness } from '../../src/runtime/run-lock.js';
import { watchProcess } from '../helpers/child-process.js';

const root = mkdtempSync(join(tmpdir(), 'turnwise-run-lock-'));
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/**
 * A process that takes the lock of `dir`, prints `held <pid>` (or `refused <message>`), and waits.
 * `line` rejects at once, with its stderr, if the process exits without printing either.
 */
function holder(dir: string): { proc: ChildProcess; line: Promise<string> } {
  const script = `
    import { acquireRunLock } from './src/runtime/run-lock.ts';
    try { await acquireRunLock(${JSON.stringify(dir)}, 'test holder'); console.log('held ' + process.pid); }
    catch (e) { console.log('refused ' + e.message); process.exit(3); }
    setInterval(() => {}, 1000);`;
  const proc = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(proc);
  const watched = watchProcess(proc, 'lock holder');
  const LINE = /^(?:held|refused) .*$/m;
  const line = watched.waitFor(LINE).then(() => LINE.exec(watched.output())?.[0] as string);
  return { proc, line };
}

const killed = (proc: ChildProcess) =>
  new Promise<void>((resolve) => {
    proc.once('exit', () => resolve());
    proc.kill('SIGKILL');
  });

describe('one writer per run folder', () => {
  it('refuses a second writer in the same process, naming the holder, and frees the folder on release', async () => {
    const dir = join(root, 'same-process');
    const lock = await acquireRunLock(dir, 'train');
    const refused = await acquireRunLock(dir, 'train --resume').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RunFolderLockedError);
    expect((refused as Error).message).toMatch(new RegExp(`run folder ${dir} is being written by pid ${process.pid} on .+ \\(train, since `));
    lock.release();
    expect(readRunWriter(dir)).toBeNull();
    const again = await acquireRunLock(dir, 'train --resume');
    expect(again.tookOverFrom).toBeNull();
    again.release();
  });

  it("refuses a second writer while another process holds the folder, and takes over once that process is killed -9", async () => {
    const dir = join(root, 'two-processes');
    const first = holder(dir);
    const pid = first.proc.pid as number;
    expect(await first.line).toBe(`held ${pid}`);
    const refused = await acquireRunLock(dir, 'train').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RunFolderLockedError);
    expect((refused as RunFolderLockedError).holder?.pid).toBe(pid);
    expect((refused as Error).message).toContain(`pid ${pid}`);
    expect(runLiveness(dir, 'running').status).toBe('running');

    await killed(first.proc);
    expect(runLiveness(dir, 'running')).toMatchObject({ status: 'stale', writer: { pid } });
    expect(runLiveness(dir, 'interrupted').status).toBe('interrupted');
    const next = await acquireRunLock(dir, 'train --resume');
    expect(next.tookOverFrom).toMatchObject({ pid, command: 'test holder' });
    expect(readRunWriter(dir)?.pid).toBe(process.pid);
    next.release();
  });

  it('lets exactly one of two processes take over a dead holder at once', async () => {
    const dir = join(root, 'race');
    const dead = holder(dir);
    await dead.line;
    await killed(dead.proc);
    const racers = [holder(dir), holder(dir)];
    const lines = await Promise.all(racers.map((r) => r.line));
    expect(lines.filter((l) => l.startsWith('held '))).toHaveLength(1);
    const winner = lines.find((l) => l.startsWith('held '))?.slice(5);
    expect(lines.find((l) => l.startsWith('refused '))).toContain(`is being written by pid ${winner}`);
  });

  it("never names the dead writer whose writer.json a new holder has not replaced yet: it waits for the holder's own, else names no one", async () => {
    const dir = join(root, 'not-yet-written');
    mkdirSync(dir, { recursive: true });
    const gone = spawn(process.execPath, ['-e', '']);
    const deadPid = gone.pid as number;
    await new Promise((resolve) => gone.once('exit', resolve));
    const deadWriter = { pid: deadPid, host: hostname(), since: '2026-01-01T00:00:00.000Z', startTicks: null, command: 'train' };
    writeFileSync(join(dir, 'writer.json'), JSON.stringify(deadWriter));
    // A holder that has the lock but has not written writer.json yet (the moment after a take-over).
    const holderDb = new Database(join(dir, 'writer.lock'));
    holderDb.pragma('locking_mode = EXCLUSIVE');
    holderDb.exec('BEGIN EXCLUSIVE; CREATE TABLE IF NOT EXISTS writer (pid INTEGER); COMMIT');
    try {
      const anonymous = await acquireRunLock(dir, 'train', { holderWaitMs: 150 }).catch((e: unknown) => e);
      expect(anonymous).toBeInstanceOf(RunFolderLockedError);
      expect((anonymous as RunFolderLockedError).holder).toBeNull();
      expect((anonymous as Error).message).toContain('has not written writer.json yet');
      expect((anonymous as Error).message).not.toContain(`pid ${deadPid}`);

      const refused = acquireRunLock(dir, 'train', { holderWaitMs: 5000 }).catch((e: unknown) => e);
      setTimeout(() => writeFileSync(join(dir, 'writer.json'), JSON.stringify({ ...deadWriter, pid: process.pid, command: 'holder' })), 60);
      const error = await refused;
      expect((error as RunFolderLockedError).holder).toMatchObject({ pid: process.pid, command: 'holder' });
      expect((error as Error).message).toContain(`is being written by pid ${process.pid}`);
    } finally {
      holderDb.close();
    }
  });

  it('shows a run as stale when writer.json names a reused pid (same number, another start time) or no writer at all', async () => {
    const dir = join(root, 'reused-pid');
    const lock = await acquireRunLock(dir, 'train');
    const writer = JSON.parse(readFileSync(join(dir, 'writer.json'), 'utf8')) as { startTicks: number | null };
    expect(runLiveness(dir, 'running').status).toBe('running');
    if (writer.startTicks !== null) {
      writeFileSync(join(dir, 'writer.json'), JSON.stringify({ ...writer, startTicks: writer.startTicks + 1 }));
      expect(runLiveness(dir, 'running').status).toBe('stale');
    }
    lock.release();
    expect(runLiveness(dir, 'running')).toEqual({ status: 'stale', writer: null });
  });
});
