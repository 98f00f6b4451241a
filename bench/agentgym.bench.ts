/**
 * `npm run bench -- agentgym [seconds]`: BabyAI steps/s in-process vs through HTTP — `turnwise env
 * serve babyai` in another process, one keep-alive client (undici Pool) shared by every session —
 * sequentially (one session) and with 16 and 64 concurrent sessions: every request through the
 * Hono app (the server before the lean path), on the lean `node:http` path, and on it with
 * pipelining (16 requests in flight per socket). Goal (issue 7): >= 5,000 steps/s over HTTP.
 *
 * Besides steps/s it prints the CPU time each process spent per step (client: this process;
 * server: the child's /proc/<pid>/stat, Linux only) and the rate those allow when client and server
 * each have a core of their own — on a shared, loaded 2-core machine the wall-clock rate says more
 * about the neighbours than about the code. The load average is printed with the results.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import '../src/envs/index.js';
import type { Environment } from '../src/envs/environment.js';
import { getEnvironmentSpec } from '../src/envs/registry.js';

async function drive(env: Environment, seconds: number, seed: number): Promise<number> {
  const end = performance.now() + seconds * 1000;
  let steps = 0;
  let task = 1 + 40 * seed;
  while (performance.now() < end) {
    let obs = await env.reset(task);
    task += 40;
    for (let t = 0; t < 20 && performance.now() < end; t++) {
      const actions = obs.availableActions ?? ['turn left'];
      const result = await env.step(actions[(t * 7 + steps) % Math.min(3, actions.length)] as string);
      steps++;
      obs = result.observation;
      if (result.done) break;
    }
  }
  return steps;
}

/** CPU time (user + system) of process `pid` in microseconds, or NaN off Linux. */
function cpuMicros(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) * (1e6 / 100); // clock ticks (USER_HZ = 100)
  } catch {
    return Number.NaN;
  }
}

interface Measured {
  readonly rate: number;
  readonly clientUs: number;
  readonly serverUs: number;
}

async function measure(envs: readonly Environment[], seconds: number, serverPid: number | undefined, seed: number): Promise<Measured> {
  const client0 = process.cpuUsage();
  const server0 = cpuMicros(serverPid);
  const start = performance.now();
  const counts = await Promise.all(envs.map((e, i) => drive(e, seconds, seed + i)));
  const wall = (performance.now() - start) / 1000;
  const client = process.cpuUsage(client0);
  const steps = counts.reduce((a, b) => a + b, 0);
  return { rate: steps / wall, clientUs: (client.user + client.system) / steps, serverUs: (cpuMicros(serverPid) - server0) / steps };
}

function line(label: string, m: Measured, inProcess: number): string {
  const cpu = Number.isNaN(m.serverUs)
    ? `client ${m.clientUs.toFixed(0)} us/step`
    : `CPU per step: client ${m.clientUs.toFixed(0)} us, server ${m.serverUs.toFixed(0)} us -> ${(1e6 / Math.max(m.clientUs, m.serverUs)).toFixed(0)} steps/s with a core each`;
  return `  ${label.padEnd(38)} ${m.rate.toFixed(0).padStart(6)} steps/s (${(m.rate / inProcess).toFixed(3)}x in-process); ${cpu}`;
}

// The child process: `turnwise env serve babyai` twice, on the lean node:http path (as the CLI
// serves) and with every request through Hono (as before issue 7's fast path), for comparison.
const SERVE_BOTH = `
import '/ROOT/src/envs/index.js';
import { getEnvironmentSpec } from '/ROOT/src/envs/registry.js';
import { startAgentGymServer } from '/ROOT/src/envs/agentgym/server/serve.js';
const spec = getEnvironmentSpec('babyai');
const fast = await startAgentGymServer({ spec, port: 0 });
const hono = await startAgentGymServer({ spec, port: 0, fastPath: false });
console.log('fast ' + fast.url + ' hono ' + hono.url);
process.on('SIGTERM', () => Promise.all([fast.stop(), hono.stop()]).then(() => process.exit(0)));
`;

export async function main(args: string[]): Promise<void> {
  const seconds = Number(args[0] ?? 5);
  const loadBefore = loadavg();
  const local = getEnvironmentSpec('babyai').create();
  const inProcess = (await measure([local], seconds, undefined, 0)).rate;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '--eval', SERVE_BOTH.replaceAll('/ROOT', process.cwd())], { stdio: ['ignore', 'pipe', 'inherit'] });
  const urls = await new Promise<{ fast: string; hono: string }>((resolve) => {
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /fast (http:\/\/\S+) hono (http:\/\/\S+)/.exec(out);
      if (m) resolve({ fast: m[1] as string, hono: m[2] as string });
    });
  });
  const agentgym = getEnvironmentSpec('agentgym');
  const results: string[] = [];
  const variants = [
    { name: 'Hono path', sessions: [1, 16, 64], settings: { type: 'babyai', url: urls.hono, connections: 64, pipelining: 1 } },
    { name: 'node:http path', sessions: [1, 16, 64], settings: { type: 'babyai', url: urls.fast, connections: 64, pipelining: 1 } },
    { name: 'node:http, pipelining 16', sessions: [16, 64], settings: { type: 'babyai', url: urls.fast, connections: 4, pipelining: 16 } },
  ];
  for (const variant of variants) {
    // One shared keep-alive connection for every session of the variant (`keep` holds it open throughout).
    const keep = agentgym.create({ settings: variant.settings });
    await drive(keep, 1, 9); // warm-up: sockets, JIT
    for (const n of variant.sessions) {
      const envs = Array.from({ length: n }, () => agentgym.create({ settings: variant.settings }));
      results.push(line(`${variant.name}, ${n} session${n > 1 ? 's' : ''}`, await measure(envs, seconds, child.pid, 2), inProcess));
      await Promise.all(envs.map((e) => e.close()));
    }
    await keep.close();
  }
  child.kill('SIGTERM');
  const loadAfter = loadavg();
  console.log(`BabyAI steps/s over ${seconds} s each (server: turnwise env serve babyai in another process; one keep-alive client)`);
  console.log(`  ${'in-process'.padEnd(38)} ${inProcess.toFixed(0).padStart(6)} steps/s`);
  for (const l of results) console.log(l);
  console.log(`load average (1 min) before ${loadBefore[0]?.toFixed(2)}, after ${loadAfter[0]?.toFixed(2)}`);
}
