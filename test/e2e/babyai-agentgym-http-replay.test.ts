/**
 * The same 800 AgentGym transcripts, replayed over HTTP through `turnwise env serve babyai
 * --settings '{"textProfile":"agentgym"}'` (the CLI in its own process, a free loopback port):
 * every reset and step body the server answers is the one AgentGym's server answered.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Body, firstDifference, loadTranscripts, type Transcript } from '../envs/babyai/agentgym-transcripts.js';

const transcripts = loadTranscripts();
let child: ChildProcess | null = null;
let url = '';

beforeAll(async () => {
  const server = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'env', 'serve', 'babyai', '--port', '0', '--settings', '{"textProfile":"agentgym"}'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child = server;
  url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const read = (chunk: Buffer) => {
      out += chunk.toString();
      const match = /serving babyai on (http:\/\/\S+)/.exec(out);
      if (match) resolve(match[1] as string);
    };
    server.stdout?.on('data', read);
    server.stderr?.on('data', read);
    server.once('exit', (code) => reject(new Error(`env serve exited with ${code}: ${out}`)));
  });
}, 60_000);

afterAll(async () => {
  if (child === null || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child?.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
});

async function post(path: string, body: unknown): Promise<Body> {
  const res = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  return (await res.json()) as Body;
}

/** One recorded episode over HTTP: create, reset, the recorded actions, close. */
async function replay(t: Transcript): Promise<{ reset: Body; steps: Body[] }> {
  const { id } = (await post('/create', {})) as { id: number };
  const reset = await post('/reset', { id, data_idx: t.data_idx });
  const steps: Body[] = [];
  for (const s of t.steps) steps.push(await post('/step', { id, action: s.action }));
  await post('/close', { id });
  return { reset, steps };
}

describe('turnwise env serve babyai (agentgym profile) against AgentGym server transcripts', () => {
  it('answers every reset and step body of the 780 playable episodes as AgentGym did, and plays GoToObjS6', async () => {
    const results: (string | null)[] = new Array(transcripts.length).fill(null);
    let next = 0;
    // Eight clients at a time, as a rollout would hold several sessions.
    const worker = async () => {
      for (let k = next++; k < transcripts.length; k = next++) {
        const t = transcripts[k] as Transcript;
        const got = await replay(t);
        if ('error' in t.reset) results[k] = typeof got.reset.observation === 'string' && got.reset.observation.startsWith('Your goal: go to the ') ? 'GoToObjS6 played' : `data_idx ${t.data_idx}: ${JSON.stringify(got.reset)}`;
        else results[k] = firstDifference(t, got.reset, got.steps);
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    const differences = results.filter((r) => r !== null && r !== 'GoToObjS6 played');
    expect(differences.slice(0, 3)).toEqual([]);
    expect(results.filter((r) => r === null)).toHaveLength(780);
    expect(results.filter((r) => r === 'GoToObjS6 played')).toHaveLength(20);
  }, 120_000);
});
