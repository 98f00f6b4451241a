/**
 * `turnwise serve` under a crowd, from a second process: 40 clients send heavy completions at once
 * to a server that admits 4 at a time. The server answers the rest 429 at once, with `Retry-After`
 * and OpenAI's rate-limit body; clients that wait what it says and retry are all served in the end;
 * `/metrics` counts exactly the admitted and refused requests, and the queue drains to 0.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeTinyChatModel } from '../serve/tiny-chat-model.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-admission-'));
const procs: ChildProcess[] = [];
afterAll(() => {
  for (const p of procs) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const CLIENTS = 40;
const MAX_QUEUE = 4;

function run(args: readonly string[]): { proc: ChildProcess; output: () => string; exit: Promise<number | null> } {
  const proc = spawn(process.execPath, ['--import', 'tsx', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  procs.push(proc);
  let output = '';
  proc.stdout?.on('data', (d: Buffer) => (output += d.toString('utf8')));
  proc.stderr?.on('data', (d: Buffer) => (output += d.toString('utf8')));
  return { proc, output: () => output, exit: new Promise((resolve) => proc.once('close', (code) => resolve(code))) };
}

async function listening(server: ReturnType<typeof run>): Promise<string> {
  for (;;) {
    const url = /at (http:\/\/[^\s]+\/v1)/.exec(server.output())?.[1];
    if (url !== undefined) return url;
    if (server.proc.exitCode !== null) throw new Error(`serve exited: ${server.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

interface LoadResult {
  answers: { status: number; retryAfter: string | null; error: unknown; ms: number }[];
  finals: number[];
}

describe('turnwise serve under a crowd from another process', () => {
  it('admits maxQueue at a time, answers the rest 429 with Retry-After, serves every client that retries, and counts it all on /metrics', async () => {
    const folder = await writeTinyChatModel(join(dir, 'tiny'), 3);
    const server = run(['src/cli/main.ts', 'serve', folder, '--port', '0', '--max-queue', String(MAX_QUEUE)]);
    const baseURL = await listening(server);
    const load = run(['test/helpers/serve-load.ts', baseURL, String(CLIENTS), '20']);
    expect(await load.exit, load.output()).toBe(0);
    const result = JSON.parse(load.output().trim().split('\n').at(-1) as string) as LoadResult;
    const refused = result.answers.filter((a) => a.status === 429);
    const served = result.answers.filter((a) => a.status === 200);
    const ms = (xs: number[]) => xs.sort((a, b) => a - b);
    const servedMs = ms(served.map((a) => a.ms));
    const refusedMs = ms(refused.map((a) => a.ms));
    console.log(
      `${CLIENTS} clients, max queue ${MAX_QUEUE}: ${served.length} answers 200 (p50 ${Math.round(servedMs[Math.floor(servedMs.length / 2)] ?? 0)} ms, max ${Math.round(servedMs.at(-1) ?? 0)} ms), ` +
        `${refused.length} answers 429 (max ${Math.round(refusedMs.at(-1) ?? 0)} ms)`,
    );
    expect(result.answers.every((a) => a.status === 200 || a.status === 429)).toBe(true);
    expect(refused.length).toBeGreaterThan(0);
    for (const a of refused) {
      expect(Number(a.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(a.error).toEqual({ message: expect.stringMatching(/at capacity/), type: 'requests', param: null, code: 'rate_limit_exceeded' });
    }
    // Every client was served in the end, after waiting what the server said.
    expect(result.finals).toEqual(Array(CLIENTS).fill(200));
    const metrics = await (await fetch(`${baseURL.slice(0, -'/v1'.length)}/metrics`)).text();
    expect(metrics).toMatch(/^turnwise_serve_queue_depth 0$/m);
    expect(metrics).toMatch(new RegExp(`^turnwise_serve_queue_limit ${MAX_QUEUE}$`, 'm'));
    expect(metrics).toMatch(new RegExp(`^turnwise_serve_requests_admitted_total ${served.length}$`, 'm'));
    expect(metrics).toMatch(new RegExp(`^turnwise_serve_requests_rejected_total ${refused.length}$`, 'm'));
    server.proc.kill('SIGINT');
    expect(await server.exit).toBe(130);
  });
});
