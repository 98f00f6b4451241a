/**
 * The waits the process tests rely on (test/helpers/child-process.ts), with real child processes:
 * - a freeze point (a child that prints its line, then stops itself) is continued only once the
 *   kernel reports it stopped, so the SIGCONT is never lost, even when the stop comes late;
 * - waiting for output fails at once, with the exit code and the last stderr lines, when the child
 *   exits without printing it, and after its deadline when the child prints nothing.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { killProcess } from '../helpers/nats-run.js';
import { processState, waitStopped, watchProcess } from '../helpers/child-process.js';

const procs: ChildProcess[] = [];
afterEach(async () => {
  await Promise.all(procs.splice(0).map(killProcess));
});

function node(script: string, env: Record<string, string> = {}, label = 'child') {
  const proc = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  procs.push(proc);
  return watchProcess(proc, label);
}

describe('freeze points', () => {
  it('continues a child that stops itself after printing its line only once it is stopped, and it then runs to the end', async () => {
    // The child stops itself only when the test says so, some time after its line: a SIGCONT sent
    // on the line would land before the stop, be lost, and leave the child stopped for good.
    const child = node(`
      process.stderr.write('frozen here\\n');
      process.stdin.once('data', () => {
        process.kill(process.pid, 'SIGSTOP');
        console.log('resumed');
        process.exit(0);
      });`);
    await child.waitFor(/frozen here/);
    const pid = child.proc.pid as number;
    expect(processState(pid)).not.toBe('T');
    const stopped = waitStopped(pid);
    child.proc.stdin?.write('stop now\n');
    await stopped;
    expect(processState(pid)).toBe('T');
    child.proc.kill('SIGCONT');
    expect(await child.exit, child.output()).toBe(0);
    expect(child.output()).toContain('resumed');
  });

  it('continues children frozen at a real fault point (`:stop`) after SIGTERM, every time', async () => {
    // The product's own fault point, as the run-folder and NATS fault tests use it: SIGTERM while
    // frozen, then SIGCONT; each child must wake, see the SIGTERM, and exit through its handler.
    const script = `
      import { faultPoint } from './src/core/fault-point.ts';
      process.on('SIGTERM', () => { console.log('got SIGTERM'); process.exit(143); });
      faultPoint('trajectories-stored');
      setTimeout(() => {}, 60_000);`;
    const children = Array.from({ length: 8 }, (_, i) => node(script, { TURNWISE_FAULT: 'trajectories-stored:stop' }, `child ${i}`));
    await Promise.all(
      children.map(async (child) => {
        await child.waitFor(/fault point 'trajectories-stored' reached/);
        await waitStopped(child.proc.pid as number);
        child.proc.kill('SIGTERM');
        child.proc.kill('SIGCONT');
        expect(await child.exit, child.output()).toBe(143);
        expect(child.output()).toContain('got SIGTERM');
      }),
    );
  });

  it('refuses to wait for a stop of a process that already ended', async () => {
    const child = node('');
    await child.exit;
    await expect(waitStopped(child.proc.pid as number)).rejects.toThrow(`pid ${child.proc.pid} ended before it stopped`);
  });
});

describe('waiting for output', () => {
  it('fails at once when the child exits without printing it, with the exit code and the last stderr lines', async () => {
    const child = node(`console.error('loading'); console.error('Error: no such run folder'); process.exit(3);`, {}, 'turnwise train');
    const error = await child.waitFor(/run finished/).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(
      new RegExp(`^turnwise train \\(pid ${child.proc.pid}\\) exited with code 3 before printing /run finished/; its last stderr lines:\\n  loading\\n  Error: no such run folder$`),
    );
    // Asked again after the exit, it fails the same way instead of waiting.
    await expect(child.waitFor(/run finished/)).rejects.toThrow('exited with code 3 before printing /run finished/');
  });

  it('names the signal when one ended the child', async () => {
    const child = node('setTimeout(() => {}, 60_000);');
    const waiting = child.waitFor(/never/);
    child.proc.kill('SIGKILL');
    await expect(waiting).rejects.toThrow(/was ended by SIGKILL before printing \/never\//);
  });

  it('fails after its deadline when a running child prints nothing that matches', async () => {
    const child = node(`console.log('still starting'); setTimeout(() => {}, 60_000);`);
    await child.waitFor(/still starting/);
    await expect(child.waitFor(/ready/, { timeoutMs: 300 })).rejects.toThrow(/printed no \/ready\/ within 300 ms; its last output lines:\n {2}still starting/);
  });
});
