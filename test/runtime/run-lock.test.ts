/**
 * The single-writer lock of a run folder, with real processes: a second writer (another process or
 * the same one) is refused with the holder's pid; a holder killed with SIGKILL leaves a lock that
 * the next writer takes over, reporting whom it replaced; two processes taking over at once cannot
 * both win; readers see a run marked `running` whose writer is gone as `stale`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { acquireRunLock, readRunWriter, RunFolderLockedError, runLiveness } from '../../src/runtime/run-lock.js';

const root = mkdtempSync(join(tmpdir(), 'turnwise-run-lock-'));
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A process that takes the lock of `dir`, prints `held <pid>` (or `refused <message>`), and waits. */
function holder(dir: string): { proc: ChildProcess; line: Promise<string> } {
  const script = `
    import { acquireRunLock } from './src/runtime/run-lock.ts';
    try { await acquireRunLock(${JSON.stringify(dir)}, 'test holder'); console.log('held ' + process.pid); }
    catch (e) { console.log('refused ' + e.message); process.exit(3); }
    setInterval(() => {}, 1000);`;
  const proc = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(proc);
  const line = new Promise<string>((resolve) => {
    let out = '';
    proc.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve(out.trim());
    });
  });
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
