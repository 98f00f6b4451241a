/**
 * `npm run bench -- bus [--requests N] [--steps N]`: the cost of going over NATS.
 *
 * 1. act round trip, p50/p99: an ActRequest-sized message (256 context ids + 4 action choices) to a
 *    responder that answers with an ActResult-sized reply, in-process (MemoryBus, and MemoryBus with
 *    the msgpackr codec) vs NATS (NatsBus, two connections, a real nats-server on loopback).
 *    Transport only: the responder does no inference.
 * 2. rollout episodes/s of a distributed BabyAI run (GoToRedBall, 64 episodes per step) with one vs
 *    two `turnwise worker --role sampler,episodes` processes; the mean over steps after the first.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig, resolveConfig } from '../src/core/config.js';
import type { Bus } from '../src/bus/bus.js';
import { MemoryBus } from '../src/bus/memory-bus.js';
import { NatsBus } from '../src/bus/nats-bus.js';
import { natsTrainRun } from '../src/runtime/nats/nats-train-run.js';
import { startNatsServer } from '../test/helpers/nats-server.js';

function flag(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : fallback;
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}

async function actRoundTrip(requester: Bus, responder: Bus, requests: number): Promise<{ p50: number; p99: number }> {
  responder.subscribe(
    'bench.act',
    (p) => {
      const n = (p as { contextTokens: Int32Array }).contextTokens.length;
      return { tokens: new Int32Array(6), logprobs: new Float32Array(6), lossMask: new Uint8Array(6).fill(1), constraint: null, policyVersion: n > 0 ? 1 : 0 };
    },
    { queue: 'samplers' },
  );
  if (responder instanceof NatsBus) await responder.connection.flush();
  const request = { contextTokens: Int32Array.from({ length: 256 }, (_, i) => i % 500), actionChoices: [0, 1, 2, 3].map((k) => Int32Array.from([k, k + 1, 2])), seed: 1 };
  const times: number[] = [];
  for (let i = 0; i < requests + 100; i++) {
    const t0 = process.hrtime.bigint();
    await requester.request('bench.act', request, { timeoutMs: 10_000 });
    if (i >= 100) times.push(Number(process.hrtime.bigint() - t0) / 1e6); // first 100: warm-up
  }
  times.sort((a, b) => a - b);
  return { p50: quantile(times, 0.5), p99: quantile(times, 0.99) };
}

async function episodesPerSec(url: string, dir: string, workers: number, steps: number): Promise<number> {
  const name = `bench-w${workers}`;
  const procs: ChildProcess[] = [];
  for (let w = 0; w < workers; w++) {
    procs.push(spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'worker', '--nats', url, '--run', name, '--role', 'sampler,episodes'], { stdio: 'ignore' }));
  }
  const config = resolveConfig(
    parseConfig({
      seed: 3,
      run: { dir, name },
      env: { name: 'babyai', settings: { levels: ['GoToRedBall'] } },
      algorithm: { tasksPerStep: 8, groupSize: 8 },
      horizon: { schedule: 'fixed', horizon: 5 },
      train: { steps, evalEvery: 0, checkpointEvery: 0 },
    }),
  );
  const rates: number[] = [];
  await natsTrainRun({
    config,
    runDir: join(dir, name),
    nats: { servers: url },
    onEvent: (e) => {
      if (e.type === 'step' && e.step > 1) rates.push(e.metrics['throughput/episodesPerSec'] ?? 0);
    },
  });
  for (const p of procs) p.kill('SIGKILL');
  return rates.reduce((a, b) => a + b, 0) / Math.max(1, rates.length);
}

export async function main(args: string[]): Promise<void> {
  const requests = flag(args, '--requests', 2000);
  const steps = flag(args, '--steps', 4);
  const server = await startNatsServer();
  const dir = mkdtempSync(join(tmpdir(), 'turnwise-bench-bus-'));
  try {
    const rows: string[] = [];
    const memory = new MemoryBus();
    const mem = await actRoundTrip(memory, memory, requests);
    await memory.close();
    const encoded = new MemoryBus({ encode: true });
    const enc = await actRoundTrip(encoded, encoded, requests);
    await encoded.close();
    const a = await NatsBus.connect({ servers: server.url });
    const b = await NatsBus.connect({ servers: server.url });
    const nats = await actRoundTrip(a, b, requests);
    await Promise.all([a.close(), b.close()]);
    rows.push(`| MemoryBus | ${mem.p50.toFixed(3)} | ${mem.p99.toFixed(3)} |`);
    rows.push(`| MemoryBus({ encode: true }) | ${enc.p50.toFixed(3)} | ${enc.p99.toFixed(3)} |`);
    rows.push(`| NatsBus (loopback nats-server) | ${nats.p50.toFixed(3)} | ${nats.p99.toFixed(3)} |`);
    console.log(`act round trip, ${requests} sequential requests (256 context ids, 4 choices)\n\n| bus | p50 ms | p99 ms |\n|---|---|---|\n${rows.join('\n')}\n`);
    const one = await episodesPerSec(server.url, dir, 1, steps);
    const two = await episodesPerSec(server.url, dir, 2, steps);
    console.log(`distributed BabyAI rollout (64 episodes per step, mean of steps 2..${steps})\n\n| workers | episodes/s |\n|---|---|\n| 1 | ${one.toFixed(1)} |\n| 2 | ${two.toFixed(1)} |\n\n2 workers / 1 worker: ${(two / one).toFixed(2)}x (nproc ${(await import('node:os')).cpus().length})`);
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
