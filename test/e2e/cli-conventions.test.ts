/**
 * The command-line conventions, through the real `turnwise` process: exit codes (0, 1, 2, 130,
 * 143), one-line errors without stack traces (unless --debug), --version, --set recorded in the
 * run's config.json, and --json output that parses.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-cli-conventions-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const CLI = ['--import', 'tsx', 'src/cli/main.ts'];
const STACK_LINE = /^\s+at /m;

function turnwise(...args: string[]) {
  return spawnSync(process.execPath, [...CLI, ...args], { encoding: 'utf8', env: { ...process.env, CI: 'true' } });
}

/** Starts `turnwise …`, resolves once stdout has printed a line matching `ready`. */
function startUntil(args: string[], ready: RegExp): Promise<{ child: ChildProcess; exit: Promise<number | null> }> {
  const child = spawn(process.execPath, [...CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (ready.test(out)) resolve({ child, exit });
    });
    void exit.then((code) => reject(new Error(`exited ${code} before ready: ${out}${err}`)));
  });
}

describe('turnwise command-line conventions', () => {
  it('prints the package version', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const run = turnwise(flag);
      expect(run.status).toBe(0);
      expect(run.stdout.trim()).toBe(pkg.version);
    }
  });

  it('documents the exit codes in --help', () => {
    const run = turnwise('--help');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/Exit codes: 0 success; 1 runtime failure.*2 usage or config error/s);
    expect(run.stdout).toMatch(/130 stopped by SIGINT.*143 stopped by SIGTERM/s);
  });

  it('exits 2 with one line and no stack trace for usage errors', () => {
    const cases: [string[], RegExp][] = [
      [['train'], /^UsageError: give a config file/m],
      [['eval', join(dir, 'nowhere'), '--split', 'validation'], /^UsageError: --split must be train or test, got 'validation'/m],
      [['eval'], /^UsageError: name what to evaluate/m],
      [['train', '--steps', 'many'], /option '--steps <n>' argument 'many' is invalid/],
      [['train', '--no-such-flag'], /unknown option '--no-such-flag'/],
      [['no-such-command'], /unknown command 'no-such-command'/],
      [['train', join(dir, 'missing.yaml')], /^InvalidConfigError: invalid config at '<root>': cannot read config file/m],
      [['eval', join(dir, 'nowhere')], /^CheckpointError: checkpoint '.*nowhere'/m],
    ];
    for (const [args, message] of cases) {
      const run = turnwise(...args);
      expect(run.status, args.join(' ')).toBe(2);
      expect(run.stderr, args.join(' ')).toMatch(message);
      expect(run.stderr, args.join(' ')).not.toMatch(STACK_LINE);
    }
  });

  it('shows the stack trace of a usage error with --debug', () => {
    const run = turnwise('train', '--debug');
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/^UsageError: give a config file/);
    expect(run.stderr).toMatch(STACK_LINE);
  });

  it('rejects a bad --set naming the path and the flag, before creating a run folder', () => {
    const configPath = join(dir, 'base.yaml');
    writeFileSync(configPath, `run: { dir: ${JSON.stringify(dir)}, name: never }\n`);
    const run = turnwise('train', configPath, '--set', 'algorithm.lr=fast');
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/^InvalidConfigError: invalid config at 'algorithm\.lr': expected number, got string "fast" \(from --set algorithm\.lr=fast\)$/m);
    expect(existsSync(join(dir, 'never'))).toBe(false);
  });

  it('trains with --set overrides recorded in config.json, --json on stdout and progress on stderr', () => {
    const configPath = join(dir, 'tiny.yaml');
    writeFileSync(configPath, [`run: { dir: ${JSON.stringify(dir)}, name: tiny }`, 'algorithm: { tasksPerStep: 2, groupSize: 2 }', 'train: { steps: 5, evalEvery: 0 }'].join('\n'));
    const run = turnwise('train', configPath, '--set', 'train.steps=1', '--set', 'algorithm.lr=2e-4', '--set', 'run.name=tiny-set', '--json');
    expect(run.status, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout) as { runDir: string; status: string; completedSteps: number; warnings: string[]; next: string[] };
    expect(result).toMatchObject({ runDir: join(dir, 'tiny-set'), status: 'finished', completedSteps: 1, warnings: [] });
    expect(result.next).toContain(`turnwise eval ${join(dir, 'tiny-set')} --split test`);
    expect(run.stderr).toMatch(/step 1\/1 success [\d.]+ \| turns/);
    const saved = JSON.parse(readFileSync(join(dir, 'tiny-set', 'config.json'), 'utf8')) as { train: { steps: number }; algorithm: { lr: number } };
    expect(saved.train.steps).toBe(1);
    expect(saved.algorithm.lr).toBe(2e-4);

    // Resuming a finished run without more steps is a no-op, and says so.
    const again = turnwise('train', '--resume', join(dir, 'tiny-set'), '--steps', '1', '--json');
    expect(again.status, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/^warning: --steps 1 does nothing: the run has completed 1 steps already/m);
    expect((JSON.parse(again.stdout) as { warnings: string[] }).warnings).toHaveLength(1);
  });

  it('prints --json for the environment list', () => {
    const run = turnwise('envs', '--json');
    expect(run.status).toBe(0);
    const rows = JSON.parse(run.stdout) as { name: string; trainTasks: number | null }[];
    expect(rows.find((r) => r.name === 'babyai')?.trainTasks).toBe(800_000);
  });

  it('exits 1 with a hint for --debug when the work itself fails', async () => {
    const busy: Server = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as { port: number }).port;
    try {
      const run = turnwise('env', 'serve', 'babyai', '--port', String(port));
      expect(run.status).toBe(1);
      expect(run.stderr).toMatch(/EADDRINUSE/);
      expect(run.stderr).toMatch(/\(run again with --debug for the stack trace\)/);
      expect(run.stderr).not.toMatch(STACK_LINE);
    } finally {
      busy.close();
    }
  });

  it('exits 130 on SIGINT and 143 on SIGTERM after a clean stop', async () => {
    for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
      const { child, exit } = await startUntil(['env', 'serve', 'babyai', '--port', '0'], /serving babyai on http/);
      child.kill(signal);
      expect(await exit, signal).toBe(code);
    }
  });
});
