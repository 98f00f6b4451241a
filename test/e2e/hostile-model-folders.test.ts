/**
 * Model folders built to exhaust `turnwise serve` (a model folder is downloaded, untrusted input):
 * a chat template that loops 10^9 times, one that nests two 10^5 loops, a config.json that declares
 * 3,000,000 layers; and a FIFO named model.safetensors (which blocked the loader forever). Each
 * must be refused naming the file, with exit code 2, within bounded time and
 * memory: the command runs under GNU time (`/usr/bin/time -f %M`: the child's peak resident set),
 * and is killed if it outlives `LIMIT_MS` (before the fix: a V8 fatal error at 2.6 GB, a hang of
 * over 90 s, a heap out-of-memory after ~75 s).
 *
 * The bounds are loose ceilings, not speed targets: the healthy folder's own start is measured in
 * the same way and printed, for comparison (docs/faults.md records both).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CheckpointError } from '../../src/core/errors.js';
import { inspectHfModel } from '../../src/models/hf/hf-model.js';
import { writeTinyChatModel } from '../serve/tiny-chat-model.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-hostile-folders-'));
const procs: ChildProcess[] = [];
/** Ceiling on a refusal's wall time (the process is killed past it). */
const LIMIT_MS = 60_000;
/** Ceiling on a refusal's peak resident memory. */
const LIMIT_RSS_MIB = 700;

interface Bounded {
  readonly code: number | null;
  readonly output: string;
  readonly wallMs: number;
  readonly maxRssMiB: number;
}

/** Runs `turnwise serve <folder> --port 0` under GNU time; resolves when it exits or once it listens (then kills it). */
function serveBounded(folder: string): Promise<Bounded> {
  const started = performance.now();
  const proc = spawn('/usr/bin/time', ['-f', 'maxrss-kib %M', process.execPath, '--import', 'tsx', 'src/cli/main.ts', 'serve', folder, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  procs.push(proc);
  // To the whole group: GNU time ignores SIGINT and reports once the server it waits for stopped on it.
  const signal = (name: NodeJS.Signals) => {
    if (proc.exitCode === null && proc.signalCode === null && proc.pid !== undefined) process.kill(-proc.pid, name);
  };
  let output = '';
  let interrupted = false;
  const onData = (d: Buffer) => {
    output += d.toString('utf8');
    // A folder that loads ends here: the server listens (the healthy folder's case). Once only: after
    // the server exits, GNU time no longer ignores SIGINT, and a second one would cut its report short.
    if (!interrupted && /model '.*' at http/.test(output)) {
      interrupted = true;
      signal('SIGINT');
    }
  };
  proc.stdout?.on('data', onData);
  proc.stderr?.on('data', onData);
  const killer = setTimeout(() => signal('SIGKILL'), LIMIT_MS);
  return new Promise((resolve) => {
    // 'close', not 'exit': GNU time's report is the last thing on stderr, and 'exit' can come before it is read.
    proc.once('close', (code) => {
      clearTimeout(killer);
      const kib = Number(/maxrss-kib (\d+)/.exec(output)?.[1] ?? Number.NaN);
      resolve({ code, output, wallMs: performance.now() - started, maxRssMiB: kib / 1024 });
    });
  });
}

async function folderWith(name: string, edit: (folder: string) => void): Promise<string> {
  const folder = await writeTinyChatModel(join(dir, name), 3);
  edit(folder);
  return folder;
}

function withTemplate(template: string): (folder: string) => void {
  return (folder) => {
    const file = join(folder, 'tokenizer_config.json');
    writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), chat_template: template }));
  };
}

let healthy: Bounded;
beforeAll(async () => {
  healthy = await serveBounded(await folderWith('healthy', () => undefined));
  console.log(`healthy folder: listening after ${Math.round(healthy.wallMs)} ms, peak RSS ${Math.round(healthy.maxRssMiB)} MiB`);
}, 120_000);
afterEach(() => {
  for (const p of procs.splice(0)) if (p.exitCode === null && p.signalCode === null && p.pid !== undefined) process.kill(-p.pid, 'SIGKILL');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('turnwise serve on a hostile model folder', () => {
  it('serves the healthy folder (the measure the refusals are compared with)', () => {
    expect(healthy.output).toMatch(/model 'healthy' at http/);
    expect(healthy.maxRssMiB).toBeGreaterThan(0);
  });

  const cases: [string, (folder: string) => void, RegExp][] = [
    ['a chat template looping 10^9 times', withTemplate('{% for i in range(1000000000) %}x{% endfor %}'), /tokenizer_config\.json:chat_template.*range\(\) of 1,000,000,000 items/],
    ['a chat template nesting two loops of 10^5', withTemplate('{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}'), /tokenizer_config\.json:chat_template.*over its budget/],
    [
      'a config.json declaring 3,000,000 layers',
      (folder) => {
        const file = join(folder, 'config.json');
        writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), num_hidden_layers: 3_000_000 }));
      },
      /config\.json.*num_hidden_layers 3000000.*the weight files hold/,
    ],
  ];
  for (const [what, edit, message] of cases) {
    it(`refuses ${what} naming the file, exit 2, in bounded time and memory`, async () => {
      const result = await serveBounded(await folderWith(what.replace(/\W+/g, '-'), edit));
      console.log(`${what}: exit ${result.code} after ${Math.round(result.wallMs)} ms, peak RSS ${Math.round(result.maxRssMiB)} MiB`);
      expect(result.output).toMatch(message);
      expect(result.code, result.output).toBe(2);
      expect(result.wallMs).toBeLessThan(LIMIT_MS);
      expect(result.maxRssMiB).toBeLessThan(LIMIT_RSS_MIB);
    });
  }
});

describe('a FIFO named model.safetensors', () => {
  it('is refused at once as not a regular file, instead of blocking the read forever', async () => {
    const folder = await folderWith('fifo', (f) => {
      unlinkSync(join(f, 'model.safetensors'));
      execFileSync('mkfifo', [join(f, 'model.safetensors')]);
    });
    // A loader that opens the FIFO never returns: give up after 20 s rather than hang the suite.
    const outcome = await Promise.race([inspectHfModel(folder).then(() => 'loaded', (e: unknown) => e), new Promise((r) => setTimeout(() => r('blocked'), 20_000))]);
    expect(outcome).toBeInstanceOf(CheckpointError);
    expect((outcome as Error).message).toMatch(/fifo\/model\.safetensors': is a FIFO \(named pipe\), not a regular file/);
  });
});
