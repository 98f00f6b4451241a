/**
 * `npm run bench -- agentgym [seconds]`: BabyAI steps/s in-process vs through HTTP — `turnwise env
 * serve babyai` in another process, one keep-alive client (undici Pool) — sequentially (one
 * session) and with N concurrent sessions. Goal: >= 5,000 steps/s over HTTP.
 */
import { spawn } from 'node:child_process';
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

export async function main(args: string[]): Promise<void> {
  const seconds = Number(args[0] ?? 5);
  const local = getEnvironmentSpec('babyai').create();
  const inProcess = (await drive(local, seconds, 0)) / seconds;
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'env', 'serve', 'babyai', '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve) => {
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /serving babyai on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1] as string);
    });
  });
  const agentgym = getEnvironmentSpec('agentgym');
  const settings = { type: 'babyai', url, connections: 64 };
  const keep = agentgym.create({ settings }); // one shared keep-alive connection for all sessions below
  const one = agentgym.create({ settings });
  await drive(one, 1, 9); // warm-up
  const sequential = (await drive(one, seconds, 1)) / seconds;
  const results: string[] = [];
  for (const n of [16, 64]) {
    const envs = Array.from({ length: n }, () => agentgym.create({ settings }));
    const counts = await Promise.all(envs.map((e, i) => drive(e, seconds, 2 + i)));
    const rate = counts.reduce((a, b) => a + b, 0) / seconds;
    results.push(`  HTTP, ${n} concurrent sessions: ${rate.toFixed(0)} steps/s (${(rate / inProcess).toFixed(2)}x in-process)`);
    await Promise.all(envs.map((e) => e.close()));
  }
  await one.close();
  await keep.close();
  child.kill('SIGTERM');
  console.log(`BabyAI steps/s over ${seconds} s each (server: turnwise env serve babyai, another process)`);
  console.log(`  in-process:            ${inProcess.toFixed(0)} steps/s`);
  console.log(`  HTTP, 1 session:       ${sequential.toFixed(0)} steps/s (${(sequential / inProcess).toFixed(2)}x in-process)`);
  for (const line of results) console.log(line);
}
