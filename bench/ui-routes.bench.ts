/**
 * `npm run bench -- ui-routes [EPISODES]` (issue 30, item 7): the dashboard's two episode routes
 * on a run of EPISODES training episodes (default 200,000; 100 a step, one turn each), over a real
 * HTTP server in this process. Reports each route's latency (median of 20), the wall time of eight
 * at once and how long a small request (`/api/runs/x`) waits behind them, and the heap they grow.
 * As a reference it times what the routes did before: one read of every episode of the run
 * (`store.episodes({ limit: 1_000_000 })`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Trajectory } from '../src/core/types.js';
import { RunStore } from '../src/store/run-store.js';
import { startUiServer } from '../src/ui/server/server.js';

const PER_STEP = 100;

function episode(step: number, i: number): Trajectory {
  return {
    trajectoryId: `s${step}/t${i}/g0`,
    taskId: `task-${i}`,
    groupId: `s${step}/t${i}`,
    step,
    turns: [
      {
        index: 0,
        observationText: 'You are in a room. Your goal: go to the red ball.',
        promptTokens: Int32Array.from({ length: 64 }, (_, k) => k),
        actionText: 'go forward',
        actionTokens: Int32Array.from([5, 6]),
        actionLogprobs: Float32Array.from([-0.5, -0.25]),
        actionLossMask: Uint8Array.from([1, 1]),
        constraint: null,
        policyVersion: step,
        reward: 0,
        invalidAction: false,
      },
    ],
    reward: i % 3 === 0 ? 1 : 0,
    outcome: i % 3 === 0 ? 'success' : 'failure',
    horizon: 8,
    finalObservationText: 'You are in a room. The red ball is in front of you.',
  };
}

const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

export async function main(args: string[]): Promise<void> {
  const total = Number(args[0] ?? 200_000);
  const steps = Math.ceil(total / PER_STEP);
  const root = mkdtempSync(join(tmpdir(), 'turnwise-bench-ui-'));
  console.log(`ui-routes bench: ${total} episodes over ${steps} steps; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  try {
    const t0 = process.hrtime.bigint();
    const writer = RunStore.open(join(root, 'x'));
    writer.createRun({ id: 'x', name: 'x', createdAt: 1, config: {}, backend: 'cpu', seed: 1 });
    for (let step = 0; step < steps; step++) {
      writer.recordTrajectories('x', 'train', Array.from({ length: Math.min(PER_STEP, total - step * PER_STEP) }, (_, i) => episode(step, i)));
    }
    writer.close();
    console.log(`  wrote the run in ${(ms(t0) / 1000).toFixed(1)} s`);

    const reader = RunStore.open(join(root, 'x'), { readonly: true });
    global.gc?.();
    const heap0 = process.memoryUsage().heapUsed;
    const t1 = process.hrtime.bigint();
    const all = reader.episodes({ limit: 1_000_000 });
    console.log(`  reference, every episode read (the routes before): ${ms(t1).toFixed(0)} ms, heap +${mib(process.memoryUsage().heapUsed - heap0)} for ${all.length} episodes`);
    reader.close();

    const ui = await startUiServer({ runsDir: root, port: 0 });
    const get = async (path: string) => {
      const res = await fetch(new URL(path, ui.url));
      if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
      return (await res.text()).length;
    };
    const routes = {
      'episode-steps (default page)': 'api/runs/x/episode-steps?split=train',
      'episode-steps (last page)': `api/runs/x/episode-steps?split=train&from=${Math.max(0, steps - 999)}`,
      turns: `api/episodes/${encodeURIComponent(`s${steps - 1}/t0/g0`)}/turns?run=x`,
    };
    await get('api/runs/x');
    for (const [name, path] of Object.entries(routes)) {
      const bytes = await get(path);
      global.gc?.();
      const heap = process.memoryUsage().heapUsed;
      let peak = heap;
      const times: number[] = [];
      for (let i = 0; i < 20; i++) {
        const t = process.hrtime.bigint();
        await get(path);
        times.push(ms(t));
        peak = Math.max(peak, process.memoryUsage().heapUsed);
      }
      const t = process.hrtime.bigint();
      const small = (async () => {
        await new Promise((r) => setImmediate(r));
        const s = process.hrtime.bigint();
        await get('api/runs/x');
        return ms(s);
      })();
      const [waited] = await Promise.all([small, ...Array.from({ length: 8 }, () => get(path))]);
      console.log(
        `  ${name}: ${bytes} bytes; median ${median(times).toFixed(1)} ms; eight at once ${ms(t).toFixed(0)} ms, /api/runs/x meanwhile ${(waited as number).toFixed(0)} ms; heap peak +${mib(peak - heap)}`,
      );
    }
    await ui.close();
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  console.log(`load average at the end: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
}
